//! Writing an import into a file: into an import of the same module, or as a statement
//! of its own in the style of the file's imports, after them or after the file's header.

use std::ops::Range;

use super::read::complete;
use super::read::unquote;
use super::Binding;
use super::Family;
use super::Import;
use super::Kind;
use super::N;

/// Whether `b` of `want` is bound in the file already.
pub(super) fn covered(have: &[Import], want: &Import, b: &Binding) -> bool {
    have.iter().filter(|h| h.module == want.module).any(|h| {
        (h.wildcard && b.kind == Kind::Named)
            || h.bindings.iter().any(|hb| {
                hb.kind == b.kind
                    && hb.imported == b.imported
                    && hb.local == b.local
                    && (b.type_only || !(hb.type_only || h.type_only))
            })
    })
}

/// Where and what to insert to add `missing` to an import of the same module:
/// (start, end, text) of the splice.
pub(super) fn merge(
    src: &str,
    have: &[Import],
    want: &Import,
    missing: &[&Binding],
) -> Option<(usize, usize, String)> {
    let same = |h: &&Import| h.module == want.module && h.type_only == want.type_only;
    let specs = |kind: Kind| -> Vec<&str> {
        missing
            .iter()
            .filter(|b| b.kind == kind)
            .map(|b| b.spec.as_str())
            .collect()
    };
    let named = specs(Kind::Named);
    if missing
        .iter()
        .any(|b| b.kind == Kind::Module || b.kind == Kind::Namespace)
    {
        return None;
    }
    let defaults = specs(Kind::Default);
    match (defaults.as_slice(), named.is_empty()) {
        ([], false) => {
            let joined = named.join(", ");
            if let Some(h) = have.iter().filter(same).find(|h| h.append_at.is_some()) {
                let last = h.append_at.clone()?;
                return Some(append(src, h.stmt.start, last, &named));
            }
            if let Some(h) = have.iter().filter(same).find(|h| h.regroup.is_some()) {
                let (range, path) = h.regroup.clone()?;
                let own = &h.bindings.first()?.spec;
                let text = format!("{path}::{{{own}, {joined}}}");
                return Some((range.start, range.end, text));
            }
            let h = have
                .iter()
                .filter(same)
                .find(|h| h.after_default.is_some())?;
            let at = h.after_default?;
            Some((at, at, format!(", {{ {joined} }}")))
        }
        ([default], true) => {
            let h = have
                .iter()
                .filter(same)
                .find(|h| h.before_named.is_some())?;
            let at = h.before_named?;
            Some((at, at, format!("{default}, ")))
        }
        _ => None,
    }
}

/// The splice that adds `names` after `last`, the last name of an import starting at
/// `stmt`: `, NAME` on its line, or, when the names stand one a line, a line of its own
/// for each, in their indentation and trailing comma.
fn append(src: &str, stmt: usize, last: Range<usize>, names: &[&str]) -> (usize, usize, String) {
    let start = line_start(src, last.start);
    let indent = &src[start..last.start];
    if start <= stmt || !indent.trim().is_empty() {
        let at = last.end;
        return (at, at, format!(", {}", names.join(", ")));
    }
    let eol = line_ending(src);
    let line_end = src[last.end..]
        .find('\n')
        .map_or(src.len(), |i| last.end + i);
    let line_end = match src[..line_end].ends_with('\r') {
        true => line_end - 1,
        false => line_end,
    };
    let rest = src[last.end..line_end].trim_start();
    let own_lines = |sep: &str| {
        names
            .iter()
            .map(|n| format!("{eol}{indent}{n}"))
            .collect::<Vec<_>>()
            .join(sep)
    };
    match rest.strip_prefix(',').map(str::trim) {
        // A trailing comma (a comment may follow it): new lines after the line, each
        // with its comma.
        Some(tail) if tail.is_empty() || tail.starts_with("//") || tail.starts_with('#') => {
            (line_end, line_end, format!("{},", own_lines(",")))
        }
        _ => (last.end, last.end, format!(",{}", own_lines(","))),
    }
}

pub(super) fn splice(src: &str, range: Range<usize>, text: &str) -> String {
    let mut out = String::with_capacity(src.len() + text.len());
    out.push_str(&src[..range.start]);
    out.push_str(text);
    out.push_str(&src[range.end..]);
    out
}

/// Go: `spec` into the first import declaration: into its block, sorted among its
/// specs when they are, or the single import turned into a block.
pub(super) fn go_merge(top: &N<'_>, src: &str, want: &Import) -> Option<String> {
    let spec = want.bindings.first()?.spec.clone();
    let decl = top.children().find(|c| c.kind() == "import_declaration")?;
    let eol = line_ending(src);
    if let Some(list) = decl.children().find(|c| c.kind() == "import_spec_list") {
        let specs: Vec<_> = list
            .children()
            .filter(|c| c.kind() == "import_spec")
            .collect();
        let path_of = |n: &N<'_>| n.field("path").map(|p| unquote(&p.text()));
        let later = specs
            .iter()
            .find(|s| path_of(s).is_some_and(|p| p > want.module));
        return Some(match later {
            Some(next) => {
                let at = line_start(src, next.range().start);
                let indent = &src[at..next.range().start];
                splice(src, at..at, &format!("{indent}{spec}{eol}"))
            }
            None => {
                let last = specs.last()?;
                let at = line_start(src, last.range().start);
                let indent = src[at..last.range().start].to_string();
                let end = last.range().end;
                splice(src, end..end, &format!("{eol}{indent}{spec}"))
            }
        });
    }
    let old = decl.children().find(|c| c.kind() == "import_spec")?;
    let (a, b) = (old.text().to_string(), spec);
    let (first, second) = if unquote_go_path(&a) <= want.module {
        (a, b)
    } else {
        (b, a)
    };
    let block = format!("import ({eol}\t{first}{eol}\t{second}{eol})");
    Some(splice(src, decl.range(), &block))
}

fn unquote_go_path(spec: &str) -> String {
    let start = spec.find(['"', '`']).unwrap_or(0);
    unquote(&spec[start..])
}

pub(super) fn line_start(src: &str, at: usize) -> usize {
    src[..at].rfind('\n').map_or(0, |i| i + 1)
}

pub(super) fn line_ending(src: &str) -> &'static str {
    if super::super::uses_crlf(src) {
        "\r\n"
    } else {
        "\n"
    }
}

/// `stmt` as a new statement of this file: its quotes and semicolons follow the
/// file's imports (or, without any, whether its statements end in `;`).
pub(super) fn styled_statement(
    family: Family,
    stmt: &str,
    src: &str,
    have: &[Import],
    want: &Import,
    semicolons: bool,
) -> String {
    let stmt = stmt.trim();
    match family {
        Family::Js => {
            let neighbour = have.last().map(|h| &src[h.stmt.clone()]);
            let mut text = stmt.to_string();
            if let Some(n) = neighbour {
                let quote = n.chars().rev().find(|&c| c == '"' || c == '\'');
                let mine = text.chars().rev().find(|&c| c == '"' || c == '\'');
                if let (Some(q), Some(m)) = (quote, mine) {
                    if q != m && !want.module.contains(q) {
                        text = text.replace(m, &q.to_string());
                    }
                }
                let semi = n.trim_end().ends_with(';');
                text = text.trim_end_matches(';').to_string();
                if semi {
                    text.push(';');
                }
            } else if semicolons && !text.ends_with(';') {
                // No import to copy: the file's statements say.
                text.push(';');
            }
            text
        }
        _ => complete(family, stmt),
    }
}

/// `text` as a statement of its own: after the file's first run of imports, or after
/// its header when it has none.
pub(super) fn insert_statement(
    family: Family,
    top: &N<'_>,
    src: &str,
    have: &[Import],
    text: &str,
) -> String {
    let eol = line_ending(src);
    if let Some(first) = have.first() {
        // The end of the first run: imports with only comments between them.
        let mut end = first.stmt.end;
        let nodes: Vec<_> = top.children().collect();
        let kotlin_list = nodes.iter().find(|n| n.kind() == "import_list");
        if let (Family::Kotlin, Some(list)) = (family, kotlin_list) {
            end = list
                .children()
                .filter(|c| c.kind() == "import_header")
                .last()
                .map_or(list.range().end, |h| h.range().end);
        } else {
            for n in nodes
                .iter()
                .skip_while(|n| n.range().end <= first.stmt.start)
            {
                if have.iter().any(|h| h.stmt == n.range()) {
                    end = n.range().end;
                } else if !n.kind().contains("comment") {
                    break;
                }
            }
        }
        // After the rest of the line (a trailing comment stays with its import).
        let at = src[end..].find('\n').map_or(src.len(), |i| end + i + 1);
        let lead = if at == src.len() && !src.ends_with('\n') {
            eol
        } else {
            ""
        };
        return splice(src, at..at, &format!("{lead}{text}{eol}"));
    }
    let at = header_end(family, top, src);
    let before_blank = at == 0 || src[..at].ends_with("\n\n") || src[..at].ends_with("\n\r\n");
    let after = &src[at..];
    let after_blank = after.is_empty() || after.starts_with('\n') || after.starts_with("\r\n");
    let mut insert = String::new();
    if !before_blank {
        if !src[..at].ends_with('\n') {
            insert.push_str(eol);
        }
        insert.push_str(eol);
    }
    insert.push_str(text);
    insert.push_str(eol);
    if !after_blank {
        insert.push_str(eol);
    }
    splice(src, at..at, &insert)
}

/// Where a file without imports gets its first: the start of the line after its
/// header (shebang, a leading comment block that a blank line ends, directives,
/// docstring, package clause, Rust's inner attributes).
fn header_end(family: Family, top: &N<'_>, src: &str) -> usize {
    let after_line = |end: usize| src[end..].find('\n').map_or(src.len(), |i| end + i + 1);
    let mut at = 0;
    if src.starts_with("#!") {
        at = after_line(0);
    }
    let nodes: Vec<_> = top.children().collect();
    let mut i = 0;
    while i < nodes.len() {
        let n = &nodes[i];
        let kind = n.kind();
        if n.range().end <= at {
            i += 1;
            continue;
        }
        if kind.contains("comment") {
            // A run of comments belongs to the header when a blank line ends it.
            let mut j = i;
            while j + 1 < nodes.len() && nodes[j + 1].kind().contains("comment") {
                j += 1;
            }
            let end = nodes[j].range().end;
            let rest = &src[after_line(end).min(src.len())..];
            let doc_comment = family == Family::Rust && n.text().starts_with("//!");
            if doc_comment || rest.starts_with('\n') || rest.starts_with("\r\n") || rest.is_empty()
            {
                at = after_line(end);
                i = j + 1;
                continue;
            }
            break;
        }
        if is_header(family, n, i == 0 || at > 0) {
            at = after_line(n.range().end);
            i += 1;
            continue;
        }
        break;
    }
    at
}

/// Whether a top-level node is part of a header that imports go after.
fn is_header(family: Family, n: &N<'_>, leading: bool) -> bool {
    let kind = n.kind();
    let string_statement = || {
        kind == "expression_statement"
            && n.children().filter(|c| c.is_named()).count() == 1
            && n.child(0).is_some_and(|c| c.kind() == "string")
    };
    match family {
        Family::Js => kind == "hash_bang_line" || string_statement(),
        Family::Python => leading && string_statement(),
        Family::Go => kind == "package_clause",
        Family::Java => kind == "package_declaration",
        Family::Kotlin => kind == "package_header" || kind == "file_annotation",
        Family::Rust => kind == "inner_attribute_item",
        Family::CSharp => kind == "shebang_directive" || kind == "extern_alias_directive",
    }
}
