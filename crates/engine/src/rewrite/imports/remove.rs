//! Removing an unused import: whether the file still uses a name outside its imports,
//! and the range that drops one binding (with its comma, its braces, or the statement).

use std::ops::Range;

use super::Binding;
use super::Family;
use super::Import;
use super::Kind;
use super::N;
use crate::rewrite::list::lone_lines;
use crate::rewrite::list::widened_deletion;

/// Whether the file uses `name` outside its imports: as a bare identifier (a shorthand
/// property and a re-export are ones), or, in Python, inside a string annotation
/// (`-> "List[User]"`). A member name (`x.name`, a key, a field, the last segment of
/// a Rust path `a::name`, a Python keyword argument) never refers to an import.
pub(super) fn referenced(family: Family, top: &N<'_>, name: &str, have: &[Import]) -> bool {
    let in_import = |r: Range<usize>| {
        have.iter()
            .any(|h| h.stmt.start <= r.start && r.end <= h.stmt.end)
    };
    top.dfs().any(|n| {
        if family == Family::Python && n.kind() == "string" {
            return in_annotation(&n) && mentions(&n.text(), name) && !in_import(n.range());
        }
        n.is_named()
            && n.kind().contains("identifier")
            && n.children().next().is_none()
            && n.text() == name
            && !member_name(family, &n)
            && !in_import(n.range())
    })
}

/// Whether the identifier `n` names a member of something else, never a binding of
/// the file: a property or field (`x.name`, `{ name: 1 }`, `S { name: 1 }`), the name
/// of a qualified type or path (`ns.Name`, `a::name`), a Python attribute or keyword.
fn member_name(family: Family, n: &N<'_>) -> bool {
    let kind = n.kind();
    if matches!(
        kind.as_ref(),
        "property_identifier" | "private_property_identifier" | "field_identifier"
    ) {
        return true;
    }
    let Some(parent) = n.parent() else {
        return false;
    };
    let is_field = |f: &str| parent.field(f).is_some_and(|c| c.range() == n.range());
    match (family, parent.kind().as_ref()) {
        (Family::Python, "attribute") => is_field("attribute"),
        (Family::Python, "keyword_argument") => is_field("name"),
        (Family::Js, "nested_type_identifier") => is_field("name"),
        (Family::Rust, "scoped_identifier" | "scoped_type_identifier") => {
            is_field("name") && parent.field("path").is_some()
        }
        _ => false,
    }
}

/// Python: whether the string `n` stands in an annotation (a parameter's, a return
/// type, a variable's), where its text is an expression that uses names.
fn in_annotation(n: &N<'_>) -> bool {
    n.ancestors()
        .take_while(|a| !a.kind().ends_with("statement") && a.kind() != "block")
        .any(|a| a.kind() == "type")
}

/// Whether `text` holds `name` as a whole word that is not a member (`.name`).
fn mentions(text: &str, name: &str) -> bool {
    let word = |c: char| c.is_alphanumeric() || c == '_';
    text.match_indices(name).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + name.len()..].chars().next();
        !before.is_some_and(|c| word(c) || c == '.') && !after.is_some_and(word)
    })
}

/// The range to delete to drop `binding` of `import`.
pub(super) fn removal(
    family: Family,
    top: &N<'_>,
    src: &str,
    import: &Import,
    binding: &Binding,
) -> Range<usize> {
    let whole = || whole_statement(src, import.stmt.clone());
    let others = |i: &Import| i.bindings.iter().filter(|b| b.node != binding.node).count();
    // The specifiers the same statement holds besides this one.
    let siblings: usize = match family {
        Family::Js | Family::Python => others(import),
        _ => 0,
    };
    match family {
        Family::Js if siblings > 0 => js_removal(top, import, binding),
        Family::Python if siblings > 0 => list_removal(top, binding).unwrap_or_else(whole),
        Family::Rust => rust_removal(top, src, import, binding).unwrap_or_else(whole),
        Family::Go => go_removal(top, src, import, binding).unwrap_or_else(whole),
        _ => whole(),
    }
}

/// The node spanning exactly `range`, outermost first.
fn node_at<'r>(top: &N<'r>, range: &Range<usize>) -> Option<N<'r>> {
    let mut node = Some(top.clone());
    while let Some(n) = node {
        if n.range() == *range {
            return Some(n);
        }
        node = n
            .children()
            .find(|c| c.range().start <= range.start && range.end <= c.range().end);
    }
    None
}

fn list_removal(top: &N<'_>, binding: &Binding) -> Option<Range<usize>> {
    let node = node_at(top, &binding.node)?;
    widened_deletion(&node, &|_| false)
}

fn js_removal(top: &N<'_>, import: &Import, binding: &Binding) -> Range<usize> {
    let named: Vec<&Binding> = import
        .bindings
        .iter()
        .filter(|b| b.kind == Kind::Named)
        .collect();
    let default = import.bindings.iter().find(|b| b.kind == Kind::Default);
    let fallback = binding.node.clone();
    match binding.kind {
        Kind::Named if named.len() > 1 => list_removal(top, binding).unwrap_or(fallback),
        // The last named one, after a default: `, { a }` goes.
        Kind::Named => match (
            default,
            node_at(top, &binding.node).and_then(|n| n.parent()),
        ) {
            (Some(d), Some(braces)) => d.node.end..braces.range().end,
            _ => fallback,
        },
        // A default before named ones or a namespace: `D, ` goes.
        _ => {
            let next = import
                .bindings
                .iter()
                .filter(|b| b.node.start > binding.node.end)
                .map(|b| b.node.start)
                .min();
            let braces = node_at(top, &binding.node)
                .and_then(|n| n.next())
                .and_then(|comma| comma.next())
                .map(|n| n.range().start);
            binding.node.start..braces.or(next).unwrap_or(binding.node.end)
        }
    }
}

fn rust_removal(
    top: &N<'_>,
    src: &str,
    import: &Import,
    binding: &Binding,
) -> Option<Range<usize>> {
    let mut node = node_at(top, &binding.node)?;
    loop {
        // An element of a group with others: only it goes.
        if let Some(cut) = widened_deletion(&node, &|_| false) {
            return Some(cut);
        }
        let parent = node.parent()?;
        if parent.kind() == "use_declaration" {
            return Some(whole_statement(src, import.stmt.clone()));
        }
        node = parent;
    }
}

fn go_removal(top: &N<'_>, src: &str, import: &Import, binding: &Binding) -> Option<Range<usize>> {
    let spec = node_at(top, &binding.node)?;
    let list = spec.parent().filter(|p| p.kind() == "import_spec_list")?;
    let specs = list
        .children()
        .filter(|c| c.kind() == "import_spec")
        .count();
    if specs <= 1 {
        return Some(whole_statement(src, import.stmt.clone()));
    }
    Some(whole_statement(src, spec.range()))
}

/// `range` with its lines when nothing else stands on them (see [`lone_lines`]).
fn whole_statement(src: &str, range: Range<usize>) -> Range<usize> {
    lone_lines(src, range.clone()).unwrap_or(range)
}
