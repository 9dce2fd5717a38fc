//! `previews`: list pending previews, or show one.

use git_astedit::report::CappedDiff;
use git_astedit::report::PreviewRow;
use git_astedit::report::ShownFile;
use git_astedit::report::Version;
use git_astedit::txn;
use git_astedit::Error;
use schemars::JsonSchema;
use serde::Deserialize;
use serde::Serialize;

use git_astedit::ops::preview::LoadedPreview;
use git_astedit::render::render_diffs;

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
    let (repo, notes) = call.open()?;
    match input.action {
        PreviewsAction::List => {
            let all = txn::list(&repo)?;
            let offset = input.offset.unwrap_or(0);
            let max = input.max_results.unwrap_or(DEFAULT_MAX_PREVIEWS).max(1);
            let rows: Vec<PreviewRow> = all
                .iter()
                .skip(offset)
                .take(max)
                .map(PreviewRow::of)
                .collect();
            let total = Some(all.len());
            let mut text = String::new();
            for r in &rows {
                text.push_str(&format!(
                    "{}  {}  {:<5}  {}",
                    r.id, r.time, r.kind, r.summary
                ));
                if let Some(reason) = &r.reason {
                    text.push_str(&format!("  ({reason})"));
                }
                text.push('\n');
            }
            if all.is_empty() {
                text.push_str("No pending previews.\n");
            } else if offset > 0 || offset + rows.len() < all.len() {
                text.push_str(&format!(
                    "{} of {} pending previews, from offset {offset}",
                    rows.len(),
                    all.len()
                ));
                if offset + rows.len() < all.len() {
                    text.push_str(&format!(
                        "; more: call again with offset {}",
                        offset + rows.len()
                    ));
                }
                text.push_str(".\n");
            }
            push_notes(&mut text, &notes, &[]);
            Done::new(
                text,
                &PreviewsOutput {
                    schema_version: Version,
                    previews: Some(rows),
                    total,
                    preview: None,
                    meta: None,
                    files: None,
                    diff: None,
                },
            )
        }
        PreviewsAction::Show => {
            let preview = git_astedit::ops::preview::pending(&repo, input.id.as_deref())?;
            let loaded = LoadedPreview::load(&repo, preview)?;
            let files = loaded.files();
            let shown: Vec<ShownFile> = loaded.shown_files();
            let diff = capped_diff(render_diffs(&files, false, 0), input.max_diff_lines);
            let r = PreviewRow::of(&loaded.preview);
            let mut text = format!("preview {}  {}  {}\n{}\n", r.id, r.time, r.kind, r.summary);
            if let Some(reason) = &r.reason {
                text.push_str(&format!("reason: {reason}\n"));
            }
            for f in &shown {
                text.push_str(&format!(
                    "  {} (+{} -{})\n",
                    f.path, f.added_lines, f.removed_lines
                ));
            }
            text.push_str(&format!(
                "The diff ({} lines{}) is in the structured content's `diff`.\n",
                diff.diff_lines,
                if diff.diff_truncated { ", cut" } else { "" }
            ));
            push_notes(&mut text, &notes, &[]);
            Done::new(
                text,
                &PreviewsOutput {
                    schema_version: Version,
                    previews: None,
                    total: None,
                    meta: Some(loaded.preview.meta.clone()),
                    preview: Some(r),
                    files: Some(shown),
                    diff: Some(diff),
                },
            )
        }
    }
}
