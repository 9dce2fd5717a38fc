//! An [`ImportFix`] compiled for one language ([`Plan`]): its statements and names
//! filled in from each match, then added to and removed from the rewritten file, a
//! `{rel:PATH}` written relative to the file.

use ast_grep_core::replacer::Replacer;
use ast_grep_core::replacer::TemplateFix;
use ast_grep_core::tree_sitter::StrDoc;
use ast_grep_core::NodeMatch;

use super::add_or_conflict;
use super::bad;
use super::family;
use super::remove_unused;
use super::Added;
use super::Error;
use super::Family;
use super::ImportConflict;
use super::ImportFix;
use crate::lang::Lang;

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
            let vars: Vec<String> = super::super::metavariable_names(text)
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
