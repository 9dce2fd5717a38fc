/*!
List-aware deletion: removing an element of a comma-separated list (arguments,
parameters, array and object members, import specifiers) takes one separator with it.

A fix that replaces an element by nothing leaves its comma behind in ast-grep
(`f(a, , b)`, `import { a, , b }`; ast-grep#602). Here such a deletion is widened to the
element, one adjacent separator and the whitespace that goes with it. Which separator
depends on which neighbours go too, so that several deletions in one list stay
disjoint and together leave a well-formed list:

* an element with a kept element after it takes its following separator
  (`a, ` of `a, b`), as does every element of a run that reaches the end of a list
  whose other elements all go;
* an element whose later neighbours all go, with a kept one before it, takes the
  separator before it (`, b` of `a, b`), so a trailing comma of the list stays;
* the last element of a list that goes whole takes its trailing comma, and its line
  when it stood alone on it.

The shape is found from the tree alone (a `,` token beside the node), so it holds in
every grammar whose lists are comma-separated.
*/

use std::ops::Range;

use ast_grep_core::Doc;
use ast_grep_core::Node;

/// The range to delete instead of `node`'s own when the fix replaces it by nothing, or
/// `None` when `node` (or an ancestor with its range) is no element of a
/// comma-separated list. `goes` says whether another element (by its byte range) is
/// deleted by the same rewrite.
pub fn widened_deletion<D: Doc<Source = String>>(
    node: &Node<'_, D>,
    goes: &dyn Fn(Range<usize>) -> bool,
) -> Option<Range<usize>> {
    let element = list_element(node)?;
    let before = elements(&element, Side::Before);
    let after = elements(&element, Side::After);
    let kept = |nodes: &[Node<'_, D>]| nodes.iter().any(|n| !goes(n.range()));
    let own = element.range();
    if let Some(next) = after.first() {
        if kept(&after) || !kept(&before) {
            return Some(own.start..next.range().start);
        }
    }
    if let Some(prev) = before.first() {
        if kept(&before) {
            return Some(prev.range().end..own.end);
        }
    }
    // The last element of a list that goes whole: its trailing comma too.
    let end = match neighbour(&element, Side::After) {
        Some(comma) if is_comma(&comma) => comma.range().end,
        _ => own.end,
    };
    let src: &str = element.get_doc().get_source();
    Some(whole_lines(src, own.start..end))
}

/// The range to delete instead of `node`'s own when it is the only element between a
/// pair of brackets (`{ a }`, `f( a )`, a lone line of `[\n  a\n]`), so that no
/// spaces or blank line stay between them: the whitespace inside the brackets on one
/// line, the element's whole line otherwise. `None` for anything else.
pub fn only_element_deletion<D: Doc<Source = String>>(node: &Node<'_, D>) -> Option<Range<usize>> {
    let range = node.range();
    let mut at = node.clone();
    loop {
        let (open, close) = (at.prev(), at.next());
        if let (Some(open), Some(close)) = (open, close) {
            if is_pair(&open.kind(), &close.kind()) && !open.is_named() && !close.is_named() {
                let src: &str = node.get_doc().get_source();
                let inside = open.range().end..close.range().start;
                let around = |r: Range<usize>| src[r].trim().is_empty();
                if !around(inside.start..range.start) || !around(range.end..inside.end) {
                    return None;
                }
                return Some(match src[inside.clone()].contains('\n') {
                    false => inside,
                    true => whole_lines(src, range),
                });
            }
            return None;
        }
        at = at.parent().filter(|p| p.range() == range)?;
    }
}

/// The whole lines of `node` when nothing else stands on them (a statement deleted by
/// an empty fix leaves no line of indentation behind), see [`lone_lines`]; `None`
/// otherwise.
pub fn lone_lines_deletion<D: Doc<Source = String>>(node: &Node<'_, D>) -> Option<Range<usize>> {
    lone_lines(node.get_doc().get_source(), node.range())
}

/// `range` grown to its whole lines when nothing else stands on them, with the blank
/// lines its going would leave out of place: at the top of the file, every blank line
/// after it (a file does not start with one); between a blank line before and one
/// after, one of them. `None` when something else stands on its first or last line.
pub fn lone_lines(src: &str, range: Range<usize>) -> Option<Range<usize>> {
    let start = src[..range.start].rfind('\n').map_or(0, |i| i + 1);
    let end = src[range.end..]
        .find('\n')
        .map_or(src.len(), |i| range.end + i + 1);
    if !src[start..range.start].trim().is_empty() || !src[range.end..end].trim().is_empty() {
        return None;
    }
    let blank_line = |at: usize| {
        let rest = &src[at..];
        let line = rest.find('\n').map(|i| &rest[..=i])?;
        line.trim().is_empty().then_some(line.len())
    };
    let mut end = end;
    if start == 0 {
        while let Some(len) = blank_line(end) {
            end += len;
        }
    } else if src[..start].ends_with("\n\n") || src[..start].ends_with("\n\r\n") {
        end += blank_line(end).unwrap_or(0);
    }
    Some(start..end)
}

fn is_pair(open: &str, close: &str) -> bool {
    matches!((open, close), ("(", ")") | ("[", "]") | ("{", "}"))
}

/// `node`, or the outermost ancestor with its range, that has a `,` beside it.
fn list_element<'r, D: Doc>(node: &Node<'r, D>) -> Option<Node<'r, D>> {
    let range = node.range();
    let mut candidate = Some(node.clone());
    while let Some(n) = candidate {
        if n.range() != range {
            return None;
        }
        let beside = |side| neighbour(&n, side).is_some_and(|s| is_comma(&s));
        if beside(Side::Before) || beside(Side::After) {
            return Some(n);
        }
        candidate = n.parent();
    }
    None
}

#[derive(Clone, Copy)]
enum Side {
    Before,
    After,
}

/// The list's other elements on one side of `element`, nearest first: each one
/// separated from the last by a `,`.
fn elements<'r, D: Doc>(element: &Node<'r, D>, side: Side) -> Vec<Node<'r, D>> {
    let mut out = Vec::new();
    let mut at = element.clone();
    while let Some(comma) = neighbour(&at, side).filter(is_comma) {
        match neighbour(&comma, side) {
            Some(next) if next.is_named() && !is_comma(&next) => {
                out.push(next.clone());
                at = next;
            }
            _ => break,
        }
    }
    out
}

/// The sibling next to `node` on `side`, comments passed over.
fn neighbour<'r, D: Doc>(node: &Node<'r, D>, side: Side) -> Option<Node<'r, D>> {
    let mut at = node.clone();
    loop {
        let next = match side {
            Side::Before => at.prev(),
            Side::After => at.next(),
        }?;
        if !next.kind().contains("comment") {
            return Some(next);
        }
        at = next;
    }
}

fn is_comma<D: Doc>(node: &Node<'_, D>) -> bool {
    !node.is_named() && node.kind() == ","
}

/// `range` grown to the whole lines it covers when only whitespace stands beside it on
/// its first and last line (an element alone on its line leaves no blank line).
fn whole_lines(src: &str, range: Range<usize>) -> Range<usize> {
    let bytes = src.as_bytes();
    let line_start = bytes[..range.start]
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |i| i + 1);
    let line_end = bytes[range.end..]
        .iter()
        .position(|&b| b == b'\n')
        .map_or(bytes.len(), |i| range.end + i + 1);
    let blank = |s: &[u8]| s.iter().all(|b| b.is_ascii_whitespace());
    if line_start > 0
        && blank(&bytes[line_start..range.start])
        && blank(&bytes[range.end..line_end])
        && line_end > range.end
    {
        line_start..line_end
    } else {
        range
    }
}

#[cfg(test)]
mod tests {
    use ast_grep_core::tree_sitter::LanguageExt;

    use super::*;
    use crate::lang::Lang;

    /// Deletes every named node whose text is `target` the list-aware way.
    fn delete(lang: Lang, target: &str, src: &str) -> String {
        let root = lang.ast_grep(src);
        let top = root.root();
        let mut nodes: Vec<_> = top
            .dfs()
            .filter(|n| n.is_named() && n.text() == target)
            .collect();
        nodes.dedup_by(|b, a| a.range() == b.range());
        let ranges: Vec<Range<usize>> = nodes.iter().map(|n| n.range()).collect();
        let goes = |r: Range<usize>| ranges.contains(&r);
        let mut cuts: Vec<Range<usize>> = nodes
            .iter()
            .map(|n| widened_deletion(n, &goes).unwrap_or(n.range()))
            .collect();
        cuts.sort_by_key(|r| r.start);
        let mut out = String::new();
        let mut at = 0;
        for cut in cuts {
            assert!(cut.start >= at, "cuts overlap in {src:?}");
            out.push_str(&src[at..cut.start]);
            at = cut.end;
        }
        out.push_str(&src[at..]);
        out
    }

    #[test]
    fn arguments_in_five_languages() {
        let cases = [
            (Lang::TypeScript, "f(a, x, b);", "f(a, b);"),
            (Lang::Python, "f(a, x, b)\n", "f(a, b)\n"),
            (Lang::Rust, "fn m() { f(a, x, b); }", "fn m() { f(a, b); }"),
            (
                Lang::Go,
                "package p\nfunc m() { f(a, x, b) }\n",
                "package p\nfunc m() { f(a, b) }\n",
            ),
            (
                Lang::Java,
                "class C { void m() { f(a, x, b); } }",
                "class C { void m() { f(a, b); } }",
            ),
            (
                Lang::CSharp,
                "class C { void M() { F(a, x, b); } }",
                "class C { void M() { F(a, b); } }",
            ),
            (
                Lang::Kotlin,
                "fun m() { f(a, x, b) }",
                "fun m() { f(a, b) }",
            ),
        ];
        for (lang, src, want) in cases {
            assert_eq!(delete(lang, "x", src), want, "{lang}");
        }
    }

    #[test]
    fn first_last_and_only() {
        let ts = Lang::TypeScript;
        assert_eq!(delete(ts, "x", "f(x, a);"), "f(a);");
        assert_eq!(delete(ts, "x", "f(a, x);"), "f(a);");
        assert_eq!(delete(ts, "x", "f(x);"), "f();");
        assert_eq!(delete(ts, "x", "f(a, x, x, b);"), "f(a, b);");
        assert_eq!(delete(ts, "x", "f(a, x, x);"), "f(a);");
        assert_eq!(delete(ts, "x", "f(x, x, a);"), "f(a);");
        assert_eq!(delete(ts, "x", "f(x, x);"), "f();");
        assert_eq!(delete(ts, "x", "f(x, a, x);"), "f(a);");
    }

    #[test]
    fn multi_line_lists_keep_their_layout() {
        let ts = Lang::TypeScript;
        let src = "const v = [\n  a,\n  x,\n  b,\n];\n";
        assert_eq!(delete(ts, "x", src), "const v = [\n  a,\n  b,\n];\n");
        let src = "const v = [\n  a,\n  x,\n];\n";
        assert_eq!(delete(ts, "x", src), "const v = [\n  a,\n];\n");
        let src = "const v = [\n  a,\n  x\n];\n";
        assert_eq!(delete(ts, "x", src), "const v = [\n  a\n];\n");
        let src = "const v = [\n  x,\n];\n";
        assert_eq!(delete(ts, "x", src), "const v = [\n];\n");
    }

    #[test]
    fn members_parameters_and_specifiers() {
        let ts = Lang::TypeScript;
        assert_eq!(
            delete(ts, "x: 2", "const o = { a: 1, x: 2, b: 3 };"),
            "const o = { a: 1, b: 3 };"
        );
        assert_eq!(
            delete(ts, "x", "import { a, x, b } from \"m\";"),
            "import { a, b } from \"m\";"
        );
        let py = Lang::Python;
        assert_eq!(
            delete(py, "x", "def f(a, x, b):\n    pass\n"),
            "def f(a, b):\n    pass\n"
        );
        assert_eq!(
            delete(py, "debug=True", "run(app, debug=True)\n"),
            "run(app)\n"
        );
        let rs = Lang::Rust;
        assert_eq!(delete(rs, "x", "use m::{a, x, b};"), "use m::{a, b};");
        assert_eq!(
            delete(rs, "x: u8", "fn f(a: u8, x: u8) {}"),
            "fn f(a: u8) {}"
        );
        let go = Lang::Go;
        assert_eq!(
            delete(go, "x", "package p\nvar v = []int{a, x, b}\n"),
            "package p\nvar v = []int{a, b}\n"
        );
    }

    /// Deletes the one named node whose text is `target` as the only element.
    fn delete_only(lang: Lang, target: &str, src: &str) -> String {
        let root = lang.ast_grep(src);
        let top = root.root();
        let node = top
            .dfs()
            .find(|n| n.is_named() && n.text() == target)
            .expect("target");
        let cut = only_element_deletion(&node).unwrap_or(node.range());
        format!("{}{}", &src[..cut.start], &src[cut.end..])
    }

    #[test]
    fn an_only_element_leaves_no_space_between_its_brackets() {
        let ts = Lang::TypeScript;
        assert_eq!(
            delete_only(ts, "x", "import { x } from \"m\";"),
            "import {} from \"m\";"
        );
        assert_eq!(delete_only(ts, "x", "f( x );"), "f();");
        assert_eq!(delete_only(ts, "x", "f(x);"), "f();");
        assert_eq!(
            delete_only(ts, "x", "const v = [\n  x\n];\n"),
            "const v = [\n];\n"
        );
        assert_eq!(delete_only(Lang::Python, "x", "f( x )\n"), "f()\n");
        let lone = |src: &str| {
            let root = ts.ast_grep(src);
            let top = root.root();
            let node = top
                .dfs()
                .find(|n| n.kind() == "lexical_declaration")
                .expect("a declaration");
            let cut = lone_lines_deletion(&node).unwrap_or(node.range());
            format!("{}{}", &src[..cut.start], &src[cut.end..])
        };
        assert_eq!(
            lone("function f() {\n  a();\n  const x = 1;\n  b();\n}\n"),
            "function f() {\n  a();\n  b();\n}\n"
        );
        assert_eq!(lone("a(); const x = 1;\n"), "a(); \n");
        // Not alone between the brackets, or not between brackets: as it is.
        assert_eq!(delete_only(ts, "x", "f(x + 1);"), "f( + 1);");
        assert_eq!(delete_only(ts, "x", "x;"), ";");
    }

    #[test]
    fn no_list_no_widening() {
        let root = Lang::TypeScript.ast_grep("g(x + 1);");
        let top = root.root();
        let x = top.dfs().find(|n| n.text() == "x").expect("x");
        assert_eq!(widened_deletion(&x, &|_| false), None);
    }
}
