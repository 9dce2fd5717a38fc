//! `read` and `edit_lines`: edits addressed by content (a blob id and line ranges).

use git_astedit::ops::lines::EditLinesRequest;
use git_astedit::ops::lines::LineEdit;
use git_astedit::ops::lines::ReadRequest;
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

/// Input of `read`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReadInput {
    /// The file, relative to the repository root.
    pub path: String,
    /// First line to return (1-based; default 1).
    #[serde(default, deserialize_with = "count")]
    #[schemars(with = "usize", extend("default" = 1))]
    pub start: Option<usize>,
    /// Last line to return (inclusive; 0, the default, means the last line). The lines
    /// are also cut at the result's byte budget; `next_start` then continues.
    #[serde(default, deserialize_with = "count")]
    #[schemars(with = "usize", extend("default" = 0))]
    pub end: Option<usize>,
}

pub fn read(call: &Call, input: ReadInput) -> Result<Done, Error> {
    let (repo, notes) = call.open_read_only()?;
    // The lines go out twice (numbered in the text, raw in `text`), with room for the
    // rest of the result.
    let max_bytes = call.budget.saturating_sub(1024) / 3;
    let out = git_astedit::ops::lines::read(
        &repo,
        &ReadRequest {
            path: input.path,
            start: input.start,
            end: input.end.filter(|&e| e > 0),
            max_bytes: max_bytes.max(256),
        },
    )?;
    Done::new(render::agent::lines::read_text(&out, &notes), &out)
}

/// One range of the blob read, and what replaces it.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LineEditInput {
    /// First line replaced (1-based, in the lines of the blob read).
    pub start: usize,
    /// Last line replaced (inclusive). `start - 1` replaces nothing: the text is
    /// inserted before line `start` (`start` = lines + 1 appends).
    pub end: usize,
    /// The new lines (a final newline is added when missing; the file's line endings
    /// are used). Empty deletes the range.
    pub text: String,
}

/// Input of `edit_lines`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EditLinesInput {
    /// The file, relative to the repository root.
    pub path: String,
    /// The blob id `read` returned for the file: the lines the ranges count.
    pub blob: String,
    /// Ranges to replace (at least one; they must not overlap).
    pub edits: Vec<LineEditInput>,
    /// Why this change is made; recorded in the preview and the journal.
    #[serde(default)]
    pub reason: Option<String>,
    /// Return at most this many diff lines (default 400; 0 means no line limit,
    /// still at most 64 KiB).
    #[serde(default, deserialize_with = "count")]
    #[schemars(with = "usize", extend("default" = DEFAULT_MAX_DIFF_LINES))]
    pub max_diff_lines: Option<usize>,
}

pub fn edit_lines(call: &Call, input: EditLinesInput) -> Result<Done, Error> {
    let (repo, notes) = call.open()?;
    let request = EditLinesRequest {
        path: input.path,
        blob: input.blob,
        edits: input
            .edits
            .into_iter()
            .map(|e| LineEdit {
                start: e.start,
                end: e.end,
                text: e.text,
            })
            .collect(),
        staging: staging(call, input.reason, None),
    };
    let mut out = git_astedit::ops::lines::edit_lines(&repo, &request, &call.cancel)?;
    staged(call, &mut out, input.max_diff_lines);
    Done::new(render::agent::stage::patch_text(&out, &notes), &out)
}
