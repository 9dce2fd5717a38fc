/*!
Finding a pattern's matches from the places its rarest word occurs, instead of trying
the pattern on every node of the tree.

`find_all` walks every node of a file (and a parsed file has roughly one node per two or
three bytes) to try the pattern on each. For a pattern with a fixed word in it
(`$A.unwrap()`: `unwrap`), that walk is a sixth of a search's time, and all but a few
dozen of the nodes it visits cannot match. Every match holds that word as one of its
tokens, so every match is an ancestor-or-self of a node that spans exactly one
occurrence of the word in the text. This module finds the occurrences with `memmem`,
moves a tree cursor from one to the next (sideways over whole subtrees, never into
them), and tries the pattern on the nodes that contain an occurrence, each node once.

Sound only for a word the pattern compares by text: a *named* terminal (ast-grep's
`Smart` strictness, the one our patterns use, compares a named leaf's text exactly and
never skips it; unnamed tokens are compared by kind only, and their spans are known to
be wrong in some grammars). Patterns without one keep the full walk.
*/

use std::cmp::Reverse;

use ast_grep_core::matcher::MatcherExt;
use ast_grep_core::matcher::PatternNode;
use ast_grep_core::tree_sitter::LanguageExt;
use ast_grep_core::tree_sitter::StrDoc;
use ast_grep_core::AstGrep;
use ast_grep_core::Language;
use ast_grep_core::Matcher;
use ast_grep_core::NodeMatch;
use ast_grep_core::Pattern;
use memchr::memmem;

/// Where a match sorts: its start, its end reversed, its depth.
type OrderKey = (usize, Reverse<usize>, usize);

/// The word of a pattern every match contains as a whole token.
#[derive(Debug, Clone)]
pub struct Anchor {
    finder: memmem::Finder<'static>,
}

impl Anchor {
    /// The longest text of a named terminal of `pattern` (not a metavariable), if any.
    pub fn of<L: Language>(pattern: &Pattern, lang: &L) -> Option<Anchor> {
        let expando = lang.expando_char();
        let mut best: Option<&str> = None;
        let mut stack = vec![&pattern.node];
        while let Some(node) = stack.pop() {
            match node {
                PatternNode::Terminal { text, is_named, .. } => {
                    let usable = *is_named
                        && !text.is_empty()
                        && !text.contains(expando)
                        && text.chars().any(|c| c.is_alphanumeric() || c == '_');
                    if usable && best.is_none_or(|b| text.len() > b.len()) {
                        best = Some(text);
                    }
                }
                PatternNode::Internal { children, .. } => stack.extend(children.iter()),
                PatternNode::MetaVar { .. } => {}
            }
        }
        best.map(|text| Anchor {
            finder: memmem::Finder::new(text.as_bytes()).into_owned(),
        })
    }

    /// The matches of `matcher` under `root`, in the order `find_all` gives them
    /// (pre-order: outer before inner, then document order). `matcher` must be the
    /// pattern this anchor was taken from, or one that matches a subset of it.
    pub fn find_all<'r, L, M>(
        &self,
        root: &'r AstGrep<StrDoc<L>>,
        matcher: &M,
    ) -> Vec<NodeMatch<'r, StrDoc<L>>>
    where
        L: LanguageExt,
        M: Matcher,
    {
        let kinds = matcher.potential_kinds();
        let text = root.get_text().as_bytes();
        let width = self.finder.needle().len();
        let top = root.root().get_inner_node();
        let mut cursor = top.walk();
        // The cursor's path from the root, each node with whether it was tried.
        let mut path = vec![(top, false)];
        // (start, longer first, shallower first) orders like `find_all`'s pre-order.
        let mut found: Vec<(OrderKey, NodeMatch<'r, StrDoc<L>>)> = Vec::new();
        let mut from = 0;
        while let Some(offset) = self.finder.find(&text[from..]) {
            let start = from + offset;
            let end = start + width;
            // Overlapping occurrences too: a token could start inside another hit.
            from = start + 1;
            let contains = |n: &tree_sitter::Node| n.start_byte() <= start && end <= n.end_byte();
            // Up or sideways to the first node on the way that holds the occurrence.
            loop {
                let node = cursor.node();
                if contains(&node) {
                    break;
                }
                if node.end_byte() <= start && cursor.goto_next_sibling() {
                    if let Some(last) = path.last_mut() {
                        *last = (cursor.node(), false);
                    }
                    continue;
                }
                if !cursor.goto_parent() {
                    break;
                }
                path.pop();
            }
            // Down to the smallest node that holds it.
            while cursor.goto_first_child_for_byte(start).is_some() {
                let child = cursor.node();
                if !contains(&child) {
                    cursor.goto_parent();
                    break;
                }
                path.push((child, false));
            }
            for (depth, (node, tried)) in path.iter_mut().enumerate() {
                if std::mem::replace(tried, true) {
                    continue;
                }
                let candidate = root.adopt(*node);
                if let Some(kinds) = &kinds {
                    if !kinds.contains(candidate.kind_id().into()) {
                        continue;
                    }
                }
                if let Some(m) = matcher.match_node(candidate) {
                    found.push(((node.start_byte(), Reverse(node.end_byte()), depth), m));
                }
            }
        }
        // Ancestors come first (same start: the longer; same range: the shallower),
        // then document order: the pre-order `find_all` walks in.
        found.sort_by_key(|(key, _)| *key);
        found.into_iter().map(|(_, m)| m).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lang::Lang;

    /// The anchored search and the full walk agree, match for match, in order.
    fn agree(pattern: &str, lang: Lang, src: &str) -> usize {
        let compiled = Pattern::try_new(pattern, lang).expect("pattern compiles");
        let anchor = Anchor::of(&compiled, &lang).expect("pattern has a word");
        let root = lang.ast_grep(src);
        let walked: Vec<_> = root
            .root()
            .find_all(&compiled)
            .map(|m| (m.range(), m.text().to_string()))
            .collect();
        let anchored: Vec<_> = anchor
            .find_all(&root, &compiled)
            .into_iter()
            .map(|m| (m.range(), m.text().to_string()))
            .collect();
        assert_eq!(anchored, walked, "pattern {pattern:?} on {src:?}");
        walked.len()
    }

    #[test]
    fn nested_and_chained_matches_come_in_pre_order() {
        let src = "fn f() { a.unwrap().b.unwrap(); g(x.unwrap()).unwrap();\n// y.unwrap()\n let s = \"z.unwrap()\"; unwrap_or(q.unwrap_or(1)); }";
        assert_eq!(agree("$A.unwrap()", Lang::Rust, src), 4);
    }

    #[test]
    fn words_that_occur_inside_longer_words_and_strings() {
        let src = "console.log(a); consolex.log(b); console.logger(c); `${console.log(d)}`;\nconsole.log(console.log(e));";
        assert_eq!(agree("console.log($$$A)", Lang::TypeScript, src), 4);
        let py = "print(1)\nprinted = print\nprint(print(2), 'print(3)')\nx = f'{print(4)}'\n";
        assert_eq!(agree("print($$$A)", Lang::Python, py), 4);
    }

    #[test]
    fn a_file_without_the_word_or_with_errors() {
        assert_eq!(agree("$A.unwrap()", Lang::Rust, "fn f() {}"), 0);
        let broken = "fn f( { a.unwrap(); b.unwrap( } struct";
        agree("$A.unwrap()", Lang::Rust, broken);
        agree("$A.unwrap()", Lang::Rust, "");
    }

    #[test]
    fn only_named_words_anchor() {
        // `return` is an unnamed keyword token: no anchor, the caller walks.
        let p = Pattern::try_new("return $A", Lang::Rust).expect("compiles");
        assert!(Anchor::of(&p, &Lang::Rust).is_none());
        let p = Pattern::try_new("$A.expect($B)", Lang::Rust).expect("compiles");
        assert!(Anchor::of(&p, &Lang::Rust).is_some());
    }

    #[test]
    fn multi_line_matches_and_whole_statements() {
        let src =
            "function f() {\n  if (x) {\n    foo(1,\n      2);\n  }\n  foo(foo(3));\n}\nfoo(4)";
        assert_eq!(agree("foo($$$A)", Lang::JavaScript, src), 4);
        let go = "package p\nfunc f() { defer mu.Unlock(); mu.Lock(); defer mu.Unlock() }\n";
        assert_eq!(agree("defer $M.Unlock()", Lang::Go, go), 2);
    }
}
