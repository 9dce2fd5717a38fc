//! Staging a `*** Begin Patch` text: the preview metadata and the reports of a
//! resolution, shared by `git astedit patch` and the `apply_patch` tool.

use crate::change::FileFlag;
use crate::change::FileMeta;
use crate::change::PreviewKind;
use crate::change::PreviewMeta;
use crate::patch::Level;
use crate::patch::Resolution;
use crate::repo::Repo;
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

/// The resolution report with paths as the user sees them (relative to the cwd).
pub fn report_json(repo: &Repo, res: &Resolution) -> serde_json::Value {
    let mut v = serde_json::to_value(&res.report).unwrap_or_default();
    if let Some(ops) = v.get_mut("ops").and_then(|o| o.as_array_mut()) {
        for op in ops {
            for key in ["path", "move_to"] {
                if let Some(p) = op.get(key).and_then(|p| p.as_str()).map(str::to_string) {
                    op[key] = serde_json::Value::String(repo.display_path(&p));
                }
            }
        }
    }
    v
}

/// The human-readable report: one line per chunk, drifted lines and notes below it.
pub fn report_text(repo: &Repo, res: &Resolution) -> String {
    // Names as git prints them (core.quotePath): one line is one path.
    let quoting = repo.quoting();
    let mut text = String::new();
    for op in &res.report.ops {
        let path = quoting.quote_owned(repo.display_path(&op.path));
        match op.op {
            "add" => text.push_str(&format!("add {path}\n")),
            "delete" => text.push_str(&format!("delete {path}\n")),
            _ => match &op.move_to {
                Some(to) => text.push_str(&format!(
                    "update {path} -> {}\n",
                    quoting.quote_owned(repo.display_path(to))
                )),
                None => text.push_str(&format!("update {path}\n")),
            },
        }
        for c in &op.chunks {
            text.push_str(&format!(
                "  chunk {} (patch line {}): {} at line {}, -{} +{}\n",
                c.chunk,
                c.patch_line,
                c.level.name(),
                c.line,
                c.removed,
                c.added
            ));
            for d in &c.drifted {
                text.push_str(&format!(
                    "    drifted line {} overwritten: {}\n",
                    d.line, d.text
                ));
            }
            for n in &c.notes {
                text.push_str(&format!("    note: {n}\n"));
            }
        }
    }
    text
}
