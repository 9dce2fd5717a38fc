//! `apply_patch`: stage a `*** Begin Patch` patch.

use git_astedit::ops::patch::PatchRequest;
use git_astedit::render;
use git_astedit::Error;
use schemars::JsonSchema;
use serde::Deserialize;

use super::count;
use super::edit::staged;
use super::edit::staging;
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
    let (repo, notes) = call.open()?;
    let request = PatchRequest {
        text: input.patch,
        // Paths in the patch are relative to the top, whatever the server's cwd.
        base: String::new(),
        staging: staging(call, input.reason, None),
    };
    let mut out = git_astedit::ops::patch::run(&repo, &request, &call.cancel)?;
    staged(call, &mut out, input.max_diff_lines);
    Done::new(render::agent::stage::patch_text(&out, &notes), &out)
}
