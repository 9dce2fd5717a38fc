//! `replace` and `write`: Claude Code's Edit/MultiEdit and Write shapes, staged.

use git_astedit::error::UsageError;
use git_astedit::ops::replace::ReplaceRequest;
use git_astedit::ops::replace::TextEdit;
use git_astedit::ops::replace::WriteRequest;
use git_astedit::ops::stage::Apply;
use git_astedit::ops::stage::Staging;
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

/// One `old_string` → `new_string` edit.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TextEditInput {
    /// The exact text to replace (whitespace and indentation included).
    pub old_string: String,
    /// The text to put in its place.
    pub new_string: String,
    /// Replace every occurrence (default: old_string must occur exactly once).
    #[serde(default)]
    pub replace_all: bool,
}

/// Input of `replace`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReplaceInput {
    /// The file, relative to the repository root (an absolute path inside the work
    /// tree is accepted too).
    #[serde(alias = "file_path")]
    pub path: String,
    /// The exact text to replace (with `new_string`; or give `edits`).
    #[serde(default)]
    pub old_string: Option<String>,
    /// The text to put in its place.
    #[serde(default)]
    pub new_string: Option<String>,
    /// Replace every occurrence of old_string (default: it must occur exactly once).
    #[serde(default)]
    pub replace_all: bool,
    /// Several edits of this file, made in order, each on the previous one's result;
    /// all or nothing (instead of old_string/new_string).
    #[serde(default)]
    pub edits: Vec<TextEditInput>,
    /// The blob id `read` returned, when the edit was written from that read: a file
    /// changed since is merged three-way, or refused where the change collides.
    #[serde(default)]
    pub blob: Option<String>,
    /// Why this change is made; recorded in the preview and the journal.
    #[serde(default)]
    pub reason: Option<String>,
    /// Apply at once in this call (the same stale check as `resolve`); never when
    /// `blob` is outdated: the merged edit is staged, `applied` false, `not_applied` why.
    #[serde(default)]
    pub apply: bool,
    /// Return at most this many diff lines (default 400; 0 means no line limit,
    /// still at most 64 KiB).
    #[serde(default, deserialize_with = "count")]
    #[schemars(with = "usize", extend("default" = DEFAULT_MAX_DIFF_LINES))]
    pub max_diff_lines: Option<usize>,
}

/// Input of `write`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WriteInput {
    /// The file, relative to the repository root (an absolute path inside the work
    /// tree is accepted too); created when missing.
    #[serde(alias = "file_path")]
    pub path: String,
    /// The whole new content of the file.
    pub content: String,
    /// The blob id `read` returned, when the content was written from that read: a
    /// file changed since is merged three-way, or refused where the change collides.
    #[serde(default)]
    pub blob: Option<String>,
    /// Why this change is made; recorded in the preview and the journal.
    #[serde(default)]
    pub reason: Option<String>,
    /// Apply at once in this call (the same stale check as `resolve`); never when
    /// `blob` is outdated: the merged edit is staged, `applied` false, `not_applied` why.
    #[serde(default)]
    pub apply: bool,
    /// Return at most this many diff lines (default 400; 0 means no line limit,
    /// still at most 64 KiB).
    #[serde(default, deserialize_with = "count")]
    #[schemars(with = "usize", extend("default" = DEFAULT_MAX_DIFF_LINES))]
    pub max_diff_lines: Option<usize>,
}

/// The repository path of `path`: absolute paths (Claude Code's `file_path`) are made
/// relative to the work tree when they are inside it.
fn repo_path(call: &Call, path: &str) -> String {
    match std::path::Path::new(path).strip_prefix(call.workdir) {
        Ok(rel) => rel.to_string_lossy().into_owned(),
        Err(_) => path.to_string(),
    }
}

pub fn replace(call: &Call, input: ReplaceInput) -> Result<Done, Error> {
    let mut edits: Vec<TextEdit> = input
        .edits
        .into_iter()
        .map(|e| TextEdit {
            old: e.old_string,
            new: e.new_string,
            all: e.replace_all,
        })
        .collect();
    match (input.old_string, input.new_string) {
        (Some(old), Some(new)) if edits.is_empty() => edits.push(TextEdit {
            old,
            new,
            all: input.replace_all,
        }),
        (None, None) if !edits.is_empty() => {}
        _ => {
            return Err(UsageError(
                "give old_string and new_string, or edits: [{old_string, new_string}, …] \
                 (not both)"
                    .into(),
            )
            .into())
        }
    }
    let (repo, notes) = call.open()?;
    let request = ReplaceRequest {
        path: repo_path(call, &input.path),
        blob: input.blob,
        edits,
        staging: staging_of(call, input.reason, input.apply, "replace"),
    };
    let mut out = git_astedit::ops::replace::replace(&repo, &request, &call.cancel)?;
    staged(call, &mut out, input.max_diff_lines);
    Done::new(render::agent::stage::patch_text(&out, &notes), &out)
}

pub fn write(call: &Call, input: WriteInput) -> Result<Done, Error> {
    let (repo, notes) = call.open()?;
    let request = WriteRequest {
        path: repo_path(call, &input.path),
        content: input.content,
        blob: input.blob,
        staging: staging_of(call, input.reason, input.apply, "write"),
    };
    let mut out = git_astedit::ops::replace::write(&repo, &request, &call.cancel)?;
    staged(call, &mut out, input.max_diff_lines);
    Done::new(render::agent::stage::patch_text(&out, &notes), &out)
}

/// The staging a call asks for: with `apply`, applied at once (as `ast_edit`'s).
fn staging_of(call: &Call, reason: Option<String>, apply: bool, tool: &str) -> Staging {
    let at_once = apply.then(|| Apply {
        reason: Some(reason.clone().unwrap_or_else(|| format!("{tool} apply"))),
        index: false,
    });
    staging(call, reason, at_once)
}
