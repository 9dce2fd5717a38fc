//! `patch` (and the `apply_patch` tool): resolve a `*** Begin Patch` text against the
//! work tree, stage it as a preview, and apply it at once when asked.

pub mod recipe;

use super::grep::Paths;
use super::recipe::Recorded;
use super::stage::settle;
use super::stage::stage_changes;
use super::stage::Audience;
use super::stage::Staging;
use crate::cancel::Cancel;
use crate::diff::render_diffs;
use crate::diff::DiffFile;
use crate::patch::Resolution;
use crate::repo::Repo;
use crate::report::Diagnostics;
use crate::report::StageReport;
use crate::report::StageText;
use crate::report::StagedFile;
use crate::Error;

/// A patch to stage.
#[derive(Debug, Clone)]
pub struct PatchRequest {
    /// The whole patch, from `*** Begin Patch` to `*** End Patch`.
    pub text: String,
    /// The folder (a repository path, `""` for the top) the patch's paths are
    /// relative to.
    pub base: String,
    pub staging: Staging,
}

pub fn run(repo: &Repo, req: &PatchRequest, cancel: &Cancel) -> Result<StageReport, Error> {
    use sha2::Digest;
    let staging = &req.staging;
    let paths = staging.audience.paths();
    let tree = crate::patch::FsTree::for_repo(repo)?;
    let res = crate::patch::resolve_text(&req.text, &tree, &req.base)?;
    let digest = format!("{:x}", sha2::Sha256::digest(req.text.as_bytes()));
    let mut meta = preview_meta(&res, &digest, staging.reason.clone());
    recipe::PatchRecipe::new(&req.text, &req.base).record(&mut meta);
    cancel.check()?;
    let preview = stage_changes(repo, &res.changes, &mut meta, staging.agent.clone())?;
    let mut diagnostics = Diagnostics::default();
    let already_applied = res.report.already_applied();
    match staging.audience {
        Audience::Person if res.report.rescued() > 0 => diagnostics
            .warnings
            .push("some chunks were placed by a rescue: review the drifted lines above".into()),
        Audience::Person => {}
        Audience::Agent => {
            if res.report.rescued() > 0 {
                diagnostics.warnings.push(
                    "some chunks were placed by a rescue: check the drifted lines in the report"
                        .into(),
                );
            }
            if preview.is_none() && already_applied > 0 {
                diagnostics
                    .warnings
                    .push("the patch is already applied; nothing staged".into());
            }
        }
    }
    let files = meta.files.iter();
    let files = files.map(|f| StagedFile::of_meta(f, paths.show(repo, &f.path)));
    let mut report = StageReport {
        patch_digest: Some(digest),
        ops: ops_json(repo, &res, paths),
        diagnostics,
        text: StageText {
            diff: staging
                .diff
                .map(|d| render_diffs(&DiffFile::from_changes(&res.changes), d.color, d.max_lines)),
            placement: Some(report_text(repo, &res)),
            offered: None,
            already_applied,
            apply_index: false,
        },
        ..StageReport::of_meta(&meta, files.collect())
    };
    settle(repo, &mut report, preview.as_ref(), staging, cancel)?;
    Ok(report)
}

// The preview metadata of a resolution is the engine's (as an edit's is), here under
// the name callers know.
pub use crate::patch::meta::preview_meta;

/// The resolution report's operations, paths written as `paths` says.
fn ops_json(repo: &Repo, res: &Resolution, paths: Paths) -> Option<serde_json::Value> {
    let mut v = serde_json::to_value(&res.report).unwrap_or_default();
    if let Some(ops) = v.get_mut("ops").and_then(|o| o.as_array_mut()) {
        for op in ops {
            for key in ["path", "move_to"] {
                if let Some(p) = op.get(key).and_then(|p| p.as_str()).map(str::to_string) {
                    op[key] = serde_json::Value::String(paths.show(repo, &p));
                }
            }
        }
    }
    v.get("ops").cloned()
}

/// The human-readable report: one line per chunk, drifted lines and notes below it.
fn report_text(repo: &Repo, res: &Resolution) -> String {
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
