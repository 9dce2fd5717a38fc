//! What staging returns: `edit`, `patch`, `run`, `steps` (and their tools), one file
//! and one replacement of them, and a capped diff.

use schemars::JsonSchema;
use serde::Serialize;

use super::run;
use super::Diagnostics;
use super::ResolveReport;
use super::Version;

/// What `edit`, `patch` (and the `ast_edit`, `apply_patch` tools) staged.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct StageReport {
    pub schema_version: Version,
    pub kind: crate::change::PreviewKind,
    /// The preview id; `null` when nothing would change (nothing staged).
    pub id: Option<String>,
    /// Whether a preview was staged.
    pub staged: bool,
    /// Whether it was also applied (`--apply`).
    pub applied: bool,
    /// An apply asked for with the staging (MCP `replace`/`write` with `apply: true`)
    /// that was not made: why. The preview stays pending.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub not_applied: Option<String>,
    /// One line, e.g. `3 replacements in 2 files`.
    pub summary: String,
    /// Replacements (or patch chunks) in all.
    pub replacements: usize,
    pub files: Vec<StagedFile>,
    pub file_count: usize,
    /// `edit`: files read and considered.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub files_searched: Option<usize>,
    /// `patch`: SHA-256 of the patch text.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub patch_digest: Option<String>,
    /// `patch`: how each operation and chunk was placed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ops: Option<serde_json::Value>,
    /// The apply, with `--apply`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub apply: Option<ResolveReport>,
    /// `edit`: replacements that repeat text their matched node keeps past the
    /// pattern (each is a change's `repeated_kept`; its file has the flag
    /// `repeats-kept-text`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub repeated_kept_text: Option<usize>,
    /// `run`: the command, how it ended, and the end of its output.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub run: Option<Box<run::RunFacts>>,
    /// `steps`: what each step did, in order.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub steps: Option<Vec<StepRow>>,
    /// The diff (the tools always; the CLI leaves it out).
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub diff: Option<CappedDiff>,
    #[serde(flatten)]
    pub diagnostics: Diagnostics,
    /// What the text of the report needs besides the JSON's facts.
    #[serde(skip)]
    pub text: StageText,
}

/// What one step of `steps` did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct StepRow {
    /// 1-based, in the order the steps ran.
    pub number: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// `rules` or `ops`.
    pub kind: String,
    /// Times it ran: once, or once per value of what it takes from earlier steps (0:
    /// they exported none).
    pub runs: usize,
    /// Changes it made (fixes or replacements), in all its runs.
    pub changes: usize,
    /// Files it changed.
    pub files: usize,
    /// The distinct values it exported to the steps after it (name → text), in the
    /// order found.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub exported: Vec<std::collections::BTreeMap<String, String>>,
}

/// The parts of a staging report only its text shows.
#[derive(Debug, Clone, Default)]
pub struct StageText {
    /// The diff as text, when the request asked for it.
    pub diff: Option<String>,
    /// `patch`: where each chunk was placed, one line a chunk.
    pub placement: Option<String>,
    /// `edit -i`: the changes offered to the person (the prompt counts them).
    pub offered: Option<usize>,
    /// `patch`: chunks found already applied.
    pub already_applied: usize,
    /// `edit --cached`: the preview is of the staged content, and applying it should
    /// update the index too (`apply --index`; its undo then `undo --index`).
    pub apply_index: bool,
}

impl StageReport {
    /// A report of nothing staged yet for a preview of `meta`'s kind: its summary,
    /// count and `files`; the kind-specific fields left empty for the op to fill.
    pub fn of_meta(meta: &crate::change::PreviewMeta, files: Vec<StagedFile>) -> StageReport {
        StageReport {
            schema_version: Version,
            kind: meta.kind,
            id: None,
            staged: false,
            applied: false,
            not_applied: None,
            summary: meta.summary.clone(),
            replacements: meta.replacements,
            file_count: meta.files.len(),
            files,
            files_searched: None,
            patch_digest: None,
            ops: None,
            apply: None,
            repeated_kept_text: None,
            run: None,
            steps: None,
            diff: None,
            diagnostics: Diagnostics::default(),
            text: StageText::default(),
        }
    }

    /// 1 when an edit (or a command `run`) would change nothing, else 0 (a patch that
    /// changes nothing is not a failure: it may be applied already).
    pub fn exit(&self) -> crate::error::Exit {
        let nothing_is_failure = matches!(
            self.kind,
            crate::change::PreviewKind::Edit
                | crate::change::PreviewKind::Run
                | crate::change::PreviewKind::Steps
        );
        if nothing_is_failure && !self.staged {
            crate::error::Exit::NothingFound
        } else {
            crate::error::Exit::Ok
        }
    }
}

/// One staged file.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct StagedFile {
    pub path: String,
    /// Replacements (or patch chunks) in this file.
    pub count: usize,
    /// E.g. `introduces-parse-errors`, `added`, `deleted`, `rescued`, `moved-from:PATH`.
    pub flags: Vec<crate::change::FileFlag>,
    /// `edit`: each replacement.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub changes: Vec<Replacement>,
    /// `edit`: outer matches left as the inner rewrites made them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub dropped: Vec<Dropped>,
}

impl StagedFile {
    /// A file of a stored preview's metadata, under the path the caller shows.
    pub fn of_meta(f: &crate::change::FileMeta, path: String) -> StagedFile {
        StagedFile {
            path,
            count: f.count,
            flags: f.flags.clone(),
            changes: Vec::new(),
            dropped: Vec::new(),
        }
    }
}

/// One replacement of an `edit`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Replacement {
    /// Index of the op (0-based) that made it.
    pub op: usize,
    pub line: usize,
    pub column: usize,
    pub before: String,
    pub after: String,
    /// The text of the matched node past what the pattern covers, which stays after
    /// the replacement, when the replacement repeats it (the result holds it twice).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repeated_kept: Option<String>,
}

/// An outer match that no longer matched once the matches inside were rewritten.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Dropped {
    pub op: usize,
    pub line: usize,
    pub column: usize,
    pub text: String,
}

/// A diff cut to a number of lines and bytes; says what it cut.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct CappedDiff {
    /// Unified diff (git style), possibly cut.
    pub diff: String,
    /// Whether the diff was cut.
    pub diff_truncated: bool,
    /// Lines of the full diff.
    pub diff_lines: usize,
}
