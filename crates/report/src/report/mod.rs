/*!
The output contract: every `--json` document the CLI prints and every structured tool
result the MCP server returns is one of the types here (`Serialize + JsonSchema`), so
`git astedit schema` documents both front ends at once.

Rules every type follows:

* a top-level object carries `schema_version` ([`SCHEMA_VERSION`]), bumped on any
  incompatible change;
* times are RFC 3339 UTC strings (`2026-11-30T15:33:02Z`, see [`rfc3339`]);
* a file list is a list of paths everywhere, with a count beside it where useful;
* paths of search and staging results (`grep`, `edit`, `patch`, `scan`) are relative
  to the current folder on the CLI and repository paths in the server; paths stored in
  previews and the journal (`list`, `show`, `log`, `apply`, …) are repository paths;
* errors have one shape on both front ends ([`ErrorReport`]).
*/

use schemars::JsonSchema;
use serde::Serialize;

use crate::error::Error;
use crate::error::Exit;
use crate::txn::EventKind;
use crate::txn::RecoveryAction;
use crate::txn::TxnOp;

pub mod campaign;
pub mod consent;
pub mod lane;
pub mod review;
pub mod ruletest;
pub mod run;
pub mod scan;
pub mod schema;
pub mod trust;
pub mod verify;

pub use scan::FindingRow;
pub use scan::FixedFile;
pub use scan::HookReport;
pub use scan::MergeReport;
pub use scan::ScanMode;
pub use scan::ScanReport;
pub use scan::ScanRule;

/// The version of every JSON shape here; bumped on any incompatible change.
pub const SCHEMA_VERSION: u32 = 2;

pub use crate::text::rfc3339;

/// The `schema_version` field every top-level object starts with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Version;

impl Serialize for Version {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u32(SCHEMA_VERSION)
    }
}

impl JsonSchema for Version {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "SchemaVersion".into()
    }
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "description": "The version of this JSON shape; bumped on any incompatible change.",
            "type": "integer",
            "const": SCHEMA_VERSION,
        })
    }
}

/// A failed command or tool call.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ErrorReport {
    pub schema_version: Version,
    pub error: ErrorBody,
}

/// What went wrong, classified.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ErrorBody {
    /// A stable kebab-case identifier, e.g. `stale`, `bad-pattern`, `usage`.
    pub code: String,
    /// The exit class (the CLI's exit status): 1 nothing found, 2 bad input, 3 stale,
    /// 4 refused, 5 unplaceable, 6 locked, 70 internal.
    pub exit: u8,
    /// One line (or a few) saying what happened.
    pub message: String,
    /// The causes below the message, outermost first.
    pub causes: Vec<String>,
    /// What to do next, when there is something to say.
    pub hint: Option<String>,
    /// Machine-readable detail, e.g. the stale paths: `{"id", "paths": [{"path", "what"}]}`.
    pub details: Option<serde_json::Value>,
}

impl ErrorReport {
    pub fn new(err: &Error) -> ErrorReport {
        ErrorReport {
            schema_version: Version,
            error: ErrorBody {
                code: err.code().to_string(),
                exit: err.exit().code(),
                message: err.to_string(),
                causes: err.causes(),
                hint: err.hint(),
                details: err.details(),
            },
        }
    }
}

/// A failed tool call, as the server returns it (in a text block): the CLI's error
/// report, its hint in the tool's words, and the call to make next.
#[derive(Debug, Clone, Serialize)]
pub struct ToolErrorReport {
    pub schema_version: Version,
    pub error: ToolErrorBody,
}

/// [`ErrorBody`] and the call to make next.
#[derive(Debug, Clone, Serialize)]
pub struct ToolErrorBody {
    #[serde(flatten)]
    pub body: ErrorBody,
    /// A tool and its arguments (`…` where the caller fills in), or a retry after some
    /// seconds; `null` when there is nothing to suggest.
    pub next: Option<serde_json::Value>,
}

// ------------------------------------------------------------------ shared pieces

/// A list of paths with its length beside it (`paths` may be cut; `count` is not).
#[derive(Debug, Clone, Default, Serialize, JsonSchema)]
pub struct PathList {
    pub count: usize,
    pub paths: Vec<String>,
}

/// A language the pattern does not parse as; its files were skipped.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct SkippedLanguage {
    pub lang: String,
    pub reason: String,
}

/// What a file-reading command skipped or could not parse, and its warnings in words.
#[derive(Debug, Clone, Default, Serialize, JsonSchema)]
pub struct Diagnostics {
    /// Files skipped, by reason (`binary`, `non-utf8`, `too-large`, `symlink`,
    /// `submodule`, `non-utf8-path`, `unreadable`, `no-language`).
    pub skipped: std::collections::BTreeMap<String, usize>,
    /// Files that parse with errors (searched anyway); at most 20 paths listed.
    pub parse_errors: PathList,
    pub skipped_languages: Vec<SkippedLanguage>,
    /// The same facts as the lines printed on stderr as `warning: …`.
    pub warnings: Vec<String>,
}

impl Diagnostics {
    /// From what a search or edit skipped; `show` renders a repository path as the front
    /// end shows paths. The warnings are the lines a person gets on stderr.
    pub fn of(
        skipped_languages: &[(String, String)],
        parse_errors: &[String],
        skipped: &crate::files::Skipped,
        show: impl Fn(&str) -> String,
    ) -> Diagnostics {
        let mut warnings: Vec<String> = crate::rewrite::skipped_languages_note(skipped_languages)
            .into_iter()
            .collect();
        if !parse_errors.is_empty() {
            let listed: Vec<String> = parse_errors.iter().take(3).map(|p| show(p)).collect();
            let more = if parse_errors.len() > 3 { ", …" } else { "" };
            warnings.push(format!(
                "{} parsed with errors (searched anyway): {}{more}",
                crate::text::plural(parse_errors.len(), "file"),
                listed.join(", ")
            ));
        }
        warnings.extend(skipped.summary());
        Diagnostics {
            skipped: skipped
                .counts
                .iter()
                .map(|(reason, n)| {
                    let name = serde_json::to_value(reason)
                        .ok()
                        .and_then(|v| v.as_str().map(str::to_string))
                        .unwrap_or_default();
                    (name, *n)
                })
                .collect(),
            parse_errors: PathList {
                count: parse_errors.len(),
                paths: parse_errors.iter().take(20).map(|p| show(p)).collect(),
            },
            skipped_languages: skipped_languages
                .iter()
                .map(|(lang, reason)| SkippedLanguage {
                    lang: lang.clone(),
                    reason: reason.clone(),
                })
                .collect(),
            warnings,
        }
    }
}

impl Diagnostics {
    /// Keeps the warning about skipped languages for `said` only (a part of
    /// `skipped_languages`, which stays whole): the others are not worth a line.
    pub fn say_languages(&mut self, said: &[(String, String)]) {
        let all: Vec<(String, String)> = self
            .skipped_languages
            .iter()
            .map(|s| (s.lang.clone(), s.reason.clone()))
            .collect();
        if let Some(note) = crate::rewrite::skipped_languages_note(&all) {
            self.warnings.retain(|w| *w != note);
        }
        if let Some(note) = crate::rewrite::skipped_languages_note(said) {
            self.warnings.insert(0, note);
        }
    }
}

/// A piece of source: byte range (`start_byte` inclusive, `end_byte` exclusive), 1-based
/// line and column (columns in characters; the end is just past the last character).
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Span {
    pub start_byte: usize,
    pub end_byte: usize,
    pub line: usize,
    pub column: usize,
    pub end_line: usize,
    pub end_column: usize,
    pub text: String,
}

impl Span {
    /// The part of a match a rewrite replaces, when it ends before the match does
    /// (its text cut from the match's text as kept).
    pub fn replaced(m: &crate::rewrite::Match) -> Option<Span> {
        let end = m.replaced_end?;
        let len = end.byte - m.start_byte;
        Some(Span {
            start_byte: m.start_byte,
            end_byte: end.byte,
            line: m.line,
            column: m.column,
            end_line: end.line,
            end_column: end.column,
            text: m.text.get(..len).unwrap_or(&m.text).to_string(),
        })
    }

    /// The span of a match, with `text` as the caller shows it (whole, or cut).
    pub fn of(m: &crate::rewrite::Match, text: String) -> Span {
        Span {
            start_byte: m.start_byte,
            end_byte: m.end_byte,
            line: m.line,
            column: m.column,
            end_line: m.end_line,
            end_column: m.end_column,
            text,
        }
    }
}

impl From<&crate::rewrite::Span> for Span {
    fn from(s: &crate::rewrite::Span) -> Span {
        Span {
            start_byte: s.start_byte,
            end_byte: s.end_byte,
            line: s.line,
            column: s.column,
            end_line: s.end_line,
            end_column: s.end_column,
            text: s.text.clone(),
        }
    }
}

// ------------------------------------------------------------------ grep

/// `grep --json` and the `ast_grep` tool.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct GrepReport {
    pub schema_version: Version,
    pub pattern: String,
    /// The matches shown, in path and position order.
    pub matches: Vec<GrepMatch>,
    /// Matches found in all.
    pub total: usize,
    /// Matches in `matches`.
    pub shown: usize,
    /// Whether `matches` holds fewer than `total` (`--max-count`, `max_results`).
    pub capped: bool,
    pub files_searched: usize,
    /// Files with at least one match.
    pub files_matched: usize,
    #[serde(flatten)]
    pub diagnostics: Diagnostics,
    /// The cap asked for (0: none), for the text that says where the list stopped.
    #[serde(skip)]
    pub max_count: usize,
}

impl GrepReport {
    /// 0 when something matched, 1 when nothing did (as grep).
    pub fn exit(&self) -> crate::error::Exit {
        if self.total > 0 {
            crate::error::Exit::Ok
        } else {
            crate::error::Exit::NothingFound
        }
    }
}

/// One match: where, what, and the metavariables' captures (as ast-grep's
/// `metaVariables`: `single` for `$A`, `multi` for `$$$ARGS`).
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct GrepMatch {
    pub path: String,
    pub lang: String,
    #[serde(flatten)]
    pub span: Span,
    /// What a rewrite of this match replaces, when it is less than the match: the
    /// matched node goes on past the last part the pattern covers (`raise $E, $M` on
    /// `raise A, "m", bt` replaces `raise A, "m"`), and a rewrite keeps the rest.
    /// Absent when the two are the same.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replaced: Option<Span>,
    pub meta_variables: MetaVariables,
    /// With `-B`/`-C`: the lines just above the match (fewer at the top of the file).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub context_before: Option<Vec<ContextLine>>,
    /// With `-A`/`-C`: the lines just below the match's last line.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub context_after: Option<Vec<ContextLine>>,
}

/// One line of context around a match: its 1-based number and its text, without the
/// line ending.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ContextLine {
    pub line: usize,
    pub text: String,
}

/// Captures by metavariable name (without `$`).
#[derive(Debug, Clone, Default, Serialize, JsonSchema)]
pub struct MetaVariables {
    pub single: std::collections::BTreeMap<String, Span>,
    pub multi: std::collections::BTreeMap<String, Vec<Span>>,
}

impl MetaVariables {
    pub fn of(captures: &[crate::rewrite::Capture]) -> MetaVariables {
        let mut out = MetaVariables::default();
        for c in captures {
            if c.multi {
                out.multi
                    .insert(c.name.clone(), c.nodes.iter().map(Span::from).collect());
            } else if let Some(n) = c.nodes.first() {
                out.single.insert(c.name.clone(), Span::from(n));
            }
        }
        out
    }
}

// ------------------------------------------------------------------ read

/// What the `read` tool returns: lines of a work-tree file and the blob id of the
/// whole file, the address `edit_lines` takes.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ReadReport {
    pub schema_version: Version,
    /// Repository path.
    pub path: String,
    /// Blob id of the file's bytes as they are now (kept in the object database).
    pub blob: String,
    /// Lines in the whole file.
    pub total_lines: usize,
    /// First line sent (1-based).
    pub start: usize,
    /// Last line sent (inclusive; `start - 1` when none).
    pub end: usize,
    /// Whether the range asked for was cut at the byte budget.
    pub truncated: bool,
    /// The `start` that continues a cut range.
    pub next_start: Option<usize>,
    /// The lines `start..=end`, each with its line ending.
    pub text: String,
}

/// A range of lines (1-based, inclusive; `end = start - 1`: an insertion before
/// `start`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
pub struct LineRange {
    pub start: usize,
    pub end: usize,
}

/// One match of `grep --json=stream`, in ast-grep's shape (its `--json=stream`
/// objects: camelCase names, 0-based lines and columns), one object a line.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SgMatch {
    pub text: String,
    pub range: SgRange,
    /// The path, as `grep` prints it (`STDIN` for `--stdin`).
    pub file: String,
    /// The whole lines the match spans.
    pub lines: String,
    pub char_count: SgCharCount,
    /// With `run --rewrite`: the text ast-grep would write.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replacement: Option<String>,
    /// With `run --rewrite`: the bytes the replacement replaces.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replacement_offsets: Option<SgOffsets>,
    /// ast-grep's name of the language, e.g. `TypeScript`.
    pub language: String,
    /// Absent when the pattern captures nothing by name (`foo(1)`, `foo($$$)`), as in
    /// ast-grep.
    #[serde(default, skip_serializing_if = "SgMetaVariables::is_empty")]
    pub meta_variables: SgMetaVariables,
}

/// Where a match or capture is: bytes, and 0-based line and column (characters).
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SgRange {
    pub byte_offset: SgOffsets,
    pub start: SgPosition,
    pub end: SgPosition,
}

/// A byte range: `start` inclusive, `end` exclusive.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct SgOffsets {
    pub start: usize,
    pub end: usize,
}

/// A 0-based line and column (the column in characters).
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct SgPosition {
    pub line: usize,
    pub column: usize,
}

/// Characters before the match on its first line, and after it on its last.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct SgCharCount {
    pub leading: usize,
    pub trailing: usize,
}

/// The captures, as ast-grep's `metaVariables` (`transformed` is always empty: a
/// search has no transforms).
#[derive(Debug, Clone, Default, Serialize, JsonSchema)]
pub struct SgMetaVariables {
    pub single: std::collections::BTreeMap<String, SgCapture>,
    pub multi: std::collections::BTreeMap<String, Vec<SgCapture>>,
    pub transformed: std::collections::BTreeMap<String, String>,
}

/// One captured node.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct SgCapture {
    pub text: String,
    pub range: SgRange,
}

impl SgRange {
    /// From 1-based positions (ours) to ast-grep's 0-based ones.
    pub fn of(span: &crate::rewrite::Span) -> SgRange {
        SgRange {
            byte_offset: SgOffsets {
                start: span.start_byte,
                end: span.end_byte,
            },
            start: SgPosition {
                line: span.line.saturating_sub(1),
                column: span.column.saturating_sub(1),
            },
            end: SgPosition {
                line: span.end_line.saturating_sub(1),
                column: span.end_column.saturating_sub(1),
            },
        }
    }
}

impl SgMetaVariables {
    /// No capture by name: ast-grep leaves `metaVariables` out.
    pub fn is_empty(&self) -> bool {
        self.single.is_empty() && self.multi.is_empty() && self.transformed.is_empty()
    }

    pub fn of(captures: &[crate::rewrite::Capture]) -> SgMetaVariables {
        let capture = |n: &crate::rewrite::Span| SgCapture {
            text: n.text.clone(),
            range: SgRange::of(n),
        };
        let mut out = SgMetaVariables::default();
        for c in captures {
            if c.multi {
                out.multi
                    .insert(c.name.clone(), c.nodes.iter().map(capture).collect());
            } else if let Some(n) = c.nodes.first() {
                out.single.insert(c.name.clone(), capture(n));
            }
        }
        out
    }
}

// ------------------------------------------------------------------ staging

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

// ------------------------------------------------------------------ apply, undo, discard

/// What happened to the transaction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Action {
    Applied,
    Undone,
    Discarded,
}

/// The state a preview is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum PreviewState {
    /// Staged (or undone) and not applied: `apply ID` applies it.
    Pending,
    Applied,
    Discarded,
    Expired,
}

/// `undo --session S --json`: each transaction undone, newest first.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct SessionUndoReport {
    pub schema_version: Version,
    /// The session, as the journal spells it.
    pub session: String,
    pub undone: Vec<ResolveReport>,
}

impl SessionUndoReport {
    pub fn exit(&self) -> Exit {
        if self.undone.is_empty() {
            Exit::NothingFound
        } else {
            Exit::Ok
        }
    }
}

/// `apply`, `undo`, `discard` (and `resolve`, the `resolve`/`undo` tools).
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ResolveReport {
    pub schema_version: Version,
    pub id: String,
    pub action: Action,
    /// The preview's state now: `applied` after apply, `pending` after undo (it can be
    /// applied again, by id only), `discarded` after discard.
    pub state: PreviewState,
    /// Paths written (created or replaced).
    pub written: Vec<String>,
    /// Paths deleted.
    pub deleted: Vec<String>,
    /// Paths the preview touches (for `discard`, what would have been written).
    pub files: Vec<String>,
    pub file_count: usize,
    /// Whether the index entries were updated (`--index`, `--commit`).
    pub index: bool,
    /// The commit `--commit` made.
    pub commit: Option<String>,
    pub reason: Option<String>,
    /// `undo --index`: the index entries were restored too.
    pub index_restored: bool,
    /// `undo`: paths whose index entries still hold the applied content.
    pub index_left: Vec<String>,
    /// `undo` after `apply --commit`: the commit stays in history (undo never rewrites
    /// commits).
    pub commit_kept: Option<String>,
    /// `apply ID -- PATHSPEC…` that selected part of the preview: how it was split
    /// (`id` is then the selected part's id). Absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub split: Option<SplitReport>,
    /// `apply` of a preview with review decisions: the sites applied, dropped and
    /// left pending (`split` then names the parts). Absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub review: Option<review::CutCounts>,
    /// `apply --refresh` of a stale preview: its refresh (`id` is then the successor's
    /// id, `refreshed.id` the stale preview's). Absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refreshed: Option<Box<RefreshReport>>,
    /// `apply --verify`: the check the preview passed in a worktree of its own before
    /// it was applied. Absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verified: Option<Box<crate::report::verify::VerifyReport>>,
    /// `discard`: the dropped preview's summary, for the text.
    #[serde(skip)]
    pub summary: String,
}

impl ResolveReport {
    /// The report of an apply or undo, the same from every front end. `files` is the
    /// preview's paths; `None` means the paths written and deleted, sorted.
    pub fn of(
        report: &crate::txn::ApplyReport,
        action: Action,
        files: Option<Vec<String>>,
        index: bool,
        reason: Option<String>,
    ) -> Self {
        let files = files.unwrap_or_else(|| {
            let mut touched: Vec<String> = report
                .written
                .iter()
                .chain(&report.deleted)
                .cloned()
                .collect();
            touched.sort();
            touched
        });
        ResolveReport {
            schema_version: Version,
            id: report.id.clone(),
            action,
            state: match action {
                Action::Applied => PreviewState::Applied,
                Action::Undone if report.pending_again => PreviewState::Pending,
                // An agent's own edit: nothing was staged, nothing is pending.
                Action::Undone => PreviewState::Discarded,
                Action::Discarded => PreviewState::Discarded,
            },
            written: report.written.clone(),
            deleted: report.deleted.clone(),
            file_count: files.len(),
            files,
            index,
            commit: report.commit.clone(),
            reason,
            index_restored: report.index_restored,
            index_left: report.index_left.clone(),
            commit_kept: report.commit_kept.clone(),
            split: report.split.as_ref().map(SplitReport::of),
            review: None,
            refreshed: None,
            verified: None,
            summary: String::new(),
        }
    }

    /// Apply, undo and discard exit 0; their refusals are errors.
    pub fn exit(&self) -> crate::error::Exit {
        crate::error::Exit::Ok
    }
}

/// `refresh --json`: a pending preview re-derived on the current work tree.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct RefreshReport {
    pub schema_version: Version,
    /// The preview refreshed.
    pub id: String,
    /// `refreshed`: a successor replaced it (`successor`); `current`: the work tree
    /// still holds its before side, nothing was staged.
    pub state: RefreshState,
    /// The new pending preview (the old one is `refreshed` in the journal).
    pub successor: Option<String>,
    pub kind: crate::change::PreviewKind,
    /// Total replacements (or chunks, fixes) before and now.
    pub replacements_before: usize,
    pub replacements_now: usize,
    /// The DSH rule: the same files, each with the same count.
    pub same_counts: bool,
    /// Per path of either preview, sorted.
    pub files: Vec<RefreshFile>,
    /// Paths in the old preview, not in the successor.
    pub dropped: Vec<String>,
    /// Paths in the successor, not in the old preview (`refresh --all`).
    pub newly_matching: Vec<String>,
    pub notes: Vec<String>,
}

/// What a refresh did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum RefreshState {
    Refreshed,
    Current,
}

/// One path of a refresh.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct RefreshFile {
    pub path: String,
    /// Replacements in the old preview (`null`: newly matching).
    pub before: Option<usize>,
    /// Replacements in the successor (`null`: dropped out).
    pub now: Option<usize>,
    /// `kept` (unchanged file, same blobs), `rerun`, `repatched`, `merged` (three-way)
    /// or `dropped`.
    pub how: How,
    /// Why it dropped out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
    /// The path as the text shows it (relative to the current folder); JSON carries the
    /// repository path.
    #[serde(skip)]
    pub shown: String,
}

/// How a path of the successor came about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum How {
    /// Unchanged in the work tree: the old blobs, as they were.
    Kept,
    /// The ops (or rules) ran again on the current content.
    Rerun,
    /// The recorded patch was resolved again.
    Repatched,
    /// A three-way merge of the preview's change into the current content.
    Merged,
    /// Not in the successor (see `why`).
    Dropped,
}

impl How {
    /// The words a line about the path says (`re-run`, `three-way merge`, …).
    pub fn words(self) -> &'static str {
        match self {
            How::Kept => "kept",
            How::Rerun => "re-run",
            How::Repatched => "patch resolved again",
            How::Merged => "three-way merge",
            How::Dropped => "dropped out",
        }
    }
}

impl RefreshReport {
    /// A refresh always exits 0; its refusals are errors.
    pub fn exit(&self) -> crate::error::Exit {
        crate::error::Exit::Ok
    }
}

/// How a partial apply split its preview.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct SplitReport {
    /// The preview that was split; it is no longer pending (state `split`).
    pub parent: String,
    /// The part under the pathspecs, the one applied.
    pub selected: String,
    /// The rest, pending under this id.
    pub remainder: String,
    /// The remainder's paths.
    pub remainder_files: Vec<String>,
    pub remainder_file_count: usize,
}

impl SplitReport {
    pub fn of(s: &crate::txn::SplitInfo) -> SplitReport {
        SplitReport {
            parent: s.parent.clone(),
            selected: s.selected.clone(),
            remainder: s.remainder.clone(),
            remainder_file_count: s.remainder_files.len(),
            remainder_files: s.remainder_files.clone(),
        }
    }
}

// ------------------------------------------------------------------ list, show, log

/// A stored preview in a list.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct PreviewRow {
    pub id: String,
    /// The preview commit.
    pub commit: String,
    /// When it was staged.
    pub time: String,
    pub kind: crate::change::PreviewKind,
    pub summary: String,
    pub reason: Option<String>,
    /// The agent (MCP client name/version) that staged it.
    pub agent: Option<String>,
    /// Paths it touches.
    pub files: Vec<String>,
    pub file_count: usize,
    /// The preview commit's signature as git verified it (`list`, `show`, the
    /// `previews` tool; absent where a preview is only named, as in an error's details).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub signature: Option<SignatureRow>,
    /// Whether its origin is trusted here (`made-here`, `trusted`, `signed`,
    /// `untrusted`), who vouches for it, and why not.
    #[serde(flatten)]
    pub origin: trust::Origin,
    /// What refreshing it would run (a command preview's argv and folder, recorded
    /// formatters); empty when nothing.
    pub runs: trust::Runs,
    /// What was decided on its review (`list`, `show`; absent when nothing was).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub review: Option<review::ReviewState>,
}

impl PreviewRow {
    /// The row of `p`, whose origin `ops::trust` decided and whose runs it read.
    pub fn of(p: &crate::txn::Preview, origin: trust::Origin, runs: trust::Runs) -> PreviewRow {
        let files: Vec<String> = p.entries.iter().map(|e| e.path.clone()).collect();
        PreviewRow {
            id: p.id.clone(),
            commit: p.commit.to_string(),
            time: rfc3339(p.time),
            kind: p.meta.kind,
            summary: p.meta.summary.clone(),
            reason: p.meta.reason.clone(),
            agent: p.meta.agent.clone(),
            file_count: files.len(),
            files,
            origin,
            runs,
            signature: None,
            review: None,
        }
    }
}

/// A commit's signature, as git verified it (`git verify-commit`, `%G?`).
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct SignatureRow {
    /// `good`, `bad`, `unknown-key`, `expired-key`, `revoked-key`, `not-allowed`,
    /// `unsigned` or `error`.
    pub status: crate::txn::sign::SigStatus,
    /// Who signed: the allowed signers' principal (ssh) or the key's user id (OpenPGP).
    pub signer: Option<String>,
    /// The key: `SHA256:…` (ssh) or the OpenPGP fingerprint.
    pub key: Option<String>,
    /// A good signature by a signer git's configuration allows, valid at the commit's
    /// time and not revoked (`status` is `good`).
    pub trusted: bool,
}

impl SignatureRow {
    pub fn of(check: &crate::txn::sign::SignatureCheck) -> SignatureRow {
        SignatureRow {
            status: check.status,
            signer: check.signer.clone(),
            key: check.key.clone(),
            trusted: check.trusted(),
        }
    }

    /// Whether the commit carries a signature at all (good or not).
    pub fn is_signed(&self) -> bool {
        self.check().is_signed()
    }

    /// One line for a person: `signed by NAME (ssh key SHA256:…): good`.
    pub fn describe(&self) -> String {
        self.check().describe()
    }

    fn check(&self) -> crate::txn::sign::SignatureCheck {
        crate::txn::sign::SignatureCheck {
            status: self.status,
            signer: self.signer.clone(),
            key: self.key.clone(),
        }
    }
}

impl EventRow {
    pub fn of(e: &crate::txn::Event) -> EventRow {
        EventRow {
            event: e.event,
            id: e.id.clone(),
            commit: e.commit.clone(),
            time: rfc3339(e.time),
            who: e.who.clone(),
            agent: e.agent.clone(),
            reason: e.reason.clone(),
            kind: e.kind,
            file_count: e.files.len(),
            files: e.files.clone(),
            children: e.children.clone(),
            successor: e.successor.clone(),
            op: e.op,
            action: e.action,
            made_commit: e.made_commit.clone(),
            notes: e.notes.clone(),
            tool: None,
            changes: Vec::new(),
            diff: None,
            worktree: e.worktree.clone(),
        }
    }
}

/// `list --json` and the `previews` tool's `list`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ListReport {
    pub schema_version: Version,
    /// Pending previews, newest first.
    pub previews: Vec<PreviewRow>,
    /// Refs under `refs/astedit/` that are not readable previews (skipped).
    pub unreadable_refs: Vec<UnreadableRef>,
    /// The warning lines of stderr, as text.
    pub warnings: Vec<String>,
    /// Pending previews in all (`previews` may be a page of them).
    #[serde(skip)]
    pub total: usize,
    /// Where the page starts among them.
    #[serde(skip)]
    pub offset: usize,
}

impl ListReport {
    pub fn exit(&self) -> Exit {
        Exit::Ok
    }
}

/// A ref that is not a readable preview: skipped by every command, removed by
/// `discard ID` or `gc`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct UnreadableRef {
    #[serde(rename = "ref")]
    pub name: String,
    pub why: String,
}

/// One file of a shown preview.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ShownFile {
    pub path: String,
    /// `modified`, `added` or `deleted`.
    pub status: FileStatus,
    pub before: Option<BlobRef>,
    pub after: Option<BlobRef>,
    pub added_lines: usize,
    pub removed_lines: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum FileStatus {
    Modified,
    Added,
    Deleted,
}

/// A blob and its mode.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct BlobRef {
    pub blob: String,
    pub mode: crate::change::FileMode,
}

impl BlobRef {
    pub fn of(side: Option<(gix::ObjectId, crate::change::FileMode)>) -> Option<BlobRef> {
        side.map(|(id, mode)| BlobRef {
            blob: id.to_string(),
            mode,
        })
    }
}

/// `show --json` and the `previews` tool's `show`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ShowReport {
    pub schema_version: Version,
    pub preview: PreviewRow,
    /// Everything the preview records about itself.
    pub meta: crate::change::PreviewMeta,
    pub files: Vec<ShownFile>,
    /// The diff (not with `--stat`).
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub diff: Option<CappedDiff>,
    /// The diff was streamed as text (`files` and `diff` are empty): the text of this
    /// report is the header above it.
    #[serde(skip)]
    pub streamed: bool,
}

impl ShowReport {
    pub fn exit(&self) -> Exit {
        Exit::Ok
    }
}

/// One journal event (newline-free: a text field that held one is shown escaped).
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct EventRow {
    /// `staged`, `applied`, `discarded`, `undone`, `recovered`, `expired`, …
    #[schemars(with = "String")]
    pub event: EventKind,
    pub id: String,
    /// The preview commit.
    pub commit: String,
    pub time: String,
    /// The git identity, `Name <email>`.
    pub who: String,
    pub agent: Option<String>,
    pub reason: Option<String>,
    #[schemars(with = "Option<String>")]
    pub kind: Option<crate::change::PreviewKind>,
    /// Paths touched.
    pub files: Vec<String>,
    pub file_count: usize,
    /// `split`: the previews that replaced this one, the selected part first, then
    /// the remainder.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub children: Vec<String>,
    /// `refreshed`: the preview that replaced this one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub successor: Option<String>,
    /// `recovered`: the interrupted operation (`apply`, `undo`).
    #[schemars(with = "Option<String>")]
    pub op: Option<TxnOp>,
    /// `recovered`: `completed` or `rolled-back`.
    #[schemars(with = "Option<String>")]
    pub action: Option<RecoveryAction>,
    /// `applied` with `--commit`: the commit made.
    pub made_commit: Option<String>,
    /// What else happened (e.g. `lock-broken: …`, files kept by recovery).
    pub notes: Vec<String>,
    /// With `--session` or `--patch`: the tool that made the change (an agent's own
    /// tool, `Bash`, or the preview's kind).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// With `--session` or `--patch`: each file with the lines added and removed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub changes: Vec<ShownFile>,
    /// With `--patch`: the change's diff.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub diff: Option<String>,
    /// The linked work tree it was made in (a lane's name); absent: the main tree.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worktree: Option<String>,
}

/// `log --json`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct LogReport {
    pub schema_version: Version,
    /// Newest first.
    pub events: Vec<EventRow>,
    /// Older events exist that `--max-count` (default 200) left out.
    pub capped: bool,
    /// The `--max-count` asked for (0: no limit), for the text's note on `capped`.
    #[serde(skip)]
    pub max_count: usize,
}

// ------------------------------------------------------------------ the rest

/// `gc --json`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct GcReport {
    pub schema_version: Version,
    /// Pending previews whose refs were removed.
    pub expired_previews: Vec<String>,
    /// Journal entries dropped.
    pub pruned_events: usize,
    /// Journal entries kept.
    pub kept_events: usize,
    /// Refs under `refs/astedit/` that were not readable previews, removed (each
    /// journalled as `discarded`).
    pub removed_refs: Vec<UnreadableRef>,
    /// What was pruned from the result cache (`null` with `--no-cache`).
    pub cache: Option<CachePruned>,
}

/// The result cache's pruning by `gc`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct CachePruned {
    /// Buckets and stale temporary files deleted.
    pub removed: usize,
    pub freed_bytes: u64,
    /// Buckets kept.
    pub kept: usize,
}

impl GcReport {
    pub fn exit(&self) -> Exit {
        Exit::Ok
    }
}

/// `recover --json` (`--status`, the default).
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct RecoverStatusReport {
    pub schema_version: Version,
    /// The interrupted run, `null` when there is none: `{id, op, phase, pid, running,
    /// files: [{path, state, what?, to_blob, from_blob}]}`.
    #[schemars(with = "Option<serde_json::Value>")]
    pub unfinished: Option<UnfinishedRun>,
    /// Lock files that block writers: an `index.lock` (ours, which the next command
    /// removes, or another's) and ref locks no run of ours explains.
    #[serde(default)]
    pub locks: Vec<LockStatus>,
    /// What to do about the paths left alone, when there are some (the text's hint).
    #[serde(skip)]
    pub hint: Option<&'static str>,
}

/// An interrupted apply or undo and where each of its paths stands. The fields are in
/// alphabetical order, the order the JSON has always had.
#[derive(Debug, Clone, Serialize)]
pub struct UnfinishedRun {
    pub files: Vec<RunPath>,
    pub id: String,
    pub op: TxnOp,
    /// `prepared` (will be rolled back) or `committed` (will be rolled forward).
    pub phase: crate::txn::Phase,
    pub pid: u32,
    /// The process that ran it still holds the lock (it is not interrupted, only busy).
    pub running: bool,
}

impl UnfinishedRun {
    /// Whether recovery will roll it back (it had not reached its point of no return).
    pub fn rolls_back(&self) -> bool {
        self.phase == crate::txn::Phase::Prepared
    }
}

/// One path of an interrupted run (fields in alphabetical order, as in the JSON).
#[derive(Debug, Clone, Serialize)]
pub struct RunPath {
    /// The blob it replaces (`null`: the path is new).
    pub from_blob: Option<String>,
    pub path: String,
    /// `done` (holds what the run writes), `waiting` (holds what it replaces: it will be
    /// written), `untouched` (the same, in a run that will be rolled back), `changed`
    /// (holds neither: left alone), `refused` (a folder on its way is a symlink or not a
    /// folder: left alone).
    pub state: crate::txn::PathState,
    /// The blob the run writes there (`null`: it removes the path).
    pub to_blob: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub what: Option<String>,
}

/// A lock file `recover --status` found.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct LockStatus {
    pub path: String,
    /// Whose it is and what clears it.
    pub what: String,
}

/// `recover --finish --json`, `recover --abandon --json`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct RecoverReport {
    pub schema_version: Version,
    pub id: String,
    /// `apply` or `undo`.
    #[schemars(with = "String")]
    pub op: TxnOp,
    /// `completed`, `rolled-back`, `partial` or `abandoned`.
    #[schemars(with = "String")]
    pub action: RecoveryAction,
    /// Paths left alone: `[{path, what}]`.
    #[schemars(with = "Vec<serde_json::Value>")]
    pub unresolved: Vec<UnresolvedPath>,
    pub notes: Vec<String>,
    pub message: String,
}

/// A path recovery left alone, and why.
#[derive(Debug, Clone, Serialize)]
pub struct UnresolvedPath {
    pub path: String,
    pub what: String,
}

/// `recover --json`: the status, or what `--finish`/`--abandon` did.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum RecoverOutput {
    Status(RecoverStatusReport),
    Done(RecoverReport),
}

impl RecoverOutput {
    /// A run still unfinished after `--finish` or `--abandon` is stale (3).
    pub fn exit(&self) -> Exit {
        match self {
            RecoverOutput::Done(r) if !r.unresolved.is_empty() => Exit::Stale,
            _ => Exit::Ok,
        }
    }
}

/// `pr --json`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct PrReport {
    pub schema_version: Version,
    pub id: String,
    /// `applied` or `pending`.
    pub state: PreviewState,
    pub branch: String,
    pub commit: String,
    pub remote: String,
    pub url: String,
    /// Whether this run opened it (else it existed).
    pub created: bool,
    pub draft: bool,
}

impl PrReport {
    /// `pr` exits 0 when the pull request exists; its refusals are errors.
    pub fn exit(&self) -> crate::error::Exit {
        crate::error::Exit::Ok
    }
}
