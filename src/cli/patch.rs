//! `git astedit patch`: resolve a `*** Begin Patch` text against the work tree and
//! stage it as a preview (or apply it with `--apply`).

use std::io::Read;
use std::io::Write;

use git_astedit::change::FileMeta;
use git_astedit::change::PreviewMeta;
use git_astedit::error::Exit;
use git_astedit::error::InputError;
use git_astedit::error::IoError;
use git_astedit::error::UsageError;
use git_astedit::patch;
use git_astedit::patch::Level;
use git_astedit::patch::Resolution;
use git_astedit::render;
use git_astedit::repo::Repo;
use git_astedit::Error;
use sha2::Digest;

use super::common;
use super::common::StageArgs;
use super::show::render_diffs;
use super::show::DiffFile;
use super::Ctx;

/// Stage a `*** Begin Patch` patch as a preview; no work-tree file is touched.
///
/// Every chunk is placed at exactly one place: exact lines first, then ignoring
/// trailing whitespace and typographic punctuation, then bounded rescues of drifted
/// context, which are reported. An ambiguous or unplaceable chunk refuses the whole
/// patch (exit 5); paths outside the tree, under .git/ or through symlinks, and
/// overwrites by Add or Move are refused (exit 4). Paths are relative to the current
/// folder.
#[derive(Debug, clap::Args)]
pub struct PatchArgs {
    /// The patch file; `-` or nothing reads standard input
    #[arg(value_name = "FILE")]
    pub file: Option<String>,

    #[command(flatten)]
    pub stage: StageArgs,
}

fn read_patch(file: Option<&str>) -> Result<String, Error> {
    let mut bytes = Vec::new();
    match file {
        None | Some("-") => std::io::stdin()
            .read_to_end(&mut bytes)
            .map(|_| ())
            .map_err(|e| IoError {
                action: "read",
                path: "standard input".into(),
                source: e,
            })?,
        Some(path) => {
            bytes = std::fs::read(path).map_err(|e| InputError {
                action: "read",
                path: path.to_string(),
                source: e,
            })?
        }
    }
    String::from_utf8(bytes).map_err(|_| UsageError("the patch text is not UTF-8".into()).into())
}

/// One line describing a resolution, e.g. `2 chunks, 1 added in 3 files, 1 rescued`.
fn summary(res: &Resolution) -> String {
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
        parts.push(render::plural(placed, "chunk"));
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
        render::plural(res.changes.changes.len(), "file")
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
                    flags.push(format!("moved-from:{}", op.path));
                }
                if target == c.path {
                    for ch in &op.chunks {
                        if ch.level != Level::AlreadyApplied {
                            count += 1;
                        }
                        if ch.level.is_rescue() && !flags.iter().any(|f| f == "rescued") {
                            flags.push("rescued".into());
                        }
                    }
                }
            }
            match (&c.before, &c.after) {
                (None, Some(_)) => flags.insert(0, "added".into()),
                (Some(_), None) => flags.insert(0, "deleted".into()),
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
pub(super) fn preview_meta(
    repo: &Repo,
    res: &Resolution,
    digest: &str,
    reason: Option<String>,
) -> PreviewMeta {
    let files = file_meta(res);
    PreviewMeta {
        kind: "patch".into(),
        summary: summary(res),
        reason,
        patch_digest: Some(digest.to_string()),
        replacements: files.iter().map(|f| f.count).sum(),
        files,
        base_head: repo.head_commit().map(|id| id.to_string()),
        tool_version: git_astedit::VERSION.to_string(),
        details: serde_json::to_value(&res.report).unwrap_or_default(),
        ..PreviewMeta::default()
    }
}

/// The resolution report with paths as the user sees them (relative to the cwd).
fn report_json(repo: &Repo, res: &Resolution) -> serde_json::Value {
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
pub(super) fn report_text(repo: &Repo, res: &Resolution) -> String {
    let mut text = String::new();
    for op in &res.report.ops {
        let path = repo.display_path(&op.path);
        match op.op {
            "add" => text.push_str(&format!("add {path}\n")),
            "delete" => text.push_str(&format!("delete {path}\n")),
            _ => match &op.move_to {
                Some(to) => text.push_str(&format!("update {path} -> {}\n", repo.display_path(to))),
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

pub fn run(ctx: &mut Ctx, args: PatchArgs) -> Result<Exit, Error> {
    let json = ctx.json;
    let text = read_patch(args.file.as_deref())?;
    let (repo, out) = ctx.parts()?;
    let color = out.color();
    let base = repo.prefix.clone().unwrap_or_default();
    let tree = patch::FsTree::for_repo(repo)?;
    let res = patch::resolve_text(&text, &tree, &base)?;
    let digest = format!("{:x}", sha2::Sha256::digest(text.as_bytes()));
    let report = report_json(repo, &res);

    if res.changes.is_empty() {
        let why = if res.report.already_applied() > 0 {
            "The patch is already applied; nothing staged."
        } else {
            "The patch changes nothing; nothing staged."
        };
        if json {
            let value = serde_json::json!({
                "id": null,
                "summary": summary(&res),
                "patch_digest": digest,
                "files": [],
                "ops": report["ops"],
                "applied": false,
            });
            let _ = writeln!(out.stdout(), "{value}");
        } else {
            let _ = out.stdout().write_all(report_text(repo, &res).as_bytes());
            let _ = writeln!(out.stderr(), "{why}");
        }
        return Ok(Exit::Ok);
    }

    let meta = preview_meta(repo, &res, &digest, args.stage.reason.clone());
    let files = meta.files.clone();
    let (preview, applied) = args.stage.stage(repo, &res.changes, &meta)?;

    if json {
        let files: Vec<serde_json::Value> = files
            .iter()
            .map(|f| {
                serde_json::json!({
                    "path": repo.display_path(&f.path),
                    "count": f.count,
                    "flags": f.flags,
                })
            })
            .collect();
        let value = serde_json::json!({
            "id": preview.id,
            "summary": meta.summary,
            "patch_digest": digest,
            "files": files,
            "ops": report["ops"],
            "applied": applied.is_some(),
        });
        let _ = writeln!(out.stdout(), "{value}");
        return Ok(Exit::Ok);
    }

    let mut text = render_diffs(
        &DiffFile::from_changes(&res.changes),
        color,
        args.stage.max_render,
    );
    text.push('\n');
    text.push_str(&report_text(repo, &res));
    text.push_str(&format!("{}\n", meta.summary));
    text.push_str(&common::staged_line(&preview, applied.as_ref()));
    let _ = out.stdout().write_all(text.as_bytes());
    if res.report.rescued() > 0 {
        out.warn("some chunks were placed by a rescue: review the drifted lines above");
    }
    Ok(Exit::Ok)
}
