/*!
The AST engine: patterns compiled once per language, a literal prefilter, matches, and
rewrites that also rewrite nested matches (DESIGN §4).

[`Query`] serves `grep`; [`Rewriter`] serves `edit`. Both compile their patterns once
per language and check the pattern's literals before parsing a file ([`Prefilter`]:
[`Query::may_match`] for the caller, [`Rewriter`] per op), because parsing is the
expensive step and most files of a tree cannot match. The nested-rewrite routine,
[`rewrite_nested`], is generic over matcher and edit so that `scan` reuses it with rule
matchers and fixers.
*/

mod anchor;
pub mod imports;
mod indent;
mod layout;
mod list;
mod nested;
mod pattern;
mod prefilter;
mod query;
mod rewriter;
#[cfg(test)]
mod tests;
mod tree;
mod walk;

pub use anchor::Anchor;
pub use imports::ImportConflict;
pub use layout::layout_key;
pub use layout::same_but_layout;
pub use prefilter::Prefilter;

use crate::error::Classify;
use crate::error::Exit;

pub use nested::rewrite_nested;
pub use nested::rewrite_nested_selecting;
pub use nested::rewrite_nested_with;
pub use nested::LostSite;
pub use nested::Nested;
pub use nested::Options as NestedOptions;
pub use nested::Overlap;
pub use nested::Proposed;
pub use nested::SiteChange;
pub use nested::DEFAULT_MAX_DEPTH;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("invalid pattern '{pattern}': {detail}")]
    InvalidPattern { pattern: String, detail: String },
    /// The pattern is not code in this language: skip the language's files.
    #[error("{}", not_code_message(pattern, lang, *why))]
    PatternDoesNotParse {
        pattern: String,
        lang: String,
        why: NotCode,
    },
    #[error("rewrite '{template}' uses ${var}, which pattern '{pattern}' does not define")]
    UndefinedMetavariable {
        pattern: String,
        template: String,
        var: String,
    },
    /// Two matches share text without one containing the other, so no order of
    /// rewriting them is right.
    #[error(
        "matches at {first_line}:{first_column} and {second_line}:{second_column} overlap without nesting"
    )]
    OverlappingMatches {
        first_line: usize,
        first_column: usize,
        second_line: usize,
        second_column: usize,
    },
    /// Matches nest deeper than the limit; each level costs a re-parse.
    #[error("matches nest {depth} deep at {line}:{column}, more than the limit of {limit}")]
    NestingTooDeep {
        line: usize,
        column: usize,
        depth: usize,
        limit: usize,
    },
    /// The rewritten text would pass [`NestedOptions::max_len`].
    #[error("the rewrite would make the file longer than {limit} bytes")]
    OutputTooLarge { limit: usize },
    /// An import to add (`--add-import`, `imports.add`) is no import of the language.
    #[error("import '{stmt}' cannot be added: {detail}")]
    BadImport { stmt: String, detail: String },
    /// tree-sitter returned no tree (it only does so when cancelled or misconfigured).
    #[error("the parser failed: {detail}")]
    Parse { detail: String },
}

impl Classify for Error {
    fn code(&self) -> &'static str {
        match self {
            Error::InvalidPattern { .. } => "bad-pattern",
            Error::PatternDoesNotParse { .. } => "pattern-does-not-parse",
            Error::UndefinedMetavariable { .. } => "undefined-metavariable",
            Error::OverlappingMatches { .. } => "overlapping-matches",
            Error::NestingTooDeep { .. } => "nesting-too-deep",
            Error::OutputTooLarge { .. } => "rewrite-too-large",
            Error::BadImport { .. } => "bad-import",
            Error::Parse { .. } => "internal",
        }
    }
    fn exit(&self) -> Exit {
        match self {
            Error::Parse { .. } => Exit::Internal,
            _ => Exit::BadInput,
        }
    }
    fn hint(&self) -> Option<String> {
        match self {
            Error::OverlappingMatches { .. } => {
                Some("narrow the pattern so that its matches nest or stay apart".to_string())
            }
            Error::NestingTooDeep { .. } => {
                Some("rewrite the outer matches first with a narrower pattern".to_string())
            }
            Error::OutputTooLarge { .. } => Some(
                "fixes that match each other's output grow the file at every pass: narrow \
                 one of the rules (e.g. `not: { inside: … }` the other fix's shape), \
                 or stop after one with --max-passes 1"
                    .to_string(),
            ),
            Error::BadImport { .. } => Some(
                "write the import as a statement of that language, e.g. \
                 `import { logger } from \"./log\"`, `from m import a`, `use a::b::C;`"
                    .to_string(),
            ),
            _ => None,
        }
    }
}

/// Why a pattern is not a pattern in some language.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NotCode {
    /// It parses with errors there.
    ParseErrors,
    /// It has metavariables, and none of them is one in that language's parse (a
    /// code pattern read as Markdown or YAML text).
    MetavariablesLost,
    /// It is read as plain text (a Markdown paragraph, an HTML text node, a YAML
    /// scalar), which would match as a literal string only.
    Text,
    /// With `--selector` and no language asked for: the pattern, parsed in this
    /// language, has no node of that kind (ast-grep skips the language too).
    NoSelectedNode,
}

fn not_code_message(pattern: &str, lang: &str, why: NotCode) -> String {
    match why {
        NotCode::ParseErrors => format!("pattern '{pattern}' does not parse as {lang}"),
        NotCode::MetavariablesLost => format!(
            "pattern '{pattern}' is only text in {lang}: its metavariables are not metavariables there"
        ),
        NotCode::Text => format!("pattern '{pattern}' is only text in {lang}, not code"),
        NotCode::NoSelectedNode => {
            format!("pattern '{pattern}' has no node of the --selector kind in {lang}")
        }
    }
}

/// One warning for every language skipped because the pattern is not code there:
/// `skipped` holds (language, reason) pairs as [`Error::PatternDoesNotParse`] words
/// them; languages with the same reason are named together.
pub fn skipped_languages_note(skipped: &[(String, String)]) -> Option<String> {
    // Group by the reason with its language taken out (the language is named last,
    // after the pattern, so the last occurrence is the one to take out).
    let mut groups: Vec<(String, String, Vec<&str>)> = Vec::new();
    for (lang, reason) in skipped {
        let (head, tail) = match reason.rfind(lang.as_str()) {
            Some(at) => (&reason[..at], &reason[at + lang.len()..]),
            None => (reason.as_str(), ""),
        };
        match groups.iter_mut().find(|(h, t, _)| h == head && t == tail) {
            Some((_, _, langs)) => langs.push(lang),
            None => groups.push((head.to_string(), tail.to_string(), vec![lang])),
        }
    }
    if groups.is_empty() {
        return None;
    }
    let parts: Vec<String> = groups
        .iter()
        .map(|(head, tail, langs)| format!("{head}{}{tail}", join_and(langs)))
        .collect();
    Some(format!("{}; skipping those files", parts.join("; ")))
}

/// `A`, `A and B`, `A, B and C`.
fn join_and(items: &[&str]) -> String {
    match items {
        [] => String::new(),
        [one] => (*one).to_string(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

/// One match, positions 1-based (column in characters).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Match {
    pub line: usize,
    pub column: usize,
    pub end_line: usize,
    pub end_column: usize,
    /// Byte range in the source.
    pub start_byte: usize,
    pub end_byte: usize,
    /// The matched text.
    pub text: String,
    /// Metavariable captures (with [`MatchText::WithCaptures`] only), by name.
    pub captures: Vec<Capture>,
    /// Where what a rewrite replaces ends, when that is before the match's end: the
    /// matched node goes on past the last part the pattern covers (`raise $E, $M` on
    /// `raise A, "m", bt`), and a rewrite keeps that rest. Not worked out with
    /// [`MatchText::FirstLine`] (the text printers do not show it).
    pub replaced_end: Option<Position>,
    /// What ast-grep's `run --rewrite` would write for this match (its
    /// `replacement` and `replacementOffsets`), when the search was given a rewrite.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replacement: Option<Replaced>,
}

/// A match's replacement as ast-grep computes it: the fix's text and the byte range it
/// replaces.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Replaced {
    pub text: String,
    pub start_byte: usize,
    pub end_byte: usize,
}

/// A position in a source: byte offset, 1-based line and character column.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Position {
    pub byte: usize,
    pub line: usize,
    pub column: usize,
}

/// What one metavariable captured: one node (`$A`) or a sequence (`$$$ARGS`).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Capture {
    /// The name without `$`.
    pub name: String,
    pub multi: bool,
    /// The captured nodes (one for `$A`; any number for `$$$ARGS`).
    pub nodes: Vec<Span>,
}

/// A piece of source: byte range, 1-based line/column (columns in characters), text.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Span {
    pub start_byte: usize,
    pub end_byte: usize,
    pub line: usize,
    pub column: usize,
    pub end_line: usize,
    pub end_column: usize,
    pub text: String,
}

/// Where an embedded region starts in its host file (a `<script>` block in HTML): to
/// move positions found in the region's own text to the host's.
#[derive(Debug, Clone, Copy)]
pub struct HostBase {
    /// Byte offset, 1-based line and character column of the region's start.
    pub byte: usize,
    pub line: usize,
    pub column: usize,
}

impl HostBase {
    pub fn of(text: &str, at: usize) -> HostBase {
        let before = &text[..at];
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        HostBase {
            byte: at,
            line: memchr::memchr_iter(b'\n', before.as_bytes()).count() + 1,
            column: before[line_start..].chars().count() + 1,
        }
    }

    /// A (line, column) of the region as the host's.
    pub fn pos(&self, line: usize, column: usize) -> (usize, usize) {
        if line == 1 {
            (self.line, column + self.column - 1)
        } else {
            (line + self.line - 1, column)
        }
    }

    pub fn shift_match(&self, mut m: Match) -> Match {
        (m.line, m.column) = self.pos(m.line, m.column);
        (m.end_line, m.end_column) = self.pos(m.end_line, m.end_column);
        m.start_byte += self.byte;
        m.end_byte += self.byte;
        for c in &mut m.captures {
            for n in &mut c.nodes {
                (n.line, n.column) = self.pos(n.line, n.column);
                (n.end_line, n.end_column) = self.pos(n.end_line, n.end_column);
                n.start_byte += self.byte;
                n.end_byte += self.byte;
            }
        }
        if let Some(p) = &mut m.replaced_end {
            (p.line, p.column) = self.pos(p.line, p.column);
            p.byte += self.byte;
        }
        if let Some(r) = &mut m.replacement {
            r.start_byte += self.byte;
            r.end_byte += self.byte;
        }
        m
    }
}

/// The result of searching one file.
#[derive(Debug, Clone, Default)]
pub struct FileMatches {
    pub matches: Vec<Match>,
    /// The file parsed with errors (it was still searched).
    pub has_parse_error: bool,
    /// Where the first error is, when there is one.
    pub first_parse_error: Option<ErrorAt>,
    /// The matches' kept text passed [`MAX_MATCH_TEXT`]: `matches` stops there.
    pub text_too_large: bool,
}

/// The most text (bytes of match and capture text) one file's matches may keep. Nested
/// matches each hold their own copy of everything inside them: a one-line file of
/// 200 KB nested 100,000 deep under `[$A]` would keep about 10 GB. No person or agent
/// reads 64 MiB of one file's matches.
pub const MAX_MATCH_TEXT: usize = 64 << 20;

/// Where a parse error is: the first ERROR or missing node, 1-based, column in
/// characters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ErrorAt {
    pub line: usize,
    pub column: usize,
}

pub use crate::levels::Strictness;

pub use pattern::metavariable_names;
pub use query::debug_tree;
pub use query::MatchText;
pub use query::NoMissing;
pub use query::Query;
pub use query::QueryOptions;
pub use query::TreeFormat;
pub use rewriter::blank_lines_kept;
pub use rewriter::empty_blocks;
pub use rewriter::list_aware;
pub use rewriter::tab_indented;
pub use rewriter::Dropped;
pub use rewriter::FileRewrite;
pub use rewriter::Op;
pub use rewriter::Replacement;
pub use rewriter::Rewriter;
pub use tree::first_parse_error;
pub use tree::has_parse_error;
pub use tree::parse;
pub use tree::parse_doc;
pub use tree::parse_error_count;
pub use tree::parse_owned;
pub use tree::parse_owned_fresh;
pub use tree::parse_owned_from;
pub use tree::LineIndex;
pub fn uses_crlf(text: &str) -> bool {
    memchr::memchr(b'\n', text.as_bytes()).is_some_and(|i| i > 0 && text.as_bytes()[i - 1] == b'\r')
}

/// Turns every `\n` not already preceded by `\r` into `\r\n`.
pub fn lf_to_crlf(text: Vec<u8>) -> Vec<u8> {
    if !text.contains(&b'\n') {
        return text;
    }
    let mut out = Vec::with_capacity(text.len() + text.len() / 16);
    for (i, &b) in text.iter().enumerate() {
        if b == b'\n' && (i == 0 || text[i - 1] != b'\r') {
            out.push(b'\r');
        }
        out.push(b);
    }
    out
}
