//! `apply_patch`: stage a `*** Begin Patch` patch.

use git_astedit::report::Diagnostics;
use git_astedit::Error;
use schemars::JsonSchema;
use serde::Deserialize;

use git_astedit::render::render_diffs;
use git_astedit::render::DiffFile;

use super::count;

use super::nothing_staged_text;
use super::staged_output;
use super::staged_text;
use super::Call;
use super::Done;
use super::DEFAULT_MAX_DIFF_LINES;

/// Input of `apply_patch`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PatchInput {
    /// The whole patch, from `*** Begin Patch` to `*** End Patch`. Paths are relative
    /// to the repository root.
    pub patch: String,
    /// Why this change is made; recorded in the preview and the journal.
    #[serde(default)]
    pub reason: Option<String>,
    /// Return at most this many diff lines (default 400; 0 means no line limit,
    /// still at most 64 KiB).
    #[serde(default, deserialize_with = "count")]
    #[schemars(with = "usize", extend("default" = DEFAULT_MAX_DIFF_LINES))]
    pub max_diff_lines: Option<usize>,
}

pub fn apply_patch(call: &Call, input: PatchInput) -> Result<Done, Error> {
    use sha2::Digest;
    let (repo, notes) = call.open()?;
    let tree = git_astedit::patch::FsTree::for_repo(&repo)?;
    // Paths in the patch are relative to the top, whatever the server's cwd.
    let res = git_astedit::patch::resolve_text(&input.patch, &tree, "")?;
    let digest = format!("{:x}", sha2::Sha256::digest(input.patch.as_bytes()));
    let mut meta = git_astedit::ops::patch::preview_meta(&res, &digest, input.reason.clone());
    git_astedit::ops::refresh::record_patch(&mut meta, &input.patch, "");
    call.cancel.check()?;
    let id =
        git_astedit::ops::stage::stage_changes(&repo, &res.changes, &mut meta, call.agent.clone())?
            .map(|p| p.id);
    let mut diag = Diagnostics::default();
    if res.report.rescued() > 0 {
        diag.warnings.push(
            "some chunks were placed by a rescue: check the drifted lines in the report".into(),
        );
    }
    if id.is_none() && res.report.already_applied() > 0 {
        diag.warnings
            .push("the patch is already applied; nothing staged".into());
    }
    let diff = render_diffs(&DiffFile::from_changes(&res.changes), false, 0);
    let mut out = staged_output(id, &meta, diff, input.max_diff_lines, diag);
    out.patch_digest = Some(digest);
    out.ops = serde_json::to_value(&res.report)
        .ok()
        .and_then(|v| v.get("ops").cloned());
    let text = match &out.id {
        Some(id) => {
            call.session.remember(id);
            let mut text = git_astedit::ops::patch::report_text(&repo, &res);
            text.push_str(&staged_text(&out, &notes));
            text
        }
        None => {
            let why = if res.report.already_applied() > 0 {
                "the patch changes nothing (it is already applied)"
            } else {
                "the patch changes nothing"
            };
            let mut text = nothing_staged_text(why, &notes, &out.diagnostics.warnings);
            text.push_str(&git_astedit::ops::patch::report_text(&repo, &res));
            text
        }
    };
    Done::new(text, &out)
}
