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

use ast_grep_core::replacer::Replacer;
use ast_grep_core::replacer::TemplateFix;
use ast_grep_core::tree_sitter::StrDoc;
use ast_grep_core::Node;
use ast_grep_core::NodeMatch;

use super::list::lone_lines;
use super::list::widened_deletion;
use super::Error;
use crate::lang::Lang;

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

/// One statement or name of an [`ImportFix`], compiled for one language.
struct Entry {
    text: String,
    /// Its template and metavariables, when it has any: it is then filled in from each
    /// match whose pattern captures them all.
    template: Option<(TemplateFix, Vec<String>)>,
}

/// An [`ImportFix`] compiled for one language.
pub struct Plan {
    add: Vec<Entry>,
    remove: Vec<Entry>,
}

/// The statements and names one file's matches filled in, in order, without repeats.
#[derive(Default)]
pub struct Found {
    add: Vec<String>,
    remove: Vec<String>,
}

impl Plan {
    pub fn new(fix: &ImportFix, lang: Lang) -> Plan {
        Plan::with_transforms(fix, lang, &[])
    }

    /// [`Plan::new`] for a rule whose `transform` makes the metavariables `transforms`:
    /// a statement may use them as it uses captured ones.
    pub fn with_transforms(fix: &ImportFix, lang: Lang, transforms: &[String]) -> Plan {
        let entry = |text: &String| {
            let vars: Vec<String> = super::metavariable_names(text)
                .into_iter()
                .map(str::to_string)
                .collect();
            let template = match vars.is_empty() {
                true => None,
                false => Some((TemplateFix::with_transform(text, &lang, transforms), vars)),
            };
            Entry {
                text: text.clone(),
                template,
            }
        };
        Plan {
            add: fix.add.iter().map(entry).collect(),
            remove: fix.remove.iter().map(entry).collect(),
        }
    }

    /// Fills in the statements and names with metavariables from one match.
    pub fn collect(&self, m: &NodeMatch<'_, StrDoc<Lang>>, found: &mut Found) {
        let env = m.get_env();
        let fill = |entries: &[Entry], into: &mut Vec<String>| {
            for entry in entries {
                let Some((template, vars)) = &entry.template else {
                    continue;
                };
                let bound = |v: &String| {
                    env.get_match(v).is_some()
                        || !env.get_multiple_matches(v).is_empty()
                        || env.get_transformed(v).is_some()
                };
                if !vars.iter().all(bound) {
                    continue;
                }
                let bytes = template.generate_replacement(m);
                let text = String::from_utf8_lossy(&bytes).trim().to_string();
                if !into.contains(&text) {
                    into.push(text);
                }
            }
        };
        fill(&self.add, &mut found.add);
        fill(&self.remove, &mut found.remove);
    }

    /// `text`, the file at `path` (from the repository root, when known), with the
    /// plan's imports: the new ones added (in the style of the imports there, the ones
    /// about to go included; `{rel:PATH}` written relative to `path`), then the unused
    /// ones removed.
    pub fn apply(
        &self,
        lang: Lang,
        text: String,
        found: &Found,
        path: Option<&str>,
    ) -> Result<Applied, Error> {
        let plain = |entries: &[Entry]| -> Vec<String> {
            entries
                .iter()
                .filter(|e| e.template.is_none())
                .map(|e| e.text.clone())
                .collect()
        };
        let mut out = text.clone();
        for stmt in plain(&self.add).iter().chain(&found.add) {
            let stmt = relative_paths(lang, stmt, path)?;
            match add_or_conflict(lang, &out, &stmt)? {
                Added::Text(t) => out = t,
                Added::Unchanged => {}
                Added::Conflict(mut why) => {
                    why.detail = format!("`{stmt}`: {}", why.detail);
                    return Ok(Applied {
                        text,
                        conflict: Some(why),
                    });
                }
            }
        }
        for name in plain(&self.remove).iter().chain(&found.remove) {
            if let Some(t) = remove_unused(lang, &out, name)? {
                out = t;
            }
        }
        Ok(Applied {
            text: out,
            conflict: None,
        })
    }
}

/// A file's text with a plan's imports.
pub struct Applied {
    /// The text with the imports (as it was given, when there is a conflict).
    pub text: String,
    /// An import that would bind a name another import binds: the file is to be left
    /// out (see [`Added::Conflict`]).
    pub conflict: Option<ImportConflict>,
}

/// `stmt` with each `{rel:PATH}` (PATH from the repository root) written as the module
/// PATH is to the file at `file`: `../shared/src/warning` in JavaScript and TypeScript,
/// `..shared.warning` in Python.
fn relative_paths(lang: Lang, stmt: &str, file: Option<&str>) -> Result<String, Error> {
    const OPEN: &str = "{rel:";
    let mut out = String::with_capacity(stmt.len());
    let mut rest = stmt;
    while let Some(at) = rest.find(OPEN) {
        let Some(len) = rest[at..].find('}') else {
            return Err(bad(stmt, lang, "`{rel:` has no closing `}`"));
        };
        let target = &rest[at + OPEN.len()..at + len];
        let file = file.ok_or_else(|| {
            bad(
                stmt,
                lang,
                "`{rel:PATH}` needs the path of the file it is added to",
            )
        })?;
        let module = relative_module(lang, target, file).map_err(|e| bad(stmt, lang, &e))?;
        out.push_str(&rest[..at]);
        out.push_str(&module);
        rest = &rest[at + len + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// The module `target` (a path from the repository root) as an import of the file at
/// `file` writes it.
fn relative_module(lang: Lang, target: &str, file: &str) -> Result<String, String> {
    let target = target.trim().trim_matches('/');
    let parts: Vec<&str> = target.split('/').collect();
    if target.is_empty()
        || parts
            .iter()
            .any(|p| p.is_empty() || *p == "." || *p == "..")
    {
        return Err(format!(
            "`{{rel:{target}}}`: PATH is a path from the repository root (no `.` or `..`)"
        ));
    }
    let mut dir: Vec<&str> = file.split('/').collect();
    dir.pop();
    let common = dir.iter().zip(&parts).take_while(|(a, b)| a == b).count();
    let ups = dir.len() - common;
    let rest = &parts[common..];
    match family(lang) {
        Some(Family::Js) => {
            let mut path: Vec<&str> = vec![".."; ups];
            path.extend(rest);
            Ok(match (ups, path.is_empty()) {
                (_, true) => ".".to_string(),
                (0, false) => format!("./{}", path.join("/")),
                _ => path.join("/"),
            })
        }
        Some(Family::Python) => {
            let mut names: Vec<&str> = rest.to_vec();
            if let Some(last) = names.last_mut() {
                *last = last.strip_suffix(".py").unwrap_or(last);
            }
            if names.last() == Some(&"__init__") {
                names.pop();
            }
            Ok(format!("{}{}", ".".repeat(ups + 1), names.join(".")))
        }
        _ => Err("`{rel:PATH}` is for JavaScript, TypeScript and Python imports".to_string()),
    }
}

fn bad(stmt: &str, lang: Lang, detail: &str) -> Error {
    Error::BadImport {
        stmt: stmt.to_string(),
        detail: format!("in {lang}, {detail}"),
    }
}

/// The one import `stmt` is.
fn read_statement(family: Family, lang: Lang, stmt: &str) -> Result<Import, Error> {
    let root = super::parse(&complete(family, stmt), lang)?;
    if super::has_parse_error(&root) {
        return Err(bad(stmt, lang, "it does not parse"));
    }
    let mut found = read_imports(family, &root.root());
    match family {
        // Rust's `use m::{a, b}` reads as one import per name: they are one statement.
        Family::Rust if found.iter().all(|i| i.module == found[0].module) && !found.is_empty() => {
            let mut first = found.remove(0);
            first
                .bindings
                .extend(found.into_iter().flat_map(|i| i.bindings));
            Ok(first)
        }
        _ if found.len() == 1 => Ok(found.remove(0)),
        _ if found.is_empty() => Err(bad(stmt, lang, "it is no import statement")),
        _ => Err(bad(stmt, lang, "it imports from more than one module")),
    }
}

/// Whether `b` of `want` is bound in the file already.
fn covered(have: &[Import], want: &Import, b: &Binding) -> bool {
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
fn merge(
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

fn splice(src: &str, range: Range<usize>, text: &str) -> String {
    let mut out = String::with_capacity(src.len() + text.len());
    out.push_str(&src[..range.start]);
    out.push_str(text);
    out.push_str(&src[range.end..]);
    out
}

/// Every top-level import of the file, in order.
fn read_imports(family: Family, top: &N<'_>) -> Vec<Import> {
    let mut out = Vec::new();
    for node in top.children() {
        if family == Family::Kotlin && node.kind() == "import_list" {
            for header in node.children() {
                out.extend(read_one(family, &header));
            }
            continue;
        }
        out.extend(read_one(family, &node));
    }
    out
}

/// The imports one top-level node makes (none when it is no import).
fn read_one(family: Family, node: &N<'_>) -> Vec<Import> {
    match (family, node.kind().as_ref()) {
        (Family::Js, "import_statement") => read_js(node).into_iter().collect(),
        (Family::Python, "import_statement") => read_python_plain(node),
        (Family::Python, "import_from_statement" | "future_import_statement") => {
            read_python_from(node).into_iter().collect()
        }
        (Family::Rust, "use_declaration") => {
            let mut out = Vec::new();
            if let Some(arg) = node.field("argument") {
                read_rust(node.range(), &arg, "", &mut out);
            }
            out
        }
        (Family::Go, "import_declaration") => read_go(node),
        (Family::Java, "import_declaration") => read_java(node).into_iter().collect(),
        (Family::Kotlin, "import_header") => read_kotlin(node).into_iter().collect(),
        (Family::CSharp, "using_directive") => read_csharp(node).into_iter().collect(),
        _ => Vec::new(),
    }
}

/// A string literal's contents.
fn unquote(text: &str) -> String {
    let t = text.trim();
    let q = |c: char| c == '"' || c == '\'' || c == '`';
    t.trim_start_matches(q).trim_end_matches(q).to_string()
}

fn has_token(node: &N<'_>, token: &str) -> bool {
    node.children().any(|c| !c.is_named() && c.kind() == token)
}

fn read_js(node: &N<'_>) -> Option<Import> {
    let source = node.field("source")?;
    let mut import = Import::new(node.range(), unquote(&source.text()));
    import.type_only = has_token(node, "type");
    let Some(clause) = node.children().find(|c| c.kind() == "import_clause") else {
        return Some(import);
    };
    let mut default = None;
    let mut named = None;
    for part in clause.children() {
        match part.kind().as_ref() {
            "identifier" => {
                default = Some(part.range());
                import.bindings.push(Binding {
                    kind: Kind::Default,
                    imported: "default".to_string(),
                    local: part.text().to_string(),
                    type_only: import.type_only,
                    spec: part.text().to_string(),
                    node: part.range(),
                });
            }
            "namespace_import" => {
                let local = part.children().find(|c| c.kind() == "identifier");
                import.bindings.push(Binding {
                    kind: Kind::Namespace,
                    imported: "*".to_string(),
                    local: local.map(|l| l.text().to_string()).unwrap_or_default(),
                    type_only: import.type_only,
                    spec: part.text().to_string(),
                    node: part.range(),
                });
            }
            "named_imports" => {
                named = Some(part.range());
                let specs: Vec<_> = part
                    .children()
                    .filter(|c| c.kind() == "import_specifier")
                    .collect();
                import.append_at = specs.last().map(|last| last.range());
                for spec in specs {
                    let name = spec.field("name").map(|n| n.text().to_string());
                    let alias = spec.field("alias").map(|n| n.text().to_string());
                    let name = name.unwrap_or_default();
                    import.bindings.push(Binding {
                        kind: Kind::Named,
                        local: alias.unwrap_or_else(|| name.clone()),
                        imported: name,
                        type_only: import.type_only || has_token(&spec, "type"),
                        spec: spec.text().to_string(),
                        node: spec.range(),
                    });
                }
            }
            _ => {}
        }
    }
    let namespace = import.bindings.iter().any(|b| b.kind == Kind::Namespace);
    if !namespace {
        match (default, named) {
            (Some(d), None) => import.after_default = Some(d.end),
            (None, Some(n)) => import.before_named = Some(n.start),
            _ => {}
        }
    }
    Some(import)
}

/// `name` or `name as alias` of a Python import.
fn python_name(node: &N<'_>) -> (String, Option<String>) {
    match node.kind().as_ref() {
        "aliased_import" => (
            node.field("name")
                .map(|n| n.text().to_string())
                .unwrap_or_default(),
            node.field("alias").map(|n| n.text().to_string()),
        ),
        _ => (node.text().to_string(), None),
    }
}

fn read_python_plain(node: &N<'_>) -> Vec<Import> {
    let names: Vec<_> = node.field_children("name").collect();
    let alone = names.len() == 1;
    names
        .iter()
        .map(|n| {
            let (module, alias) = python_name(n);
            let mut import = Import::new(node.range(), module.clone());
            let local = alias.unwrap_or_else(|| module.split('.').next().unwrap_or("").to_string());
            import.bindings.push(Binding {
                kind: Kind::Module,
                imported: module,
                local,
                type_only: false,
                spec: n.text().to_string(),
                node: if alone { node.range() } else { n.range() },
            });
            import
        })
        .collect()
}

fn read_python_from(node: &N<'_>) -> Option<Import> {
    let module = match node.kind().as_ref() {
        "future_import_statement" => "__future__".to_string(),
        _ => node.field("module_name")?.text().to_string(),
    };
    let mut import = Import::new(node.range(), module);
    import.wildcard = node.children().any(|c| c.kind() == "wildcard_import");
    let names: Vec<_> = node.field_children("name").collect();
    import.append_at = names.last().map(|n| n.range());
    for n in &names {
        let (name, alias) = python_name(n);
        import.bindings.push(Binding {
            kind: Kind::Named,
            local: alias.unwrap_or_else(|| name.clone()),
            imported: name,
            type_only: false,
            spec: n.text().to_string(),
            node: n.range(),
        });
    }
    Some(import)
}

/// Reads the use tree `node` under the path `prefix` (`a::b::`, or empty) into one
/// import per name.
fn read_rust(stmt: Range<usize>, node: &N<'_>, prefix: &str, out: &mut Vec<Import>) {
    let leaf = |path: String, alias: Option<String>, spec_node: &N<'_>, out: &mut Vec<Import>| {
        let (module, name) = match path.rsplit_once("::") {
            Some((m, n)) => (m.to_string(), n.to_string()),
            None => (String::new(), path.clone()),
        };
        let mut import = Import::new(stmt.clone(), module.clone());
        let local = match (&alias, name.as_str()) {
            (Some(a), _) => a.clone(),
            (None, "self") => module.rsplit("::").next().unwrap_or("").to_string(),
            (None, _) => name.clone(),
        };
        let spec = match &alias {
            Some(a) => format!("{name} as {a}"),
            None => name.clone(),
        };
        import.bindings.push(Binding {
            kind: Kind::Named,
            imported: name,
            local,
            type_only: false,
            spec,
            node: spec_node.range(),
        });
        out.push(import);
    };
    let text = |n: &N<'_>| n.text().split_whitespace().collect::<String>();
    match node.kind().as_ref() {
        "scoped_use_list" => {
            let path = node.field("path").map(|p| text(&p)).unwrap_or_default();
            let inner = format!("{prefix}{path}::");
            let Some(list) = node.field("list") else {
                return;
            };
            let items: Vec<_> = list.children().filter(|c| c.is_named()).collect();
            let first = out.len();
            for item in &items {
                read_rust(stmt.clone(), item, &inner, out);
            }
            // Names of this group merge into it.
            let module = format!("{prefix}{path}");
            let end = items.last().map(|l| l.range());
            match out[first..].iter_mut().find(|i| i.module == module) {
                Some(i) => i.append_at = end,
                None => {
                    let mut group = Import::new(stmt, module);
                    group.append_at = end;
                    out.push(group);
                }
            }
        }
        "use_list" => {
            for item in node.children().filter(|c| c.is_named()) {
                read_rust(stmt.clone(), &item, prefix, out);
            }
        }
        "use_as_clause" => {
            let path = node.field("path").map(|p| text(&p)).unwrap_or_default();
            let alias = node.field("alias").map(|a| a.text().to_string());
            leaf(format!("{prefix}{path}"), alias, node, out);
        }
        "use_wildcard" => {
            let path = text(node);
            let module = format!(
                "{prefix}{}",
                path.trim_end_matches('*').trim_end_matches("::")
            );
            let mut import = Import::new(stmt, module);
            import.wildcard = true;
            out.push(import);
        }
        _ => {
            let path = format!("{prefix}{}", text(node));
            let whole = prefix.is_empty() && node.kind() == "scoped_identifier";
            leaf(path.clone(), None, node, out);
            if whole {
                // `use m::a;`: a path that can become `m::{a, …}`.
                if let (Some(import), Some((module, _))) = (out.last_mut(), path.rsplit_once("::"))
                {
                    import.regroup = Some((node.range(), module.to_string()));
                }
            }
        }
    }
}

fn read_go(node: &N<'_>) -> Vec<Import> {
    let specs: Vec<_> = match node.children().find(|c| c.kind() == "import_spec_list") {
        Some(list) => list
            .children()
            .filter(|c| c.kind() == "import_spec")
            .collect(),
        None => node
            .children()
            .filter(|c| c.kind() == "import_spec")
            .collect(),
    };
    specs
        .iter()
        .filter_map(|spec| {
            let path = unquote(&spec.field("path")?.text());
            let local = match spec.field("name") {
                Some(n) => n.text().to_string(),
                None => path.rsplit('/').next().unwrap_or("").to_string(),
            };
            let mut import = Import::new(node.range(), path.clone());
            import.bindings.push(Binding {
                kind: Kind::Module,
                imported: path,
                local,
                type_only: false,
                spec: spec.text().to_string(),
                node: spec.range(),
            });
            Some(import)
        })
        .collect()
}

/// A dotted import (`a.b.C`, `a.b.*`, `a.b.C as D`) of Java or Kotlin.
fn dotted(stmt: Range<usize>, path: &str, wildcard: bool, alias: Option<String>) -> Import {
    if wildcard {
        let mut import = Import::new(stmt, path.to_string());
        import.wildcard = true;
        return import;
    }
    let (module, name) = path.rsplit_once('.').unwrap_or(("", path));
    let mut import = Import::new(stmt.clone(), module.to_string());
    import.bindings.push(Binding {
        kind: Kind::Named,
        imported: name.to_string(),
        local: alias.unwrap_or_else(|| name.to_string()),
        type_only: false,
        spec: name.to_string(),
        node: stmt,
    });
    import
}

fn read_java(node: &N<'_>) -> Option<Import> {
    let path = node
        .children()
        .find(|c| matches!(c.kind().as_ref(), "scoped_identifier" | "identifier"))?;
    let wildcard = node.children().any(|c| c.kind() == "asterisk");
    let path = path.text().split_whitespace().collect::<String>();
    let path = match has_token(node, "static") {
        true => format!("static {path}"),
        false => path,
    };
    Some(dotted(node.range(), &path, wildcard, None))
}

fn read_kotlin(node: &N<'_>) -> Option<Import> {
    let path = node.children().find(|c| c.kind() == "identifier")?;
    let wildcard = node.children().any(|c| c.kind() == "wildcard_import");
    let alias = node
        .children()
        .find(|c| c.kind() == "import_alias")
        .and_then(|a| a.children().find(|c| c.kind() == "type_identifier"))
        .map(|t| t.text().to_string());
    let path = path.text().split_whitespace().collect::<String>();
    Some(dotted(node.range(), &path, wildcard, alias))
}

fn read_csharp(node: &N<'_>) -> Option<Import> {
    let alias = node.field("name").map(|n| n.text().to_string());
    let target = node
        .children()
        .filter(|c| c.is_named() && Some(c.range()) != node.field("name").map(|n| n.range()))
        .last()?;
    let mut module = target.text().split_whitespace().collect::<String>();
    if has_token(node, "static") {
        module = format!("static {module}");
    }
    let mut import = Import::new(node.range(), module.clone());
    import.bindings.push(Binding {
        kind: Kind::Module,
        local: alias.unwrap_or_else(|| module.clone()),
        imported: module,
        type_only: false,
        spec: node.text().to_string(),
        node: node.range(),
    });
    Some(import)
}

/// Go: `spec` into the first import declaration: into its block, sorted among its
/// specs when they are, or the single import turned into a block.
fn go_merge(top: &N<'_>, src: &str, want: &Import) -> Option<String> {
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

fn line_start(src: &str, at: usize) -> usize {
    src[..at].rfind('\n').map_or(0, |i| i + 1)
}

fn line_ending(src: &str) -> &'static str {
    if super::uses_crlf(src) {
        "\r\n"
    } else {
        "\n"
    }
}

/// `stmt` with what its language requires and a user may leave out: the `;` of Rust,
/// Java and C#, Go's `import` keyword.
fn complete(family: Family, stmt: &str) -> String {
    let stmt = stmt.trim();
    match family {
        Family::Rust | Family::Java | Family::CSharp if !stmt.ends_with(';') => format!("{stmt};"),
        Family::Go if !stmt.starts_with("import") => format!("import {stmt}"),
        _ => stmt.to_string(),
    }
}

/// `stmt` as a new statement of this file: its quotes and semicolons follow the
/// file's imports (or, without any, whether its statements end in `;`).
fn styled_statement(
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
fn insert_statement(family: Family, top: &N<'_>, src: &str, have: &[Import], text: &str) -> String {
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

/// Whether the file uses `name` outside its imports: as a bare identifier (a shorthand
/// property and a re-export are ones), or, in Python, inside a string annotation
/// (`-> "List[User]"`). A member name (`x.name`, a key, a field, the last segment of
/// a Rust path `a::name`, a Python keyword argument) never refers to an import.
fn referenced(family: Family, top: &N<'_>, name: &str, have: &[Import]) -> bool {
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
fn removal(
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

mod python;
#[cfg(test)]
mod tests;
