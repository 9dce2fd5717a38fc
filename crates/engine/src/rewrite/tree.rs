//! Parsing into trees (a parser reused per language and thread, or a fresh one inside a
//! parse arena), parse errors, and the [`LineIndex`] that turns byte offsets into lines
//! and columns.

use std::cell::Cell;

use crate::lang::Lang;
use ast_grep_core::tree_sitter::LanguageExt;
use ast_grep_core::tree_sitter::StrDoc;
use ast_grep_core::AstGrep;

use super::Error;
use super::ErrorAt;

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
