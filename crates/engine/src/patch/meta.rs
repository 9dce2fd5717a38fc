//! The preview metadata of a resolved patch: its one-line summary, and each file's
//! count of chunks and flags (added, deleted, rescued, moved from).

use super::Level;
use super::Resolution;
use crate::change::FileFlag;
use crate::change::FileMeta;
use crate::change::PreviewKind;
use crate::change::PreviewMeta;
use crate::text;

/// One line describing a resolution, e.g. `2 chunks, 1 added in 3 files, 1 rescued`.
pub fn summary(res: &Resolution) -> String {
    let placed = res
        .report
        .chunks()
        .filter(|c| c.level != Level::AlreadyApplied)
        .count();
    let count = |op: &str| res.report.ops.iter().filter(|o| o.op == op).count();
    let moved = res
        .report
        .ops
        .iter()
        .filter(|o| o.move_to.is_some())
        .count();
    let mut parts = Vec::new();
    if placed > 0 {
        parts.push(text::plural(placed, "chunk"));
    }
    for (n, what) in [
        (count("add"), "added"),
        (count("delete"), "deleted"),
        (moved, "moved"),
    ] {
        if n > 0 {
            parts.push(format!("{n} {what}"));
        }
    }
    if parts.is_empty() {
        parts.push("no change".into());
    }
    let mut s = format!(
        "{} in {}",
        parts.join(", "),
        text::plural(res.changes.changes.len(), "file")
    );
    if res.report.rescued() > 0 {
        s.push_str(&format!(", {} rescued", res.report.rescued()));
    }
    if res.report.already_applied() > 0 {
        s.push_str(&format!(
            ", {} already applied",
            res.report.already_applied()
        ));
    }
    s
}

/// Per-file counts and flags for the preview metadata.
fn file_meta(res: &Resolution) -> Vec<FileMeta> {
    res.changes
        .changes
        .iter()
        .map(|c| {
            let mut flags = Vec::new();
            let mut count = 0;
            for op in &res.report.ops {
                let target = op.move_to.as_deref().unwrap_or(&op.path);
                if target != c.path && op.path != c.path {
                    continue;
                }
                if op.move_to.is_some() && target == c.path {
                    flags.push(FileFlag::MovedFrom(op.path.clone()));
                }
                if target == c.path {
                    for ch in &op.chunks {
                        if ch.level != Level::AlreadyApplied {
                            count += 1;
                        }
                        if ch.level.is_rescue() && !flags.contains(&FileFlag::Rescued) {
                            flags.push(FileFlag::Rescued);
                        }
                    }
                }
            }
            match (&c.before, &c.after) {
                (None, Some(_)) => flags.insert(0, FileFlag::Added),
                (Some(_), None) => flags.insert(0, FileFlag::Deleted),
                _ => {}
            }
            FileMeta {
                path: c.path.clone(),
                count,
                flags,
            }
        })
        .collect()
}

/// The preview metadata of a resolved patch (shared with the MCP `apply_patch` tool).
pub fn preview_meta(res: &Resolution, digest: &str, reason: Option<String>) -> PreviewMeta {
    let files = file_meta(res);
    PreviewMeta {
        kind: PreviewKind::Patch,
        summary: summary(res),
        reason,
        patch_digest: Some(digest.to_string()),
        replacements: files.iter().map(|f| f.count).sum(),
        files,
        details: serde_json::to_value(&res.report).unwrap_or_default(),
        ..PreviewMeta::default()
    }
}
