//! The steps as written: `[[steps]]` tables of an `astedit.toml`, each a rule set (inline
//! `rules` and `rule-files`, as `scan` reads them) or ops (`pattern`/`rewrite` or
//! `ops`, with `add-import`/`remove-import`, as `edit` takes them), and the values a
//! step exports to the steps after it. Resolving a step reads its rule files into its
//! own documents, so that a preview records every rule it ran and `refresh` needs no
//! file but the tree.

use std::collections::BTreeMap;
use std::collections::BTreeSet;
use std::path::Path;

use serde_value::Value;

use super::StepsError;
use crate::repo::Repo;

/// One `[[steps]]` table. After [`resolve`], `rule_files` is empty: their documents
/// are in `rules`, and `sources` names where they came from.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct StepSpec {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Rules written inline, as `[[rules]]` of astedit.toml.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rules: Vec<Value>,
    /// ast-grep rule YAML files, relative to the config file.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rule_files: Vec<String>,
    /// One op: its pattern and template.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pattern: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rewrite: Option<String>,
    /// Several ops, run in order on each file.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ops: Vec<OpSpec>,
    /// `edit --add-import`: imports to add in each file the ops change.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub add_import: Vec<String>,
    /// `edit --remove-import`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub remove_import: Vec<String>,
    /// Ops only: run on files of this language alone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lang: Option<String>,
    /// Ops only: `edit --selector`, the node kind of each pattern that matches (the
    /// pattern parsed as written).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selector: Option<String>,
    /// Values later steps may use as `$NAME`: a template over the step's captures per
    /// name (`NEW = "$NEW"`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub export: BTreeMap<String, String>,
    /// Where the rules of `rule-files` were read from (filled in by [`resolve`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sources: Vec<String>,
}

/// One op of a step.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OpSpec {
    pub pattern: String,
    pub rewrite: String,
}

impl StepSpec {
    /// Whether the step is a rule set (else it is ops).
    pub fn is_rules(&self) -> bool {
        !self.rules.is_empty() || !self.rule_files.is_empty()
    }

    /// The step's ops, `pattern`/`rewrite` first.
    pub fn all_ops(&self) -> Vec<OpSpec> {
        let one = match (&self.pattern, &self.rewrite) {
            (Some(p), Some(r)) => Some(OpSpec {
                pattern: p.clone(),
                rewrite: r.clone(),
            }),
            _ => None,
        };
        one.into_iter().chain(self.ops.iter().cloned()).collect()
    }

    /// The step with `$NAME` replaced by `values[NAME]` in every pattern, template,
    /// import and rule string (its `export` templates left as they are).
    pub fn filled(&self, values: &BTreeMap<String, String>) -> StepSpec {
        if values.is_empty() {
            return self.clone();
        }
        let fill = |s: &String| substitute(s, values);
        StepSpec {
            rules: self.rules.iter().map(|v| fill_value(v, values)).collect(),
            pattern: self.pattern.as_ref().map(fill),
            rewrite: self.rewrite.as_ref().map(fill),
            ops: self
                .ops
                .iter()
                .map(|o| OpSpec {
                    pattern: fill(&o.pattern),
                    rewrite: fill(&o.rewrite),
                })
                .collect(),
            add_import: self.add_import.iter().map(fill).collect(),
            remove_import: self.remove_import.iter().map(fill).collect(),
            ..self.clone()
        }
    }

    /// Every `$NAME` the step's patterns, templates, imports and rules mention.
    pub fn mentioned(&self) -> BTreeSet<String> {
        let mut out = BTreeSet::new();
        let mut texts: Vec<&str> = Vec::new();
        texts.extend(self.pattern.as_deref());
        texts.extend(self.rewrite.as_deref());
        for o in &self.ops {
            texts.push(&o.pattern);
            texts.push(&o.rewrite);
        }
        texts.extend(self.add_import.iter().map(String::as_str));
        texts.extend(self.remove_import.iter().map(String::as_str));
        for t in texts {
            out.extend(names(t));
        }
        for v in &self.rules {
            strings(v, &mut |s| out.extend(names(s)));
        }
        out
    }
}

/// How a step is named in messages: `step 2 (importers)`, or `step 2`.
pub fn label(number: usize, name: Option<&str>) -> String {
    match name {
        Some(n) => format!("step {number} ({n})"),
        None => format!("step {number}"),
    }
}

/// Whether `name` is written as a metavariable name (`NEW`, `OLD_NAME`, `A1`).
fn is_var_name(name: &str) -> bool {
    name.chars()
        .next()
        .is_some_and(|c| c.is_ascii_uppercase() || c == '_')
        && name
            .chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
}

fn is_var_char(c: char) -> bool {
    c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_'
}

/// The names written `$NAME` in `text` (a lone `$`, not `$$$NAME`).
pub fn names(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    scan_vars(text, |name| {
        out.push(name.to_string());
        None
    });
    out
}

/// `text` with each `$NAME` whose name `values` holds replaced by its value.
pub fn substitute(text: &str, values: &BTreeMap<String, String>) -> String {
    scan_vars(text, |name| values.get(name).cloned())
}

/// Walks `text`, handing each `$NAME` (one `$`, the longest run of name characters) to
/// `with`; returns the text with the names `with` gives a value for replaced.
fn scan_vars(text: &str, mut with: impl FnMut(&str) -> Option<String>) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let after = &rest[at..];
        let dollars = after.chars().take_while(|c| *c == '$').count();
        let tail = &after[dollars..];
        let len = tail.find(|c: char| !is_var_char(c)).unwrap_or(tail.len());
        let name = &tail[..len];
        let value = (dollars == 1 && is_var_name(name))
            .then(|| with(name))
            .flatten();
        match value {
            Some(v) => out.push_str(&v),
            None => out.push_str(&after[..dollars + len]),
        }
        rest = &tail[len..];
    }
    out.push_str(rest);
    out
}

/// Hands every string inside `v` (map values and list items, not keys) to `f`.
fn strings(v: &Value, f: &mut dyn FnMut(&str)) {
    match v {
        Value::String(s) => f(s),
        Value::Seq(items) => items.iter().for_each(|i| strings(i, f)),
        Value::Map(map) => map.values().for_each(|i| strings(i, f)),
        Value::Option(Some(inner)) | Value::Newtype(inner) => strings(inner, f),
        _ => {}
    }
}

/// `v` with `$NAME` filled in in every string (map values and list items).
fn fill_value(v: &Value, values: &BTreeMap<String, String>) -> Value {
    match v {
        Value::String(s) => Value::String(substitute(s, values)),
        Value::Seq(items) => Value::Seq(items.iter().map(|i| fill_value(i, values)).collect()),
        Value::Map(map) => Value::Map(
            map.iter()
                .map(|(k, i)| (k.clone(), fill_value(i, values)))
                .collect(),
        ),
        Value::Option(Some(inner)) => Value::Option(Some(Box::new(fill_value(inner, values)))),
        Value::Newtype(inner) => Value::Newtype(Box::new(fill_value(inner, values))),
        other => other.clone(),
    }
}

/// The `[[steps]]` of a config file; other keys are not read here.
#[derive(serde::Deserialize)]
struct StepsFile {
    #[serde(default)]
    steps: Vec<StepSpec>,
}

/// The steps of `config` (relative to the current folder; default: astedit.toml at the
/// root), checked and resolved ([`resolve`]), with the config file as shown.
pub fn load(repo: &Repo, config: Option<&Path>) -> Result<(Vec<StepSpec>, String), StepsError> {
    let path = match config {
        Some(c) => repo.cwd.join(c),
        None => repo.workdir.join(crate::scan::rules::ASTEDIT_TOML),
    };
    let shown = repo.display_path(&repo_path(repo, &path));
    let bad = |detail: String| StepsError::Config {
        file: shown.clone(),
        detail,
    };
    let text = std::fs::read_to_string(&path).map_err(|e| bad(format!("cannot read it: {e}")))?;
    let parsed: StepsFile =
        toml::from_str(&text).map_err(|e| bad(e.to_string().trim_end().to_string()))?;
    if parsed.steps.is_empty() {
        return Err(StepsError::NoSteps(shown));
    }
    let mut steps = Vec::with_capacity(parsed.steps.len());
    for (i, step) in parsed.steps.into_iter().enumerate() {
        let at = label(i + 1, step.name.as_deref());
        steps.push(resolve(repo, &path, step).map_err(|d| bad(format!("{at}: {d}")))?);
    }
    check(&steps).map_err(bad)?;
    Ok((steps, shown))
}

/// A path as a repository path when it is inside the work tree, else as it is.
fn repo_path(repo: &Repo, path: &Path) -> String {
    let abs = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    match abs.strip_prefix(&repo.workdir) {
        Ok(rel) => rel.to_string_lossy().replace('\\', "/"),
        Err(_) => abs.to_string_lossy().into_owned(),
    }
}

/// Checks one step's shape and reads its rule files (relative to the `config` file's
/// folder) into its rules; a config inside the repository names only files inside it.
fn resolve(repo: &Repo, config: &Path, mut step: StepSpec) -> Result<StepSpec, String> {
    let has_ops = step.pattern.is_some() || step.rewrite.is_some() || !step.ops.is_empty();
    match (step.is_rules(), has_ops) {
        (true, true) => {
            return Err(
                "give rules (rules, rule-files) or ops (pattern/rewrite, ops), not both".into(),
            )
        }
        (false, false) => return Err(
            "nothing to run: give rules (rules, rule-files) or ops (pattern and rewrite, or ops)"
                .into(),
        ),
        _ => {}
    }
    if step.pattern.is_some() != step.rewrite.is_some() {
        return Err("pattern and rewrite go together".into());
    }
    if step.is_rules()
        && (!step.add_import.is_empty()
            || !step.remove_import.is_empty()
            || step.lang.is_some()
            || step.selector.is_some())
    {
        return Err(
            "add-import, remove-import, lang and selector are for ops; a rule says `imports`, \
             `language` and its pattern's `selector` itself"
                .into(),
        );
    }
    if let Some(l) = &step.lang {
        crate::files::parse_language(l).map_err(|e| e.to_string())?;
    }
    for (name, template) in &step.export {
        if !is_var_name(name) {
            return Err(format!(
                "export: '{name}' is not a metavariable name (capitals, digits and _)"
            ));
        }
        if template.is_empty() {
            return Err(format!("export: {name} has an empty template"));
        }
    }
    let dir = config.parent().unwrap_or(Path::new("."));
    for entry in std::mem::take(&mut step.rule_files) {
        crate::scan::rules::check_inside(Some(repo), config, "", "rule-files", &entry).map_err(
            |e| match e {
                crate::scan::Error::BadConfigFile { detail, .. } => detail,
                other => other.to_string(),
            },
        )?;
        let file = dir.join(&entry);
        let shown = repo.display_path(&repo_path(repo, &file));
        let text = std::fs::read_to_string(&file)
            .map_err(|e| format!("rule-files: cannot read '{entry}': {e}"))?;
        let docs = crate::scan::rules::yaml_documents(&text, &shown).map_err(|e| e.to_string())?;
        step.rules.extend(docs);
        step.sources.push(shown);
    }
    Ok(step)
}

/// Checks the steps together: a name is exported by one step only.
pub fn check(steps: &[StepSpec]) -> Result<(), String> {
    let mut by: BTreeMap<&str, usize> = BTreeMap::new();
    for (i, step) in steps.iter().enumerate() {
        for name in step.export.keys() {
            if let Some(first) = by.insert(name, i + 1) {
                return Err(format!(
                    "{}: exports ${name}, which step {first} exports already",
                    label(i + 1, step.name.as_deref())
                ));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_lone_dollar_names_are_filled_in() {
        let values = BTreeMap::from([("OLD".to_string(), "getUser".to_string())]);
        assert_eq!(substitute("$OLD($$$A)", &values), "getUser($$$A)");
        assert_eq!(
            substitute("$OLDER + $$$OLD + $OLD", &values),
            "$OLDER + $$$OLD + getUser"
        );
        assert_eq!(substitute("a $ b $", &values), "a $ b $");
        assert_eq!(names("import { $OLD } from $M"), vec!["OLD", "M"]);
    }
}
