//! Searching: a pattern compiled for one language ([`Query`]), its matches with their
//! positions, captures and replacements, and the matcher that never matches a MISSING
//! node ([`NoMissing`]); also the pattern's parse as `--debug-query` prints it.

use crate::lang::Lang;
use ast_grep_core::replacer::TemplateFix;
use ast_grep_core::tree_sitter::StrDoc;
use ast_grep_core::AstGrep;
use ast_grep_core::Language;
use ast_grep_core::Matcher;
use ast_grep_core::NodeMatch;
use ast_grep_core::Pattern;

use super::pattern::compile;
use super::pattern::selected;
use super::tree::first_parse_error;
use super::tree::has_parse_error;
use super::tree::parse;
use super::tree::parse_owned;
use super::tree::parse_owned_fresh;
use super::tree::LineIndex;
use super::walk;
use super::Anchor;
use super::Capture;
use super::Error;
use super::FileMatches;
use super::Match;
use super::Position;
use super::Prefilter;
use super::Replaced;
use super::Span;
use super::Strictness;
use super::MAX_MATCH_TEXT;

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
