//! What a search returns: `grep --json` and the `ast_grep` tool, the `read` tool, and
//! `grep --json=stream` in ast-grep's shape.

use schemars::JsonSchema;
use serde::Serialize;

use super::Diagnostics;
use super::Span;
use super::Version;

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
