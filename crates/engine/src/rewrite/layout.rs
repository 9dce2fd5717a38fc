//! Layout: comparing code modulo layout, and keeping a list's layout through a rewrite.
//!
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

/// A `$$$NAME` of a template written directly between a pair of brackets
/// (`logger.warn($$$ARGS)`): the capture may bring the layout inside its own brackets
/// along (see [`keep_bracket_layout`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bracketed {
    open: char,
    name: String,
    close: char,
}

/// The `$$$NAME`s of `template` that stand alone between a pair of brackets.
pub fn bracketed_vars(template: &str) -> Vec<Bracketed> {
    let mut out = Vec::new();
    for (at, _) in template.match_indices("$$$") {
        let before = template[..at].chars().next_back();
        let rest = &template[at + 3..];
        let len = rest
            .find(|c: char| !(c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_'))
            .unwrap_or(rest.len());
        let (name, after) = (&rest[..len], rest[len..].chars().next());
        let pair = match before {
            Some('(') => ('(', ')'),
            Some('[') => ('[', ']'),
            Some('{') => ('{', '}'),
            _ => continue,
        };
        if name.is_empty() || after != Some(pair.1) {
            continue;
        }
        out.push(Bracketed {
            open: pair.0,
            name: name.to_string(),
            close: pair.1,
        });
    }
    out
}

/// `template` for one match, with the line breaks and indentation the match had
/// inside the brackets around each of `vars`' captures, and its trailing comma, when
/// the capture sat between the same brackets in the source and the layout there has a
/// line break: `console.warn(\n  a,\n  b,\n)` through `logger.warn($$$A)` stays
/// three lines. `None` when no capture has such a layout.
pub fn keep_bracket_layout<D>(
    template: &str,
    vars: &[Bracketed],
    env: &ast_grep_core::meta_var::MetaVarEnv<'_, D>,
) -> Option<String>
where
    D: ast_grep_core::Doc<Source = String>,
{
    let mut out = template.to_string();
    let mut changed = false;
    for var in vars {
        let nodes = env.get_multiple_matches(&var.name);
        let (Some(first), Some(last)) = (nodes.first(), nodes.last()) else {
            continue;
        };
        let open = first
            .prev()
            .filter(|o| !o.is_named() && o.text() == var.open.to_string());
        let mut close = last.next();
        while let Some(c) = close.clone().filter(|c| !c.is_named() && c.text() == ",") {
            close = c.next();
        }
        let close = close.filter(|c| !c.is_named() && c.text() == var.close.to_string());
        let (Some(open), Some(close)) = (open, close) else {
            continue;
        };
        let src: &str = first.get_doc().get_source();
        let lead = &src[open.range().end..first.range().start];
        let trail = &src[last.range().end..close.range().start];
        if !lead.contains('\n') && !trail.contains('\n') {
            continue;
        }
        let base = line_indent(src, open.range().start);
        let spot = format!("{}$$${}{}", var.open, var.name, var.close);
        let Some(at) = out.find(&spot) else {
            continue;
        };
        let own = line_indent(&out, at).to_string();
        let shift = |text: &str| {
            let mut lines = text.split('\n');
            let mut shifted = lines.next().unwrap_or_default().to_string();
            for line in lines {
                shifted.push('\n');
                if !line.trim().is_empty() || line.len() > base.len() {
                    shifted.push_str(&own);
                }
                shifted.push_str(line.strip_prefix(base).unwrap_or(line));
            }
            shifted
        };
        let kept = format!(
            "{}{}$$${}{}{}",
            var.open,
            shift(lead),
            var.name,
            shift(trail),
            var.close
        );
        out.replace_range(at..at + spot.len(), &kept);
        changed = true;
    }
    changed.then_some(out)
}

/// The whitespace that starts the line holding byte `at` of `text`.
fn line_indent(text: &str, at: usize) -> &str {
    let start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    let line = &text[start..];
    let len = line.len() - line.trim_start_matches([' ', '\t']).len();
    &line[..len]
}

#[cfg(test)]
mod tests {
    #[test]
    fn bracketed_vars_of_templates() {
        let vars = super::bracketed_vars("logger.warn($$$A) + f([$$$B], $$$C) + {$$$D}");
        let names: Vec<&str> = vars.iter().map(|v| v.name.as_str()).collect();
        assert_eq!(names, ["A", "B", "D"]);
        assert!(super::bracketed_vars("f($$$)").is_empty());
        assert!(super::bracketed_vars("f($A)").is_empty());
    }

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
