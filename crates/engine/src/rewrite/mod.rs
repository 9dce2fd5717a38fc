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
mod prefilter;
#[cfg(test)]
mod tests;
mod walk;

use std::cell::Cell;

use crate::lang::Lang;
use ast_grep_core::matcher::PatternNode;
use ast_grep_core::replacer::TemplateFix;
use ast_grep_core::source::Edit;
use ast_grep_core::tree_sitter::LanguageExt;
use ast_grep_core::tree_sitter::StrDoc;
use ast_grep_core::AstGrep;
use ast_grep_core::Language;
use ast_grep_core::Matcher;
use ast_grep_core::NodeMatch;
use ast_grep_core::Pattern;
use ast_grep_core::PatternError;

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

/// ast-grep's strictness for ours (a function, not a `From`: `Strictness` lives in the
/// base crate and `MatchStrictness` in ast-grep's, so neither crate may implement it here).
fn match_strictness(s: Strictness) -> ast_grep_core::MatchStrictness {
    use ast_grep_core::MatchStrictness as M;
    match s {
        Strictness::Cst => M::Cst,
        Strictness::Smart => M::Smart,
        Strictness::Ast => M::Ast,
        Strictness::Relaxed => M::Relaxed,
        Strictness::Signature => M::Signature,
        Strictness::Template => M::Template,
    }
}

/// How a search pattern is read besides its text (ast-grep's pattern object).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct QueryOptions {
    /// The node kind inside the pattern that is the actual pattern (`--selector`).
    pub selector: Option<String>,
    pub strictness: Option<Strictness>,
    /// A rewrite template: each match then carries ast-grep's replacement
    /// ([`Match::replacement`]).
    pub rewrite: Option<String>,
}

/// How [`debug_tree`] prints a pattern's parse.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TreeFormat {
    /// Named nodes, with field names and positions.
    Ast,
    /// Every node, named or not.
    Cst,
    /// tree-sitter's S-expression.
    Sexp,
}

/// The parse of `pattern` in `lang` as ast-grep's `--debug-query` prints it:
/// `kind (row,col)-(row,col)` a line, indented by depth (0-based rows, byte columns).
pub fn debug_tree(pattern: &str, lang: Lang, format: TreeFormat) -> Result<String, Error> {
    let processed = lang.pre_process_pattern(pattern);
    let root = parse(&processed, lang)?;
    let node = root.root().get_inner_node();
    if format == TreeFormat::Sexp {
        return Ok(node.to_sexp() + "\n");
    }
    let mut out = String::new();
    let mut cursor = node.walk();
    let mut depth = 0usize;
    loop {
        let n = cursor.node();
        if format == TreeFormat::Cst || n.is_named() {
            let (s, e) = (n.start_position(), n.end_position());
            let field = cursor
                .field_name()
                .map(|f| format!("{f}: "))
                .unwrap_or_default();
            let kind = n.kind();
            out.push_str(&format!(
                "{}{field}{kind} ({},{})-({},{})\n",
                "  ".repeat(depth),
                s.row,
                s.column,
                e.row,
                e.column
            ));
        }
        if cursor.goto_first_child() {
            depth += 1;
            continue;
        }
        loop {
            if cursor.goto_next_sibling() {
                break;
            }
            if !cursor.goto_parent() {
                return Ok(out);
            }
            depth -= 1;
        }
    }
}

/// A search pattern compiled for one language.
pub struct Query {
    pattern: Pattern,
    lang: Lang,
    prefilter: Prefilter,
    anchor: Option<Anchor>,
    fix: Option<TemplateFix>,
    /// Whether [`walk::find_shaped`] can find its matches when nothing reads their
    /// captures.
    shaped: bool,
}

impl Query {
    /// Compiles `pattern` for `lang`, chosen by file extension. `PatternDoesNotParse`
    /// means: skip this language.
    pub fn new(pattern: &str, lang: Lang) -> Result<Query, Error> {
        Query::for_language(pattern, lang, None)
    }

    /// Compiles `pattern` for `lang`, where `forced` is the language the user forced
    /// (`-l`), if any: a pattern that is only text is accepted in a forced language
    /// (the user asked for it), and skipped in one chosen by file extension.
    pub fn for_language(pattern: &str, lang: Lang, forced: Option<Lang>) -> Result<Query, Error> {
        Query::with_options(pattern, lang, forced, &QueryOptions::default())
    }

    /// [`Query::for_language`] with ast-grep's `--selector` and `--strictness`.
    pub fn with_options(
        pattern: &str,
        lang: Lang,
        forced: Option<Lang>,
        options: &QueryOptions,
    ) -> Result<Query, Error> {
        let compiled = match &options.selector {
            None => compile(pattern, lang, forced == Some(lang))?,
            Some(selector) => selected(pattern, selector, lang, forced)?,
        };
        let strictness = options.strictness.unwrap_or(Strictness::Smart);
        let compiled = compiled.with_strictness(match_strictness(strictness));
        // The literal checks assume ast-grep's default comparison (smart: every named
        // token's text); another strictness may match without those texts.
        let (prefilter, anchor) = if strictness == Strictness::Smart {
            (
                Prefilter::new(pattern, &compiled, lang),
                Anchor::of(&compiled, &lang),
            )
        } else {
            (Prefilter::none(), None)
        };
        let fix =
            match &options.rewrite {
                None => None,
                Some(template) => Some(TemplateFix::try_new(template, &lang).map_err(|e| {
                    Error::InvalidPattern {
                        pattern: template.clone(),
                        detail: e.to_string(),
                    }
                })?),
            };
        Ok(Query {
            shaped: walk::shaped(&compiled),
            pattern: compiled,
            lang,
            prefilter,
            anchor,
            fix,
        })
    }

    /// Text every match contains; a file without it cannot match.
    pub fn literal(&self) -> Option<&str> {
        self.prefilter.literal()
    }

    /// False only when `src` cannot contain a match (see [`Prefilter`]): callers check
    /// this before [`Query::find`] to skip the parse.
    pub fn may_match(&self, src: &str) -> bool {
        self.prefilter.may_match(src)
    }

    /// Every match in `src`, in document order (nested ones included).
    pub fn find(&self, src: &str) -> FileMatches {
        let mut found = self.find_in(parse(src, self.lang), MatchText::Full);
        fill_texts(&mut found.matches, src);
        found
    }

    /// Like [`Query::find`], taking the text by value so that the tree's document owns
    /// it without a copy (a large file's text is then held once, not twice), and
    /// keeping as much of each match's text as `text` says.
    ///
    /// The tree lives in a [`ParseArena`](crate::alloc::ParseArena) and is freed with
    /// it, whole (when tree-sitter allocates with mimalloc, as in the binary).
    ///
    /// Whole match texts and captures are copied out of the text only after the tree
    /// is gone: for `$F($$$A)` on a 345 kB sympy test file they are 14 MB beside a
    /// 27 MB tree (nested calls copy the same text at every level), and `grep --json`
    /// peaked there. That needs one more copy of the file's text (not the tree's).
    pub fn find_owned(&self, src: String, text: MatchText) -> FileMatches {
        let copy = (text != MatchText::FirstLine).then(|| src.clone());
        // SAFETY: inside the arena tree-sitter only sees a fresh parser (dropped inside
        // `parse_owned_fresh`), the tree it makes (pinned, then dropped by `find_in`)
        // and `find_in`'s cursors (dropped there); `FileMatches` is plain Rust data.
        let arena = unsafe { crate::alloc::ParseArena::open() };
        let parsed = if arena.is_active() {
            parse_owned_fresh(src, self.lang)
        } else {
            parse_owned(src, self.lang)
        };
        if let Ok(doc) = &parsed {
            arena.pin(&doc.tree);
        }
        let mut found = self.find_in(parsed.map(AstGrep::doc), text);
        drop(arena);
        if let Some(src) = copy {
            // A large tree's pages go back to the OS before the texts take theirs:
            // freed, they stay with mimalloc, which the texts (Rust's) do not use.
            if src.len() >= RELEASE_TREE_ABOVE {
                crate::alloc::release_freed_memory();
            }
            fill_texts(&mut found.matches, &src);
        }
        found
    }

    fn find_in(
        &self,
        parsed: Result<AstGrep<StrDoc<Lang>>, Error>,
        keep: MatchText,
    ) -> FileMatches {
        let Ok(root) = parsed else {
            // No tree at all: report it as a parse error rather than inventing matches.
            return FileMatches {
                matches: Vec::new(),
                has_parse_error: true,
                first_parse_error: None,
                text_too_large: false,
            };
        };
        let src = root.source();
        // Matches come in document order, so the index counts columns incrementally.
        let index = LineIndex::new(src);
        let top = root.root();
        // A MISSING node is an error (`has_error` counts it), so in a tree without
        // errors the plain pattern finds what `NoMissing` would, without looking for
        // one in every match (a sixth of the matching work on a call pattern).
        let has_errors = top.get_inner_node().has_error();
        let guarded = NoMissing(&self.pattern);
        // Without captures or a rewrite to make, nothing reads a match's environment.
        let bare = self.shaped && keep != MatchText::WithCaptures && self.fix.is_none();
        let found: Box<dyn Iterator<Item = Hit<'_>>> = match (&self.anchor, has_errors) {
            (Some(anchor), true) => Box::new(
                anchor
                    .find_all(&root, &guarded)
                    .into_iter()
                    .map(Hit::Matched),
            ),
            (Some(anchor), false) => Box::new(
                anchor
                    .find_all(&root, &self.pattern)
                    .into_iter()
                    .map(Hit::Matched),
            ),
            (None, true) => Box::new(walk::find_all(&root, &guarded).map(Hit::Matched)),
            (None, false) if bare => {
                Box::new(walk::find_shaped(&root, &self.pattern).map(Hit::Node))
            }
            (None, false) => Box::new(walk::find_all(&root, &self.pattern).map(Hit::Matched)),
        };
        let mut kept = 0usize;
        let mut text_too_large = false;
        let matches = found
            .map_while(|hit| {
                let m = hit.node();
                let range = m.range();
                let (line, column) = index.line_col(range.start);
                let matched = src.get(range.clone()).unwrap_or_default();
                // The end from the text, not from the index's incremental count: outer
                // matches end after inner ones, so ends would defeat it. The node knows
                // its end row, so only the match's last line is counted (not the whole
                // text of a call nested in a hundred lines, at every level of nesting).
                let end_row = m.get_inner_node().end_position().row;
                let (end_line, end_column) = match index.line_start(end_row) {
                    Some(start) if end_row + 1 > line && start <= range.end => (
                        end_row + 1,
                        src.get(start..range.end)
                            .map_or(range.end - start, |s| s.chars().count())
                            + 1,
                    ),
                    _ => (line, column + matched.chars().count()),
                };
                // Copying only what is shown: nested matches would copy the same text
                // again at every level. Whole texts are copied by `fill_texts`, once
                // the tree is gone.
                let text = match keep {
                    MatchText::Full | MatchText::WithCaptures => String::new(),
                    MatchText::FirstLine => matched
                        .split('\n')
                        .next()
                        .unwrap_or_default()
                        .trim_end_matches('\r')
                        .to_string(),
                };
                // What a rewrite would replace: up to the last node the pattern covers.
                // Only JSON shows it, and finding it matches the pattern once more (a
                // fifth of the work above the parse on `$F($$$A)`): a first line's
                // printer goes without.
                let replaced_end = (keep != MatchText::FirstLine)
                    .then(|| self.pattern.get_match_len(m.clone()))
                    .flatten()
                    .filter(|&len| len < matched.len())
                    .and_then(|len| matched.get(..len))
                    .map(|covered| {
                        let (line, column) = match covered.rfind('\n') {
                            Some(nl) => (
                                line + memchr::memchr_iter(b'\n', covered.as_bytes()).count(),
                                covered[nl + 1..].chars().count() + 1,
                            ),
                            None => (line, column + covered.chars().count()),
                        };
                        Position {
                            byte: range.start + covered.len(),
                            line,
                            column,
                        }
                    });
                let captures = match &hit {
                    Hit::Matched(m) if keep == MatchText::WithCaptures => captures_of(m),
                    _ => Vec::new(),
                };
                let whole = match keep {
                    MatchText::FirstLine => text.len(),
                    MatchText::Full | MatchText::WithCaptures => matched.len(),
                };
                kept = kept.saturating_add(whole).saturating_add(
                    captures
                        .iter()
                        .flat_map(|c| &c.nodes)
                        .map(|n| n.end_byte - n.start_byte)
                        .sum(),
                );
                if kept > MAX_MATCH_TEXT {
                    text_too_large = true;
                    return None;
                }
                let replacement = self.fix.as_ref().zip(hit.matched()).map(|(fix, m)| {
                    let edit = m.make_edit(&self.pattern, fix);
                    Replaced {
                        text: String::from_utf8_lossy(&edit.inserted_text).into_owned(),
                        start_byte: edit.position,
                        end_byte: edit.position + edit.deleted_length,
                    }
                });
                Some(Match {
                    line,
                    column,
                    end_line,
                    end_column,
                    start_byte: range.start,
                    end_byte: range.end,
                    text,
                    captures,
                    replaced_end,
                    replacement,
                })
            })
            .collect();
        FileMatches {
            matches,
            has_parse_error: has_parse_error(&root),
            first_parse_error: first_parse_error(&root),
            text_too_large,
        }
    }
}

/// A match as a search finds it: with its metavariable environment, or the node alone
/// where nothing reads one ([`walk::find_shaped`]).
enum Hit<'r> {
    Matched(NodeMatch<'r, StrDoc<Lang>>),
    Node(ast_grep_core::Node<'r, StrDoc<Lang>>),
}

impl<'r> Hit<'r> {
    fn node(&self) -> &ast_grep_core::Node<'r, StrDoc<Lang>> {
        match self {
            Hit::Matched(m) => m.get_node(),
            Hit::Node(node) => node,
        }
    }

    fn matched(&self) -> Option<&NodeMatch<'r, StrDoc<Lang>>> {
        match self {
            Hit::Matched(m) => Some(m),
            Hit::Node(_) => None,
        }
    }
}

/// A file this large (its tree ~70 times that) hands its tree's memory back as soon
/// as the tree is gone, when whole match texts are copied out after it.
const RELEASE_TREE_ABOVE: usize = 256 * 1024;

/// Copies each match's text and its captures' texts out of `src`, the text they were
/// found in, where [`Query::find_in`] left them empty (whole texts only: a first line
/// is copied at once).
fn fill_texts(matches: &mut [Match], src: &str) {
    let text = |start: usize, end: usize| src.get(start..end).unwrap_or_default().to_string();
    for m in matches {
        if m.text.is_empty() {
            m.text = text(m.start_byte, m.end_byte);
        }
        for node in m.captures.iter_mut().flat_map(|c| &mut c.nodes) {
            node.text = text(node.start_byte, node.end_byte);
        }
    }
}

/// The captures of one match, sorted by name, without their texts ([`fill_texts`]
/// copies them). Positions are computed from the node (captures are few, so no line
/// index is needed).
fn captures_of(m: &ast_grep_core::NodeMatch<'_, StrDoc<Lang>>) -> Vec<Capture> {
    use ast_grep_core::meta_var::MetaVariable;
    let env = m.get_env();
    let span = |n: &ast_grep_core::Node<'_, StrDoc<Lang>>| {
        let r = n.range();
        let (start, end) = (n.start_pos(), n.end_pos());
        let text = String::new();
        Span {
            start_byte: r.start,
            end_byte: r.end,
            line: start.line() + 1,
            column: start.column(n) + 1,
            end_line: end.line() + 1,
            end_column: end.column(n) + 1,
            text,
        }
    };
    let mut out: Vec<Capture> = env
        .get_matched_variables()
        .filter_map(|v| match v {
            MetaVariable::Capture(name, _) => {
                let node = env.get_match(&name)?;
                Some(Capture {
                    name,
                    multi: false,
                    nodes: vec![span(node)],
                })
            }
            MetaVariable::MultiCapture(name) => {
                let nodes = env.get_multiple_matches(&name);
                Some(Capture {
                    nodes: nodes.iter().map(span).collect(),
                    name,
                    multi: true,
                })
            }
            _ => None,
        })
        .collect();
    out.sort_by(|a, b| a.name.cmp(&b.name));
    out.dedup_by(|a, b| a.name == b.name);
    out
}

/// A pattern that never matches a MISSING node: a zero-width token the parser made up
/// to recover from an error (the `)` of `foo(x;`, the `?.` of a broken member
/// expression). ast-grep compares anonymous tokens by kind only, so without this
/// `foo($A)` matches `foo(x` and `$A?.$B` matches code with no `?.`. A MISSING node
/// inside a metavariable's capture is the capture's business and is allowed.
pub struct NoMissing<'p>(pub &'p Pattern);

impl Matcher for NoMissing<'_> {
    fn match_node_with_env<'tree, D: ast_grep_core::Doc>(
        &self,
        node: ast_grep_core::Node<'tree, D>,
        env: &mut std::borrow::Cow<ast_grep_core::meta_var::MetaVarEnv<'tree, D>>,
    ) -> Option<ast_grep_core::Node<'tree, D>> {
        // The environment is only written when the match is kept.
        let mut candidate = std::borrow::Cow::Borrowed(env.as_ref());
        let matched = self.0.match_node_with_env(node, &mut candidate)?;
        if compares_missing(&self.0.node, &matched) {
            return None;
        }
        if let std::borrow::Cow::Owned(map) = candidate {
            *env = std::borrow::Cow::Owned(map);
        }
        Some(matched)
    }

    fn potential_kinds(&self) -> Option<bit_set::BitSet> {
        self.0.potential_kinds()
    }

    fn get_match_len<D: ast_grep_core::Doc>(
        &self,
        node: ast_grep_core::Node<'_, D>,
    ) -> Option<usize> {
        self.0.get_match_len(node)
    }
}

/// Whether the pattern `goal` compares one of its own tokens with a MISSING node of
/// `candidate` (the node it matched). The two trees are walked together: a
/// metavariable's part (`$A`, `$_`, `$$$`, captured or not) is not entered, and a part
/// of the candidate the pattern does not cover (a trailing `else`) is never reached, so
/// only tokens the pattern itself compares count. A goal child is paired with the next
/// candidate child of its kind; where none is found the walk stops there (an
/// error-root pattern, whose kind matches anything, is not looked into).
fn compares_missing<D: ast_grep_core::Doc>(
    goal: &ast_grep_core::matcher::PatternNode,
    candidate: &ast_grep_core::Node<'_, D>,
) -> bool {
    use ast_grep_core::matcher::PatternNode;
    match goal {
        PatternNode::MetaVar { .. } => false,
        PatternNode::Terminal { .. } => candidate.is_missing(),
        PatternNode::Internal { children, .. } => {
            if candidate.is_missing() {
                return true;
            }
            let kids: Vec<_> = candidate.children().collect();
            let mut next = 0;
            for g in children {
                let kind = match g {
                    PatternNode::MetaVar { .. } => continue,
                    PatternNode::Terminal { kind_id, .. }
                    | PatternNode::Internal { kind_id, .. } => *kind_id,
                };
                let Some(at) = (next..kids.len()).find(|&k| kids[k].kind_id() == kind) else {
                    return false;
                };
                if compares_missing(g, &kids[at]) {
                    return true;
                }
                next = at + 1;
            }
            false
        }
    }
}

/// How much of a match's text [`Query::find_owned`] keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MatchText {
    Full,
    /// The full text and the metavariable captures.
    WithCaptures,
    /// Only the first line (a multi-line match has `end_line > line`).
    FirstLine,
}

/// One rewrite op as the user typed it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Op {
    pub pattern: String,
    pub rewrite: String,
    /// The node kind inside the pattern that is the actual pattern (`edit --selector`,
    /// ast-grep's `selector`): the pattern is parsed as written and the node of that
    /// kind in it is what matches.
    pub selector: Option<String>,
}

/// One replacement, positions 1-based in the text the op ran on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Replacement {
    pub op: usize,
    /// Byte offset of `before` in the text the op ran on.
    pub start: usize,
    pub line: usize,
    pub column: usize,
    pub before: String,
    pub after: String,
    /// The node's text past the match that the pattern does not cover and the
    /// replacement repeats (it stays after it, so the result holds it twice).
    pub repeated_kept: Option<String>,
}

/// A match that stopped matching once the matches nested in it were rewritten, so it
/// was left as they made it. Positions 1-based in the text the op ran on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dropped {
    pub op: usize,
    pub line: usize,
    pub column: usize,
    pub text: String,
}

/// The result of rewriting one file with every op.
#[derive(Debug, Clone)]
pub struct FileRewrite {
    pub text: String,
    pub replacements: Vec<Replacement>,
    /// The file parsed cleanly before and with errors after.
    pub introduces_parse_error: bool,
    /// The file parsed with errors before the rewrite.
    pub had_parse_error: bool,
    /// The first parse error: in the output when the rewrite introduced errors, in the
    /// input when it had some already, else none.
    pub first_parse_error: Option<ErrorAt>,
    /// Outer matches left alone because they no longer matched after their inner
    /// matches were rewritten (rare; worth a warning).
    pub dropped: Vec<Dropped>,
    /// A deletion (a replacement by nothing) left a block with no statement in it
    /// that had one (`if x:` with nothing under it, `{}`).
    pub leaves_empty_block: bool,
    /// An import the rewrite needs binds a name another import of the file binds: the
    /// file is to be left out, with this note (the text is the rewrite's, without the
    /// imports).
    pub import_conflict: Option<imports::ImportConflict>,
}

impl FileRewrite {
    /// What a reviewer should know about the file: the parse errors the rewrite
    /// introduces, kept text a replacement repeats, an emptied block.
    pub fn flags(&self) -> Vec<crate::change::FileFlag> {
        use crate::change::FileFlag;
        let mut flags = Vec::new();
        if self.introduces_parse_error {
            flags.push(FileFlag::IntroducesParseErrors);
        }
        if self.replacements.iter().any(|r| r.repeated_kept.is_some()) {
            flags.push(FileFlag::RepeatsKeptText);
        }
        if self.leaves_empty_block {
            flags.push(FileFlag::LeavesEmptyBlock);
        }
        flags
    }
}

/// One op compiled for one language.
struct CompiledOp {
    pattern: Pattern,
    fix: TemplateFix,
    /// The template as typed, and its `$$$` captures between brackets (whose layout
    /// a match may keep, see [`layout::keep_bracket_layout`]).
    template: String,
    bracketed: Vec<layout::Bracketed>,
    prefilter: Prefilter,
    anchor: Option<Anchor>,
}

/// All ops compiled for one language.
pub struct Rewriter {
    ops: Vec<CompiledOp>,
    lang: Lang,
    nested: NestedOptions,
    /// The imports to fix up in each file the ops change.
    imports: Option<imports::Plan>,
}

impl Rewriter {
    /// Compiles every op for `lang`, chosen by file extension; validates templates
    /// against patterns.
    pub fn new(ops: &[Op], lang: Lang) -> Result<Rewriter, Error> {
        Rewriter::for_language(ops, lang, None)
    }

    /// The language the ops were compiled for.
    pub fn language(&self) -> Lang {
        self.lang
    }

    /// Like [`Rewriter::new`], `forced` being the language the user forced (`-l`), if
    /// any (see [`Query::for_language`]). Every pattern is compiled before any template
    /// is checked, so that a language skipped for one op is skipped, not an error.
    pub fn for_language(ops: &[Op], lang: Lang, forced: Option<Lang>) -> Result<Rewriter, Error> {
        let patterns = ops
            .iter()
            .map(|op| match &op.selector {
                None => compile(&op.pattern, lang, forced == Some(lang)),
                Some(kind) => selected(&op.pattern, kind, lang, forced),
            })
            .collect::<Result<Vec<_>, _>>()?;
        let mut compiled = Vec::with_capacity(ops.len());
        for (op, pattern) in ops.iter().zip(patterns) {
            let fix =
                TemplateFix::try_new(&op.rewrite, &lang).map_err(|e| Error::InvalidPattern {
                    pattern: op.rewrite.clone(),
                    detail: e.to_string(),
                })?;
            check_template_vars(op, &pattern, &fix)?;
            let prefilter = Prefilter::new(&op.pattern, &pattern, lang);
            let anchor = Anchor::of(&pattern, &lang);
            compiled.push(CompiledOp {
                pattern,
                fix,
                template: op.rewrite.clone(),
                bracketed: layout::bracketed_vars(&op.rewrite),
                prefilter,
                anchor,
            });
        }
        Ok(Rewriter {
            ops: compiled,
            lang,
            nested: NestedOptions::default(),
            imports: None,
        })
    }

    /// Adds and removes `fix`'s imports in each file the ops change (see
    /// [`imports`]); a statement with metavariables is filled in from every match
    /// that captures them.
    pub fn with_imports(mut self, fix: &imports::ImportFix) -> Rewriter {
        self.imports = (!fix.is_empty()).then(|| imports::Plan::new(fix, self.lang));
        self
    }

    /// Whether any op may match `src` unchanged (a hint for scheduling: a later op may
    /// still match what an earlier one wrote).
    pub fn may_match(&self, src: &str) -> bool {
        self.ops.iter().any(|op| op.prefilter.may_match(src))
    }

    /// Sets how deep matches may nest ([`DEFAULT_MAX_DEPTH`] unless set).
    pub fn with_max_depth(mut self, max_depth: usize) -> Rewriter {
        self.nested.max_depth = max_depth;
        self
    }

    /// Runs the ops in order on `src`; `None` when nothing changes.
    pub fn rewrite(&self, src: &str) -> Result<Option<FileRewrite>, Error> {
        self.rewrite_selecting(src, &mut |_, _| true)
    }

    /// [`Rewriter::rewrite`] making only the changes `select` accepts; it is given the
    /// op's index and the change (see [`rewrite_nested_selecting`]). Each op runs on
    /// what the ops before it left, declined changes included.
    pub fn rewrite_selecting(
        &self,
        src: &str,
        select: &mut dyn FnMut(usize, &Proposed<'_>) -> bool,
    ) -> Result<Option<FileRewrite>, Error> {
        self.rewrite_file(None, src, select)
    }

    /// [`Rewriter::rewrite_selecting`] of the file at `path` (from the repository
    /// root), which an import's `{rel:PATH}` is written relative to.
    pub fn rewrite_file(
        &self,
        path: Option<&str>,
        src: &str,
        select: &mut dyn FnMut(usize, &Proposed<'_>) -> bool,
    ) -> Result<Option<FileRewrite>, Error> {
        self.rewrite_checked(path, src, select, true)
    }

    /// The replacements the ops make on `src` (`None`: no change), without the checks
    /// [`Rewriter::rewrite`] makes of the result: no re-parse after the last op (so no
    /// `introduces_parse_error`), no imports added, no emptied block counted. What
    /// `review` re-derives a preview's sites from: the same replacements for about
    /// half the parsing.
    pub fn replacements(&self, src: &str) -> Result<Option<FileRewrite>, Error> {
        self.rewrite_checked(None, src, &mut |_, _| true, false)
    }

    fn rewrite_checked(
        &self,
        path: Option<&str>,
        src: &str,
        select: &mut dyn FnMut(usize, &Proposed<'_>) -> bool,
        checks: bool,
    ) -> Result<Option<FileRewrite>, Error> {
        // Parsed lazily (an op whose literal is absent needs no tree), then kept in
        // step with the text by `rewrite_nested`'s incremental re-parses.
        let mut doc: Option<StrDoc<Lang>> = None;
        let mut had_parse_error = false;
        let mut input_error = None;
        let mut replacements = Vec::new();
        let mut dropped = Vec::new();
        let mut found = imports::Found::default();
        for (index, op) in self.ops.iter().enumerate() {
            let current = doc.as_ref().map_or(src, |d| d.src.as_str());
            if !op.prefilter.may_match(current) {
                continue;
            }
            let doc = match &mut doc {
                Some(doc) => doc,
                None => {
                    let parsed = parse_doc(src, self.lang)?;
                    had_parse_error = parsed.tree.root_node().has_error();
                    if had_parse_error && checks {
                        input_error = first_parse_error(&AstGrep::doc(parsed.clone()));
                    }
                    doc.insert(parsed)
                }
            };
            let crlf = uses_crlf(&doc.src);
            let mut options = self.nested;
            // After the last op the tree only answers whether the rewrite broke a clean
            // parse; a file that did not parse cleanly needs no answer.
            let last = index + 1 == self.ops.len();
            options.tree_after = !(last && (had_parse_error || !checks));
            let deleted = deleted_ranges(op, doc);
            let out = rewrite_nested_selecting(
                doc,
                &NoMissing(&op.pattern),
                op.anchor.as_ref(),
                options,
                |m| {
                    if let Some(plan) = &self.imports {
                        plan.collect(m, &mut found);
                    }
                    let mut edit = op.edit(m, self.lang);
                    if let Some(deleted) = &deleted {
                        list_aware(m, &mut edit, deleted);
                    }
                    edit.inserted_text = blank_lines_kept(m, edit.inserted_text);
                    edit.inserted_text = tab_indented(m, edit.position, edit.inserted_text);
                    if crlf {
                        edit.inserted_text = lf_to_crlf(edit.inserted_text);
                    }
                    edit
                },
                &mut |p| select(index, p),
            )?;
            replacements.extend(out.changes.into_iter().map(|c| Replacement {
                op: index,
                start: c.start,
                line: c.line,
                column: c.column,
                before: c.before,
                after: c.after,
                repeated_kept: c.repeated_kept,
            }));
            dropped.extend(out.lost.into_iter().map(|l| Dropped {
                op: index,
                line: l.line,
                column: l.column,
                text: l.text,
            }));
        }
        if let Some(doc) = &doc {
            // Inside a `ParseArena` (`edit`), the last tree goes with the arena, whole,
            // instead of node by node when it is dropped here.
            crate::alloc::pin_in_open_arena(&doc.tree);
        }
        let Some(mut doc) = doc.filter(|d| d.src != src) else {
            return Ok(None);
        };
        if !checks {
            // The tree is the one before the last op's edits: not read again.
            return Ok(Some(FileRewrite {
                text: doc.src,
                replacements,
                introduces_parse_error: false,
                had_parse_error,
                first_parse_error: None,
                dropped,
                leaves_empty_block: false,
                import_conflict: None,
            }));
        }
        let mut import_conflict = None;
        if let Some(plan) = &self.imports {
            let applied = plan.apply(self.lang, doc.src.clone(), &found, path)?;
            import_conflict = applied.conflict;
            if applied.text != doc.src {
                doc = parse_owned(applied.text, self.lang)?;
            }
        }
        let introduces_parse_error = !had_parse_error && doc.tree.root_node().has_error();
        let first_parse_error = if introduces_parse_error {
            first_parse_error(&AstGrep::doc(doc.clone()))
        } else {
            input_error
        };
        // Only a deletion can empty a block: then both texts are parsed once more.
        let leaves_empty_block = replacements.iter().any(|r| r.after.trim().is_empty())
            && empty_blocks(&parse(&doc.src, self.lang)?) > empty_blocks(&parse(src, self.lang)?);
        Ok(Some(FileRewrite {
            text: doc.src,
            replacements,
            introduces_parse_error,
            had_parse_error,
            first_parse_error,
            dropped,
            leaves_empty_block,
            import_conflict,
        }))
    }
}

impl CompiledOp {
    /// The op's edit of one match, keeping the layout inside brackets a `$$$` capture
    /// is moved between.
    fn edit(&self, m: &NodeMatch<'_, StrDoc<Lang>>, lang: Lang) -> Edit<String> {
        if !self.bracketed.is_empty() {
            let kept = layout::keep_bracket_layout(&self.template, &self.bracketed, m.get_env());
            if let Some(fix) = kept.and_then(|t| TemplateFix::try_new(&t, &lang).ok()) {
                return m.make_edit(&self.pattern, &fix);
            }
        }
        m.make_edit(&self.pattern, &self.fix)
    }
}

/// For an op whose template is empty (a deletion), the ranges of every node it
/// deletes in `doc`: a list element deleted beside others takes the separator that
/// keeps the list well formed (see [`list::widened_deletion`]).
fn deleted_ranges(op: &CompiledOp, doc: &StrDoc<Lang>) -> Option<Vec<std::ops::Range<usize>>> {
    if !op.template.trim().is_empty() {
        return None;
    }
    let root = AstGrep::doc(doc.clone());
    let found = root
        .root()
        .find_all(NoMissing(&op.pattern))
        .map(|m| m.range())
        .collect();
    Some(found)
}

/// Widens `edit`, a deletion of the whole matched node, to one separator of the
/// comma-separated list the node is an element of, or, for the only element between
/// a pair of brackets, to the space around it, or, for a node alone on its lines, to
/// those lines.
pub fn list_aware(
    m: &NodeMatch<'_, StrDoc<Lang>>,
    edit: &mut Edit<String>,
    deleted: &[std::ops::Range<usize>],
) {
    let range = m.range();
    let whole = edit.position == range.start && edit.deleted_length == range.len();
    if !whole || !edit.inserted_text.is_empty() {
        return;
    }
    let goes = |r: std::ops::Range<usize>| deleted.contains(&r);
    let cut = list::widened_deletion(m.get_node(), &goes)
        .or_else(|| list::only_element_deletion(m.get_node()))
        .or_else(|| list::lone_lines_deletion(m.get_node()));
    if let Some(cut) = cut {
        edit.position = cut.start;
        edit.deleted_length = cut.len();
    }
}

/// How many blocks of the tree hold no statement (comments aside): a Python `block`
/// with no child, a `{}` that is a `statement_block`, `compound_statement`, a `body`.
pub fn empty_blocks<L: LanguageExt>(root: &AstGrep<StrDoc<L>>) -> usize {
    root.root()
        .dfs()
        .filter(|n| {
            let kind = n.kind();
            (kind.contains("block") || kind.contains("body") || kind == "compound_statement")
                && !kind.contains("comment")
                && n.is_named()
                && !n
                    .children()
                    .any(|c| c.is_named() && !c.kind().contains("comment"))
        })
        .count()
}

/// Whether the text's first line ends in CRLF: templates are written with `\n`, and a
/// CRLF file should not come out with mixed line endings.
/// [`indent::reindent_tabs`] for a match's edit.
pub fn tab_indented(
    m: &ast_grep_core::NodeMatch<'_, ast_grep_core::tree_sitter::StrDoc<Lang>>,
    position: usize,
    inserted: Vec<u8>,
) -> Vec<u8> {
    use ast_grep_core::Doc;
    indent::reindent_tabs(m.get_doc().get_source().as_bytes(), position, inserted)
}

/// [`indent::keep_blank_lines`] for a match's edit.
pub fn blank_lines_kept(
    m: &ast_grep_core::NodeMatch<'_, ast_grep_core::tree_sitter::StrDoc<Lang>>,
    inserted: Vec<u8>,
) -> Vec<u8> {
    use ast_grep_core::Doc;
    let src = m.get_doc().get_source().as_bytes();
    let matched = src.get(m.range()).unwrap_or_default();
    indent::keep_blank_lines(matched, inserted)
}

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

/// [`contextual`], where without a language asked for (`forced`) each file's language
/// is tried, as in ast-grep: one whose parse of the pattern has no node of that kind
/// is one the pattern is no code in (skipped), not an error.
fn selected(
    pattern: &str,
    selector: &str,
    lang: Lang,
    forced: Option<Lang>,
) -> Result<Pattern, Error> {
    match contextual(pattern, selector, lang) {
        Err(_) if forced.is_none() => Err(Error::PatternDoesNotParse {
            pattern: pattern.to_string(),
            lang: lang.to_string(),
            why: NotCode::NoSelectedNode,
        }),
        compiled => compiled,
    }
}

/// `pattern` parsed as written, the node of kind `selector` in it being the pattern
/// (ast-grep's pattern object with `context` and `selector`).
fn contextual(pattern: &str, selector: &str, lang: Lang) -> Result<Pattern, Error> {
    Pattern::contextual(pattern, selector, lang).map_err(|e| Error::InvalidPattern {
        pattern: pattern.to_string(),
        detail: format!("selector '{selector}': {}", pattern_error_detail(&e, lang)),
    })
}

/// Compiles `text` for `lang`, telling a pattern bad everywhere from one that is
/// not code in this language (to skip). `forced`: the user chose this language, so a
/// pattern that is only text there is taken as such.
fn compile(text: &str, lang: Lang, forced: bool) -> Result<Pattern, Error> {
    let not_code = |why| Error::PatternDoesNotParse {
        pattern: text.to_string(),
        lang: lang.to_string(),
        why,
    };
    // C#'s `await $A` is no statement alone: it is read inside one.
    let statement = (lang == Lang::CSharp && parses_with_errors(text, lang))
        .then(|| csharp_statement_expression(text, lang))
        .flatten();
    let pattern = match statement.map_or_else(|| Pattern::try_new(text, lang), Ok) {
        Ok(pattern) => pattern,
        // Several roots may only mean that this language's grammar reads the text
        // differently (`fn $F() {}` in Python): that is a language to skip.
        Err(PatternError::MultipleNode(_)) if parses_with_errors(text, lang) => {
            return Err(not_code(NotCode::ParseErrors))
        }
        Err(PatternError::MultipleNode(_)) if lost_all_metavariables(text, &[]) => {
            return Err(not_code(NotCode::MetavariablesLost))
        }
        Err(e) => {
            return Err(Error::InvalidPattern {
                pattern: text.to_string(),
                detail: pattern_error_detail(&e, lang),
            })
        }
    };
    let pattern = go_call_not_conversion(text, pattern, lang);
    // A root that parses as an ERROR matches any node by its content, as in ast-grep
    // (C#'s `$A == $B` is no statement, so it parses as one): taken when the user
    // chose the language and there is code inside the error. Languages chosen by
    // extension skip such a pattern, since it would match in a language it is not.
    if pattern.has_error() && !(forced && code_inside_error(text, lang)) {
        return Err(not_code(NotCode::ParseErrors));
    }
    let defined = pattern.defined_vars();
    if lost_all_metavariables(text, &defined.into_iter().collect::<Vec<_>>()) {
        return Err(not_code(NotCode::MetavariablesLost));
    }
    if !forced && is_prose(&pattern, lang) {
        return Err(not_code(NotCode::Text));
    }
    Ok(pattern)
}

/// A C# expression that does not parse alone (`await $A`: without its `;`, the
/// grammar reads `await` as a stray word and loses the rest) as the expression of the
/// statement `TEXT;`, as ast-grep's contextual patterns take a node out of a larger
/// piece of code. `None`: not C#, or `TEXT;` is no single expression statement either.
fn csharp_statement_expression(text: &str, lang: Lang) -> Option<Pattern> {
    if lang != Lang::CSharp || text.trim_end().ends_with(';') {
        return None;
    }
    let context = format!("{text};");
    let processed = lang.pre_process_pattern(&context);
    let root = parse(&processed, lang).ok()?;
    if has_parse_error(&root) {
        return None;
    }
    let top = root.root();
    let statements: Vec<_> = top.children().filter(|n| n.is_named()).collect();
    let [statement] = statements.as_slice() else {
        return None;
    };
    let statement = match statement.kind().as_ref() {
        "global_statement" => statement.children().find(|n| n.is_named())?,
        _ => statement.clone(),
    };
    if statement.kind() != "expression_statement" {
        return None;
    }
    let expression = statement.children().find(|n| n.is_named())?;
    let kind = expression.kind().to_string();
    Pattern::contextual(&context, &kind, lang).ok()
}

/// Whether the pattern text names metavariables and none of them is in `defined`
/// (the metavariables of its parse): the language read `$A` as text.
fn lost_all_metavariables(text: &str, defined: &[&str]) -> bool {
    let named = metavariable_names(text);
    !named.is_empty() && !named.iter().any(|n| defined.contains(n))
}

/// The capturing metavariable names (`$A`, `$$A`, `$$$ARGS`; not `$_`, `$$$`) in a
/// pattern as typed, as ast-grep spells them: `$` signs, then an upper-case letter or
/// `_`, then upper-case letters, digits and `_`, the whole word.
pub fn metavariable_names(text: &str) -> Vec<&str> {
    let is_word = |c: char| c.is_alphanumeric() || c == '_' || c == '$';
    let mut names = Vec::new();
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] != b'$' || (i > 0 && text[..i].chars().next_back().is_some_and(is_word)) {
            i += 1;
            continue;
        }
        let mut start = i;
        while start < bytes.len() && bytes[start] == b'$' && start - i < 3 {
            start += 1;
        }
        let mut end = start;
        while end < bytes.len() && matches!(bytes[end], b'A'..=b'Z' | b'0'..=b'9' | b'_') {
            end += 1;
        }
        let whole_word = !text[end..].chars().next().is_some_and(is_word);
        let name = &text[start..end];
        if whole_word
            && name
                .as_bytes()
                .first()
                .is_some_and(|c| c.is_ascii_uppercase())
        {
            names.push(name);
        }
        i = end.max(i + 1);
    }
    names
}

/// Whether the pattern is a run of prose in a markup or data language (Markdown's
/// inline text, HTML's text, a YAML plain scalar): it would match only that literal
/// text, so it is no code pattern in that language.
fn is_prose(pattern: &Pattern, lang: Lang) -> bool {
    let prose_kind = match lang {
        Lang::Markdown => "inline",
        Lang::Html => "text",
        Lang::Yaml => "string_scalar",
        _ => return false,
    };
    let kind_id = match &pattern.node {
        PatternNode::Terminal { kind_id, .. } | PatternNode::Internal { kind_id, .. } => *kind_id,
        PatternNode::MetaVar { .. } => return false,
    };
    kind_id == lang.kind_to_id(prose_kind)
}

/// Go reads a lone `fmt.Println(x)` as a type conversion, but inside a function body,
/// as in real files, as a call, so such a pattern would never match (ast-grep#646).
/// Parse it in a function body and take the call from there; keep the original when
/// the text is no call there either (`[]byte($A)` is a conversion everywhere).
fn go_call_not_conversion(text: &str, pattern: Pattern, lang: Lang) -> Pattern {
    if lang != Lang::Go || !root_kind_is(&pattern, lang, "type_conversion_expression") {
        return pattern;
    }
    match Pattern::contextual(&format!("func _() {{ {text} }}"), "call_expression", lang) {
        Ok(call) if !call.has_error() && call.defined_vars() == pattern.defined_vars() => call,
        _ => pattern,
    }
}

/// Whether the pattern's root can only be a node of `kind`.
fn root_kind_is(pattern: &Pattern, lang: Lang, kind: &str) -> bool {
    let id = usize::from(lang.kind_to_id(kind));
    pattern
        .potential_kinds()
        .is_some_and(|kinds| kinds.iter().eq([id]))
}

/// Whether the pattern text, as ast-grep preprocesses it, parses with errors in `lang`.
/// Whether the first ERROR node of the pattern's parse holds code: a named node that is
/// neither an error nor missing, in a text whose brackets balance. A pattern that is
/// only error (`}}}`), or a typo (`foo($A`), holds none.
fn code_inside_error(text: &str, lang: Lang) -> bool {
    let processed = lang.pre_process_pattern(text);
    let Ok(root) = parse(&processed, lang) else {
        return false;
    };
    let root = root.root();
    let Some(error) = root.dfs().find(|n| n.is_error()) else {
        return false;
    };
    let found = error
        .dfs()
        .skip(1)
        .any(|n| n.is_named() && !n.is_error() && !n.is_missing());
    // A typo (`foo($A`) leaves an error too: its brackets do not balance.
    found && brackets_balance(text)
}

/// Whether every `(`, `[` and `{` of `text` is closed in order (outside quotes).
fn brackets_balance(text: &str) -> bool {
    let mut open = Vec::new();
    let mut quote: Option<char> = None;
    let mut escaped = false;
    for c in text.chars() {
        if let Some(q) = quote {
            match c {
                _ if escaped => escaped = false,
                '\\' => escaped = true,
                _ if c == q => quote = None,
                _ => {}
            }
            continue;
        }
        match c {
            '"' | '\'' | '`' => quote = Some(c),
            '(' | '[' | '{' => open.push(c),
            ')' | ']' | '}' => {
                let want = match c {
                    ')' => '(',
                    ']' => '[',
                    _ => '{',
                };
                if open.pop() != Some(want) {
                    return false;
                }
            }
            _ => {}
        }
    }
    open.is_empty() && quote.is_none()
}

fn parses_with_errors(text: &str, lang: Lang) -> bool {
    let processed = lang.pre_process_pattern(text);
    parse(&processed, lang).map_or(true, |root| has_parse_error(&root))
}

/// The reason a pattern failed, in our words: ast-grep's messages repeat the pattern
/// in its internal form (`µµµX` for `$$$X`), which the user never typed.
fn pattern_error_detail(err: &PatternError, lang: Lang) -> String {
    match err {
        PatternError::Parse(_) => "it cannot be parsed".to_string(),
        PatternError::NoContent(_) => "it is empty".to_string(),
        PatternError::MultipleNode(_) => {
            "it has several top-level nodes; a pattern must be one node".to_string()
        }
        PatternError::RootMultiMetaVar(_) => {
            "a $$$ metavariable cannot be the whole pattern; use $VAR or put $$$VAR inside a larger pattern".to_string()
        }
        other => other.to_string().replace(lang.expando_char(), "$"),
    }
}

/// Refuses a template that uses a metavariable the pattern does not capture: the
/// template would silently expand it to nothing.
fn check_template_vars(op: &Op, pattern: &Pattern, fix: &TemplateFix) -> Result<(), Error> {
    let defined = pattern.defined_vars();
    let mut undefined: Vec<&str> = fix
        .used_vars()
        .into_iter()
        .filter(|v| !defined.contains(v))
        .collect();
    undefined.sort_unstable();
    match undefined.first() {
        Some(var) => Err(Error::UndefinedMetavariable {
            pattern: op.pattern.clone(),
            template: op.rewrite.clone(),
            var: (*var).to_string(),
        }),
        None => Ok(()),
    }
}

/// Parses `src`; the panicking `AstGrep::new` is avoided on purpose.
pub fn parse<L: LanguageExt>(src: &str, lang: L) -> Result<AstGrep<StrDoc<L>>, Error> {
    parse_doc(src, lang).map(AstGrep::doc)
}

/// Parses `src` into a document that owns it, without copying it (unlike
/// `StrDoc::try_new`), reusing one parser per language and thread.
pub fn parse_owned<L: LanguageExt>(src: String, lang: L) -> Result<StrDoc<L>, Error> {
    parse_owned_from(src, lang, None)
}

/// [`parse_owned`], re-using the unchanged parts of `old`, a tree of the text before
/// edits already recorded in it with `Tree::edit` (an incremental re-parse).
pub fn parse_owned_from<L: LanguageExt>(
    src: String,
    lang: L,
    old: Option<&tree_sitter::Tree>,
) -> Result<StrDoc<L>, Error> {
    thread_local! {
        static PARSERS: std::cell::RefCell<Vec<(ast_grep_core::tree_sitter::TSLanguage, tree_sitter::Parser)>> =
            const { std::cell::RefCell::new(Vec::new()) };
    }
    if crate::alloc::arena_is_open() {
        // A shared parser would grow into the arena and be freed under it.
        return parse_fresh_from(src, lang, old);
    }
    let ts_lang = lang.get_ts_language();
    let tree = PARSERS.with(|cell| {
        let mut parsers = cell.borrow_mut();
        let index = match parsers.iter().position(|(l, _)| *l == ts_lang) {
            Some(i) => i,
            None => {
                let mut parser = tree_sitter::Parser::new();
                parser.set_language(&ts_lang).map_err(|e| Error::Parse {
                    detail: e.to_string(),
                })?;
                parsers.push((ts_lang.clone(), parser));
                parsers.len() - 1
            }
        };
        parsers[index]
            .1
            .parse(src.as_bytes(), old)
            .ok_or(Error::Parse {
                detail: "the parser gave no tree".to_string(),
            })
    })?;
    Ok(StrDoc { src, lang, tree })
}

/// [`parse_owned`] with a parser of its own, made for this parse and dropped after it:
/// for a [`ParseArena`](crate::alloc::ParseArena), which the shared parsers must not
/// grow into.
pub fn parse_owned_fresh<L: LanguageExt>(src: String, lang: L) -> Result<StrDoc<L>, Error> {
    parse_fresh_from(src, lang, None)
}

/// [`parse_owned_fresh`], re-using the unchanged parts of `old` (see
/// [`parse_owned_from`]).
fn parse_fresh_from<L: LanguageExt>(
    src: String,
    lang: L,
    old: Option<&tree_sitter::Tree>,
) -> Result<StrDoc<L>, Error> {
    let mut parser = tree_sitter::Parser::new();
    parser
        .set_language(&lang.get_ts_language())
        .map_err(|e| Error::Parse {
            detail: e.to_string(),
        })?;
    let tree = parser.parse(src.as_bytes(), old).ok_or(Error::Parse {
        detail: "the parser gave no tree".to_string(),
    })?;
    Ok(StrDoc { src, lang, tree })
}

/// Parses `src` into a document that can still be edited and re-parsed incrementally.
pub fn parse_doc<L: LanguageExt>(src: &str, lang: L) -> Result<StrDoc<L>, Error> {
    if crate::alloc::arena_is_open() {
        return parse_owned_fresh(src.to_string(), lang);
    }
    StrDoc::try_new(src, lang).map_err(|detail| Error::Parse { detail })
}

/// Whether the tree holds an ERROR or a missing node anywhere.
pub fn has_parse_error<L: LanguageExt>(root: &AstGrep<StrDoc<L>>) -> bool {
    root.root().get_inner_node().has_error()
}

/// How many ERROR and missing nodes `src` parses with in `lang` (0 when it does not
/// parse at all: there is nothing to compare).
pub fn parse_error_count(src: &str, lang: Lang) -> usize {
    let Ok(root) = parse(src, lang) else {
        return 0;
    };
    let root = root.root();
    if !root.get_inner_node().has_error() {
        return 0;
    }
    root.dfs()
        .filter(|n| n.is_error() || n.is_missing())
        .count()
}

/// The first ERROR or missing node in document order: descend into the first child
/// that holds an error until the error itself is reached.
pub fn first_parse_error<L: LanguageExt>(root: &AstGrep<StrDoc<L>>) -> Option<ErrorAt> {
    let mut node = root.root();
    if !node.get_inner_node().has_error() {
        return None;
    }
    while !(node.is_error() || node.is_missing()) {
        let child = node.children().find(|c| c.get_inner_node().has_error());
        match child {
            Some(child) => node = child,
            None => break,
        }
    }
    let start = node.start_pos();
    Some(ErrorAt {
        line: start.line() + 1,
        column: start.column(&node) + 1,
    })
}

/// Byte offset → 1-based line and character column, for many lookups in one text.
///
/// Lookups in increasing order count characters on from the previous one instead of
/// from the line start: a minified file is one long line with thousands of matches,
/// and counting from the line start each time would be quadratic.
pub struct LineIndex<'a> {
    text: &'a str,
    /// Byte offset of the start of every line.
    starts: Vec<usize>,
    /// The previous lookup: byte offset, 1-based line, 0-based character column.
    last: Cell<(usize, usize, usize)>,
}

impl<'a> LineIndex<'a> {
    pub fn new(text: &'a str) -> LineIndex<'a> {
        let mut starts = vec![0];
        starts.extend(memchr::memchr_iter(b'\n', text.as_bytes()).map(|i| i + 1));
        LineIndex {
            text,
            starts,
            last: Cell::new((0, 1, 0)),
        }
    }

    /// The byte offset where line `row` (0-based) starts, if the text has it.
    pub fn line_start(&self, row: usize) -> Option<usize> {
        self.starts.get(row).copied()
    }

    pub fn line_col(&self, byte: usize) -> (usize, usize) {
        let line = self.starts.partition_point(|&s| s <= byte).max(1);
        let (last_byte, last_line, last_column) = self.last.get();
        let (from, base) = if last_line == line && last_byte <= byte {
            (last_byte, last_column)
        } else {
            (self.starts[line - 1], 0)
        };
        let column = base
            + self
                .text
                .get(from..byte)
                .map_or(byte - from, |s| s.chars().count());
        self.last.set((byte, line, column));
        (line, column + 1)
    }
}
