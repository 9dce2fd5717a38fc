//! Rewriting: ops compiled for one language ([`Rewriter`]) run in order on a file, each
//! match's edit kept in the file's layout (list separators, blank lines, tabs, CRLF),
//! the imports fixed up, and what the result says of the file ([`FileRewrite`]).

use crate::lang::Lang;
use ast_grep_core::replacer::TemplateFix;
use ast_grep_core::source::Edit;
use ast_grep_core::tree_sitter::LanguageExt;
use ast_grep_core::tree_sitter::StrDoc;
use ast_grep_core::AstGrep;
use ast_grep_core::NodeMatch;
use ast_grep_core::Pattern;

use super::imports;
use super::indent;
use super::layout;
use super::lf_to_crlf;
use super::list;
use super::pattern::compile;
use super::pattern::selected;
use super::query::NoMissing;
use super::rewrite_nested_selecting;
use super::tree::first_parse_error;
use super::tree::parse;
use super::tree::parse_doc;
use super::tree::parse_owned;
use super::uses_crlf;
use super::Anchor;
use super::Error;
use super::ErrorAt;
use super::NestedOptions;
use super::Prefilter;
use super::Proposed;

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
pub(super) struct CompiledOp {
    pub(super) pattern: Pattern,
    pub(super) fix: TemplateFix,
    /// The template as typed, and its `$$$` captures between brackets (whose layout
    /// a match may keep, see [`layout::keep_bracket_layout`]).
    template: String,
    bracketed: Vec<layout::Bracketed>,
    prefilter: Prefilter,
    anchor: Option<Anchor>,
}

/// All ops compiled for one language.
pub struct Rewriter {
    pub(super) ops: Vec<CompiledOp>,
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
