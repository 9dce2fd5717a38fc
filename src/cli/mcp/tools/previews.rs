//! `previews`: list pending previews, or show one.

use git_astedit::ops::list::ListRequest;
use git_astedit::ops::show::ShowRequest;
use git_astedit::render;
use git_astedit::report::CappedDiff;
use git_astedit::report::PreviewRow;
use git_astedit::report::ShownFile;
use git_astedit::report::Version;
use git_astedit::Error;
use schemars::JsonSchema;
use serde::Deserialize;
use serde::Serialize;

use super::capped_diff;
use super::count;
use super::push_notes;
use super::Call;
use super::Done;
use super::DEFAULT_MAX_DIFF_LINES;

/// What `previews` does.
#[derive(Debug, Clone, Copy, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum PreviewsAction {
    /// List pending previews, newest first.
    #[default]
    List,
    /// Show one preview: metadata, per-file line counts and its diff.
    Show,
}

/// Input of `previews`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PreviewsInput {
    /// `list` (default) or `show`.
    #[serde(default)]
    pub action: PreviewsAction,
    /// For `show`: a preview id or unique prefix (default: the newest pending one).
    #[serde(default)]
    pub id: Option<String>,
    /// For `show`: return at most this many diff lines (default 400; 0: no line
    /// limit, still at most 64 KiB).
    #[serde(default, deserialize_with = "count")]
    #[schemars(with = "usize", extend("default" = DEFAULT_MAX_DIFF_LINES))]
    pub max_diff_lines: Option<usize>,
    /// For `list`: list at most this many previews (default 50); the result says how
    /// many are pending in all.
    #[serde(default, alias = "limit", deserialize_with = "count")]
    #[schemars(with = "usize", extend("default" = DEFAULT_MAX_PREVIEWS))]
    pub max_results: Option<usize>,
    /// For `list`: skip this many first (paging: the result names the next offset).
    #[serde(default, alias = "skip", deserialize_with = "count")]
    #[schemars(with = "usize", extend("default" = 0))]
    pub offset: Option<usize>,
}

/// How many previews `list` returns unless asked for more.
const DEFAULT_MAX_PREVIEWS: usize = 50;

/// Output of `previews`: `previews` for `list` (as `git astedit list --json`), or
/// `preview`, `meta`, `files` and the diff for `show` (as `git astedit show --json`).
#[derive(Debug, Serialize, JsonSchema)]
pub struct PreviewsOutput {
    pub schema_version: Version,
    /// For `list`: the pending previews of this page, newest first.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub previews: Option<Vec<PreviewRow>>,
    /// For `list`: how many previews are pending in all.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub total: Option<usize>,
    /// For `show`: the preview.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub preview: Option<PreviewRow>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub meta: Option<git_astedit::change::PreviewMeta>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub files: Option<Vec<ShownFile>>,
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub diff: Option<CappedDiff>,
}

pub fn previews(call: &Call, input: PreviewsInput) -> Result<Done, Error> {
    let (repo, notes) = call.open_read_only()?;
    match input.action {
        PreviewsAction::List => {
            let request = ListRequest {
                offset: input.offset.unwrap_or(0),
                limit: Some(input.max_results.unwrap_or(DEFAULT_MAX_PREVIEWS).max(1)),
            };
            let report = git_astedit::ops::list::run(&repo, &request)?;
            let mut text = render::agent::previews::list(&report);
            push_notes(&mut text, &notes, &[]);
            Done::new(
                text,
                &PreviewsOutput {
                    schema_version: Version,
                    total: Some(report.total),
                    previews: Some(report.previews),
                    preview: None,
                    meta: None,
                    files: None,
                    diff: None,
                },
            )
        }
        PreviewsAction::Show => {
            let request = ShowRequest {
                id: input.id,
                ..ShowRequest::default()
            };
            let mut report = git_astedit::ops::show::run(&repo, &request, &mut |_| Ok(()))?;
            // The whole diff, cut to what a tool result holds.
            report.diff = report
                .diff
                .map(|full| capped_diff(full.diff, input.max_diff_lines));
            let mut text = render::agent::previews::show(&report);
            push_notes(&mut text, &notes, &[]);
            Done::new(
                text,
                &PreviewsOutput {
                    schema_version: Version,
                    previews: None,
                    total: None,
                    meta: Some(report.meta),
                    preview: Some(report.preview),
                    files: Some(report.files),
                    diff: report.diff,
                },
            )
        }
    }
}
