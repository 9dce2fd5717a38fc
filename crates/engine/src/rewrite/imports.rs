/*!
Import fix-ups: the part of a migration outside the match that makes the file build.

A rewrite that introduces `logger.warn(…)` needs `logger` imported; one that drops the
last use of a name leaves an unused import behind (a lint error in Go, Python's F401,
TypeScript's `noUnusedLocals`). [`add_import`] and [`remove_unused`] work on one
file's text after its rewrite, parsed with its own grammar:

* an import already there (the same name from the same module, or a wildcard that
  covers it: Java's `a.b.*`, Python's `from m import *`, Rust's `use m::*`) changes
  nothing;
* otherwise the name is merged into an import of the same module (`import { a } from
  "m"`, `from m import a`, `use m::{a, b}` or `use m::a`, a Go import block);
* otherwise the statement goes after the file's first run of imports, or, in a file
  with none, after its header (shebang, license comment, `"use strict"`, module
  docstring, `package`), in the quotes and semicolons of the imports around it.

Only top-level imports count: an import inside a function or a namespace body is
left alone, and a file whose imports all live there gets a new one at the top.
*/

use std::ops::Range;

use ast_grep_core::tree_sitter::StrDoc;
use ast_grep_core::Node;

use super::Error;
use crate::lang::Lang;
use read::read_imports;
use read::read_statement;
use remove::referenced;
use remove::removal;
use write::covered;
use write::go_merge;
use write::insert_statement;
use write::merge;
use write::splice;
use write::styled_statement;

type N<'r> = Node<'r, StrDoc<Lang>>;

/// The languages with imports this module knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Family {
    Js,
    Python,
    Rust,
    Go,
    Java,
    Kotlin,
    CSharp,
}

fn family(lang: Lang) -> Option<Family> {
    Some(match lang {
        Lang::JavaScript | Lang::TypeScript | Lang::Tsx => Family::Js,
        Lang::Python => Family::Python,
        Lang::Rust => Family::Rust,
        Lang::Go => Family::Go,
        Lang::Java => Family::Java,
        Lang::Kotlin => Family::Kotlin,
        Lang::CSharp => Family::CSharp,
        _ => return None,
    })
}

/// Whether `lang` has imports [`add_import`] and [`remove_unused`] can edit.
pub fn supports(lang: Lang) -> bool {
    family(lang).is_some()
}

/// What a name is bound to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// One name of a module (`{ a }`, `from m import a`, `use m::a`, `import a.b.C`).
    Named,
    /// A module's default export (`import D from "m"`).
    Default,
    /// The module as an object (`import * as ns from "m"`).
    Namespace,
    /// The module itself (`import os`, a Go import, a C# `using`).
    Module,
}

/// One name an import binds.
#[derive(Debug, Clone)]
struct Binding {
    kind: Kind,
    /// The name in the module (the module for [`Kind::Module`]).
    imported: String,
    /// The name in the file.
    local: String,
    /// Only a type (`import type`, `import { type A }`).
    type_only: bool,
    /// The specifier's own text relative to the module (`a as b`, `type A`).
    spec: String,
    /// The specifier's range in the file (the whole statement when it is all there is).
    node: Range<usize>,
}

/// One import of one module, as read from a statement.
#[derive(Debug, Clone)]
struct Import {
    /// The top-level statement.
    stmt: Range<usize>,
    module: String,
    /// A wildcard import of the module's names.
    wildcard: bool,
    bindings: Vec<Binding>,
    /// The last of this import's list of names, after which `, NAME` joins it.
    append_at: Option<Range<usize>>,
    /// TypeScript/JavaScript: the statement is `import type`.
    type_only: bool,
    /// TypeScript/JavaScript: a default import alone, after which `, { NAME }` may go.
    after_default: Option<usize>,
    /// TypeScript/JavaScript: named imports without a default, before which `D, ` may go.
    before_named: Option<usize>,
    /// Rust: a `use m::a;` whose path can become the group `m::{a, NAME}`.
    regroup: Option<(Range<usize>, String)>,
}

impl Import {
    fn new(stmt: Range<usize>, module: String) -> Import {
        Import {
            stmt,
            module,
            wildcard: false,
            bindings: Vec::new(),
            append_at: None,
            type_only: false,
            after_default: None,
            before_named: None,
            regroup: None,
        }
    }
}

/// The names `src`'s imports bind, each as `module name as local` (a wildcard as
/// `module *`); `None` when `lang` has no imports this module reads or `src` does
/// not parse.
pub fn bound_names(lang: Lang, src: &str) -> Option<std::collections::BTreeSet<String>> {
    let family = family(lang)?;
    let root = super::parse(src, lang).ok()?;
    let mut out = std::collections::BTreeSet::new();
    for import in read_imports(family, &root.root()) {
        if import.wildcard {
            out.insert(format!("{} *", import.module));
        }
        for b in import.bindings {
            out.insert(format!("{} {} as {}", import.module, b.imported, b.local));
        }
    }
    Some(out)
}

/// Adds the import statement `stmt` (written in `lang`) to `src` unless it is there
/// already; returns the new text, or `None` when nothing had to change (or when a
/// name it binds is bound by another import, see [`Added::Conflict`]).
pub fn add_import(lang: Lang, src: &str, stmt: &str) -> Result<Option<String>, Error> {
    Ok(match add_or_conflict(lang, src, stmt)? {
        Added::Text(text) => Some(text),
        Added::Unchanged | Added::Conflict(_) => None,
    })
}

/// What adding an import did.
enum Added {
    Unchanged,
    Text(String),
    /// A name the statement binds is bound by another import of the file (`warn` from
    /// another module): adding it would declare the name twice (TypeScript's duplicate
    /// identifier), replacing it would change what the file's other uses mean.
    Conflict(ImportConflict),
}

/// An import a rewrite needs that would bind a name another import of the file binds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImportConflict {
    /// The line (1-based) of the import binding the name already.
    pub line: usize,
    /// What is in the way: the statement, the name and where it comes from now.
    pub detail: String,
}

impl std::fmt::Display for ImportConflict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} on line {}", self.detail, self.line)
    }
}

fn add_or_conflict(lang: Lang, src: &str, stmt: &str) -> Result<Added, Error> {
    let family = family(lang).ok_or_else(|| bad(stmt, lang, "imports are not supported"))?;
    let want = read_statement(family, lang, stmt)?;
    let root = super::parse(src, lang)?;
    let top = root.root();
    let have = read_imports(family, &top);
    let missing: Vec<&Binding> = want
        .bindings
        .iter()
        .filter(|b| !covered(&have, &want, b))
        .collect();
    let nothing_missing = if want.bindings.is_empty() {
        have.iter().any(|h| h.module == want.module)
    } else {
        missing.is_empty()
    };
    if nothing_missing {
        return Ok(Added::Unchanged);
    }
    if let Some(text) = type_made_value(family, src, &have, &want, &missing) {
        // The names the statement still misses, in the text with the value import.
        return Ok(match add_or_conflict(lang, &text, stmt)? {
            Added::Unchanged => Added::Text(text),
            other => other,
        });
    }
    if let Some(conflict) = bound_elsewhere(family, src, &have, &missing) {
        return Ok(Added::Conflict(conflict));
    }
    if family == Family::Go {
        if let Some(text) = go_merge(&top, src, &want) {
            return Ok(Added::Text(text));
        }
    } else if let Some((at, end, text)) = merge(src, &have, &want, &missing) {
        return Ok(Added::Text(splice(src, at..end, &text)));
    }
    let semicolons = top
        .children()
        .filter(|n| n.is_named() && !n.kind().contains("comment"))
        .any(|n| n.text().trim_end().ends_with(';'));
    let text = styled_statement(family, stmt, src, &have, &want, semicolons);
    if family == Family::Python {
        if let Some(out) = python::insert_grouped(src, &have, &want, &text) {
            return Ok(Added::Text(out));
        }
    }
    Ok(Added::Text(insert_statement(
        family, &top, src, &have, &text,
    )))
}

/// The conflict when a name of `missing` is bound already by another import of the
/// file (another module, another name of the same module under this local name, or
/// the name as a type only where [`type_made_value`] cannot make it a value). Python's
/// `import a.b` beside `import a` binds `a` twice harmlessly: not one.
fn bound_elsewhere(
    family: Family,
    src: &str,
    have: &[Import],
    missing: &[&Binding],
) -> Option<ImportConflict> {
    missing.iter().find_map(|b| {
        have.iter().find_map(|h| {
            let other = h.bindings.iter().find(|hb| hb.local == b.local)?;
            if family == Family::Python && other.kind == Kind::Module && b.kind == Kind::Module {
                return None;
            }
            let how = if other.type_only && !b.type_only {
                " as a type only"
            } else {
                ""
            };
            Some(ImportConflict {
                line: src[..h.stmt.start].matches('\n').count() + 1,
                detail: format!(
                    "`{}` is imported already from \"{}\"{how}",
                    b.local, h.module
                ),
            })
        })
    })
}

/// `src` with the type-only import of a value `missing` needs, from the same module
/// under the same name (`import type { A } from "m"`, `import { type A } from "m"`),
/// made a value import; `None` when there is none (or it cannot be: a type-only
/// default beside other names). TypeScript refuses a name imported twice (duplicate
/// identifier), so the value import cannot go beside it. The statement's other names
/// keep their `type` (`import type { A, B }` becomes `import { A, type B }`).
fn type_made_value(
    family: Family,
    src: &str,
    have: &[Import],
    want: &Import,
    missing: &[&Binding],
) -> Option<String> {
    if family != Family::Js {
        return None;
    }
    let (h, hb) = missing.iter().filter(|b| !b.type_only).find_map(|b| {
        have.iter()
            .filter(|h| h.module == want.module)
            .find_map(|h| {
                let hb = h
                    .bindings
                    .iter()
                    .find(|hb| hb.type_only && hb.local == b.local && hb.imported == b.imported)?;
                Some((h, hb))
            })
    })?;
    if !h.type_only {
        // `{ type A }`: the specifier's own `type` goes.
        let spec = &src[hb.node.clone()];
        let rest = spec.strip_prefix("type")?;
        return Some(splice(src, hb.node.clone(), rest.trim_start()));
    }
    // `import type …`: the statement's `type` goes; its other names take one each.
    let after = src[h.stmt.clone()].strip_prefix("import")?;
    let at = h.stmt.start + "import".len() + (after.len() - after.trim_start().len());
    let rest = src[at..].strip_prefix("type")?;
    let end = at + "type".len() + (rest.len() - rest.trim_start().len());
    let others: Vec<&Binding> = h.bindings.iter().filter(|o| o.node != hb.node).collect();
    if others.iter().any(|o| o.kind != Kind::Named) || hb.kind != Kind::Named && !others.is_empty()
    {
        return None;
    }
    let mut edits: Vec<(Range<usize>, &str)> = others
        .iter()
        .map(|o| (o.node.start..o.node.start, "type "))
        .collect();
    edits.push((at..end, ""));
    edits.sort_by_key(|(r, _)| std::cmp::Reverse(r.start));
    let mut out = src.to_string();
    for (r, t) in edits {
        out.replace_range(r, t);
    }
    Some(out)
}

/// Removes the imports of `name` that nothing else in `src` refers to: the specifier
/// with its comma, the braces when they empty, the statement when nothing is left.
/// Returns the new text, or `None` when nothing had to change.
pub fn remove_unused(lang: Lang, src: &str, name: &str) -> Result<Option<String>, Error> {
    let Some(family) = family(lang) else {
        return Ok(None);
    };
    let mut text = src.to_string();
    // One binding at a time: each removal moves the rest.
    for _ in 0..64 {
        let root = super::parse(&text, lang)?;
        let top = root.root();
        let have = read_imports(family, &top);
        let Some((import, binding)) = have.iter().find_map(|i| {
            let b = i.bindings.iter().find(|b| b.local == name)?;
            Some((i, b))
        }) else {
            break;
        };
        if referenced(family, &top, name, &have) {
            break;
        }
        let cut = removal(family, &top, &text, import, binding);
        text = splice(&text, cut, "");
    }
    Ok((text != src).then_some(text))
}

pub use crate::change::ImportFix;
pub use plan::Applied;
pub use plan::Found;
pub use plan::Plan;
fn bad(stmt: &str, lang: Lang, detail: &str) -> Error {
    Error::BadImport {
        stmt: stmt.to_string(),
        detail: format!("in {lang}, {detail}"),
    }
}

mod plan;
mod python;
mod read;
mod remove;
#[cfg(test)]
mod tests;
mod write;
