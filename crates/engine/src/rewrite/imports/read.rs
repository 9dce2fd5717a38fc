//! Reading imports: every top-level import of a file as the module and names it binds,
//! per language, and the one import a statement to add is.

use std::ops::Range;

use super::bad;
use super::Binding;
use super::Error;
use super::Family;
use super::Import;
use super::Kind;
use super::N;
use crate::lang::Lang;

/// The one import `stmt` is.
pub(super) fn read_statement(family: Family, lang: Lang, stmt: &str) -> Result<Import, Error> {
    let root = super::super::parse(&complete(family, stmt), lang)?;
    if super::super::has_parse_error(&root) {
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

/// `stmt` with what its language requires and a user may leave out: the `;` of Rust,
/// Java and C#, Go's `import` keyword.
pub(super) fn complete(family: Family, stmt: &str) -> String {
    let stmt = stmt.trim();
    match family {
        Family::Rust | Family::Java | Family::CSharp if !stmt.ends_with(';') => format!("{stmt};"),
        Family::Go if !stmt.starts_with("import") => format!("import {stmt}"),
        _ => stmt.to_string(),
    }
}

/// Every top-level import of the file, in order.
pub(super) fn read_imports(family: Family, top: &N<'_>) -> Vec<Import> {
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
pub(super) fn unquote(text: &str) -> String {
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
