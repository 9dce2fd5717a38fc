//! Comparing code modulo layout: two texts that parse to the same tokens, whitespace
//! between tokens aside, are the same code reformatted (`foo(1)` and `foo( 1 )`).
//! Whitespace inside a token (a string literal's) counts, and so does text between
//! tokens that is not whitespace (a grammar that leaves string contents outside its
//! leaves), so `"a b"` and `"a  b"` stay different.

use crate::lang::Lang;
use ast_grep_core::tree_sitter::LanguageExt;

/// The layout-free form of `text` in `lang`: its leaf tokens, and any text between
/// them that is not only whitespace, in order.
pub fn layout_key(lang: Lang, text: &str) -> Vec<String> {
    let root = lang.ast_grep(text);
    let mut out = Vec::new();
    let mut at = 0usize;
    for node in root.root().dfs() {
        if !node.is_leaf() {
            continue;
        }
        let r = node.range();
        if r.start < at {
            continue;
        }
        let gap = &text[at..r.start];
        if !gap.trim().is_empty() {
            out.push(format!("\u{0}{gap}"));
        }
        if r.end > r.start {
            out.push(text[r.clone()].to_string());
        }
        at = r.end;
    }
    let tail = &text[at.min(text.len())..];
    if !tail.trim().is_empty() {
        out.push(format!("\u{0}{tail}"));
    }
    out
}

/// Whether `a` and `b` are the same code in `lang` but for whitespace between tokens.
pub fn same_but_layout(lang: Lang, a: &str, b: &str) -> bool {
    a == b || layout_key(lang, a) == layout_key(lang, b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whitespace_between_tokens_is_layout_inside_them_is_not() {
        let rs = Lang::Rust;
        assert!(same_but_layout(rs, "foo(1);", "foo( 1 );"));
        assert!(same_but_layout(rs, "foo(1, 2)", "foo(\n    1,\n    2\n)"));
        assert!(!same_but_layout(rs, "foo(1)", "foo(2)"));
        assert!(!same_but_layout(rs, "a b", "ab"));
        assert!(!same_but_layout(rs, "f(\"a b\")", "f(\"a  b\")"));
        let py = Lang::Python;
        assert!(same_but_layout(py, "print( x )", "print(x)"));
        assert!(!same_but_layout(py, "print('a b')", "print('a  b')"));
        let js = Lang::JavaScript;
        assert!(!same_but_layout(js, "f(`a b`)", "f(`a  b`)"));
    }
}
