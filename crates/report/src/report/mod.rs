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

mod list;
mod recover;
mod resolve;
mod search;
mod stage;

pub use list::BlobRef;
pub use list::EventRow;
pub use list::FileStatus;
pub use list::ListReport;
pub use list::LogReport;
pub use list::PreviewRow;
pub use list::ShowReport;
pub use list::ShownFile;
pub use list::SignatureRow;
pub use list::UnreadableRef;
pub use recover::CachePruned;
pub use recover::GcReport;
pub use recover::LockStatus;
pub use recover::RecoverOutput;
pub use recover::RecoverReport;
pub use recover::RecoverStatusReport;
pub use recover::RunPath;
pub use recover::UnfinishedRun;
pub use recover::UnresolvedPath;
pub use resolve::Action;
pub use resolve::How;
pub use resolve::PrReport;
pub use resolve::PreviewState;
pub use resolve::RefreshFile;
pub use resolve::RefreshReport;
pub use resolve::RefreshState;
pub use resolve::ResolveReport;
pub use resolve::SessionUndoReport;
pub use resolve::SplitReport;
pub use search::ContextLine;
pub use search::GrepMatch;
pub use search::GrepReport;
pub use search::LineRange;
pub use search::MetaVariables;
pub use search::ReadReport;
pub use search::SgCapture;
pub use search::SgCharCount;
pub use search::SgMatch;
pub use search::SgMetaVariables;
pub use search::SgOffsets;
pub use search::SgPosition;
pub use search::SgRange;
pub use stage::CappedDiff;
pub use stage::Dropped;
pub use stage::Replacement;
pub use stage::StageReport;
pub use stage::StageText;
pub use stage::StagedFile;
pub use stage::StepRow;

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
