//! Our checks of one rule document around ast-grep's reading of it: its fields, our
//! own keys (`imports`, `edits`), its text need, message, imports and globs, and the
//! field an error is about.

use std::collections::BTreeMap;

use crate::lang::Lang;
use ast_grep_config::GlobalRules;
use ast_grep_config::RuleConfig;
use ast_grep_config::RuleConfigError;
use ast_grep_config::RuleCoreError;
use ast_grep_config::SerializableRuleConfig;
use ast_grep_core::replacer::TemplateFix;
use globset::GlobBuilder;
use globset::GlobSetBuilder;
use serde::Deserialize;
use serde_value::Value;

use super::config::chain;
use super::Error;
use super::Globs;
use super::OWN_FIELDS;
use super::RULE_FIELDS;
use crate::rewrite::imports::ImportFix;
use crate::scan::need;
use crate::scan::need::Need;

/// The global utility rules (`utilDirs`): compiled, and as text needs.
pub(super) struct Globals {
    pub(super) rules: GlobalRules,
    pub(super) needs: need::GlobalUtils,
    /// `customLanguages` not loaded (not allowed).
    pub(super) ignored_custom: Vec<String>,
}

/// Names a rule document in its errors: its file, the line of its id, and its id (or
/// `#N`, its place in the file, when it has none).
pub(super) struct Blame<'a> {
    pub(super) file: &'a str,
    pub(super) line: Option<usize>,
    pub(super) rule: String,
}

impl Blame<'_> {
    pub(super) fn bad(&self, field: &str, detail: String) -> Error {
        Error::BadRule {
            file: self.file.into(),
            line: self.line,
            rule: self.rule.clone(),
            field: field.into(),
            detail,
        }
    }
}

/// The key under a rule's `metadata:` that holds our keys (ast-grep keeps `metadata`
/// free-form, so a rule file using it stays an ast-grep rule file).
pub const METADATA_KEY: &str = "astedit";

/// A rule's own keys ([`OWN_FIELDS`]), from `metadata.astedit` or the top level.
pub(super) struct OwnKeys {
    pub(super) imports: Option<Value>,
    pub(super) edits: Option<Value>,
    /// Read from the top level (the older form, which locks ast-grep out).
    pub(super) top_level: bool,
}

/// Reads our keys from `metadata: {astedit: {imports, edits}}` or, as before, from the
/// top level of the rule; one key in both places, or an unknown key under
/// `metadata.astedit`, is refused.
pub(super) fn own_keys(map: &BTreeMap<Value, Value>, blame: &Blame) -> Result<OwnKeys, Error> {
    let key = |k: &str| Value::String(k.into());
    let nested = match map.get(&key("metadata")) {
        Some(Value::Map(meta)) => meta.get(&key(METADATA_KEY)),
        _ => None,
    };
    let nested = match nested {
        None | Some(Value::Unit) | Some(Value::Option(None)) => None,
        Some(Value::Map(m)) => Some(m),
        Some(_) => {
            return Err(blame.bad(
                "metadata.astedit",
                "expected a mapping of `imports` and `edits`".into(),
            ))
        }
    };
    let mut own = OwnKeys {
        imports: None,
        edits: None,
        top_level: false,
    };
    if let Some(nested) = nested {
        for k in nested.keys() {
            let known = matches!(k, Value::String(k) if OWN_FIELDS.contains(&k.as_str()));
            if !known {
                let name = match k {
                    Value::String(k) => k.clone(),
                    _ => "(not a string)".into(),
                };
                let close = OWN_FIELDS
                    .iter()
                    .find(|f| crate::text::edit_distance(&name, f) <= 2);
                let detail = match close {
                    Some(f) => format!("unknown field; did you mean '{f}'?"),
                    None => format!("unknown field; ours are {}", OWN_FIELDS.join(" and ")),
                };
                return Err(blame.bad(&format!("metadata.astedit.{name}"), detail));
            }
        }
    }
    for field in OWN_FIELDS {
        let top = map.get(&key(field)).cloned();
        let under = nested.and_then(|m| m.get(&key(field))).cloned();
        if top.is_some() && under.is_some() {
            return Err(blame.bad(
                field,
                format!("given twice, at the top level and under metadata.astedit; keep metadata.astedit.{field} (ast-grep refuses the top-level key)"),
            ));
        }
        own.top_level |= top.is_some();
        let value = top.or(under);
        match *field {
            "imports" => own.imports = value,
            _ => own.edits = value,
        }
    }
    Ok(own)
}

/// Our checks of a rule's fields before ast-grep reads it: an id, only known fields
/// (with a suggestion for a misspelt one), `language` and `rule` present, and no
/// language from a `customLanguages` entry that was not loaded.
pub(super) fn check_fields(
    map: &BTreeMap<Value, Value>,
    id: &str,
    globals: &Globals,
    blame: &Blame,
) -> Result<(), Error> {
    if id.is_empty() {
        return Err(blame.bad("id", "every rule needs a non-empty string id".into()));
    }
    for key in map.keys() {
        let Value::String(key) = key else {
            return Err(blame.bad("(rule)", "field names must be strings".into()));
        };
        if !RULE_FIELDS.contains(&key.as_str()) {
            let hint = suggest(key)
                .map(|s| format!("; did you mean '{s}'?"))
                .unwrap_or_default();
            return Err(blame.bad(key, format!("unknown field{hint}")));
        }
    }
    for required in ["language", "rule"] {
        if !map.contains_key(&Value::String(required.into())) {
            return Err(blame.bad(required, "missing".into()));
        }
    }
    if let Some(Value::String(lang)) = map.get(&Value::String("language".into())) {
        if globals.ignored_custom.contains(lang) {
            return Err(blame.bad(
                "language",
                format!(
                    "'{lang}' is one of sgconfig.yml's customLanguages, which is not loaded: {}",
                    crate::lang::NOT_LOADED
                ),
            ));
        }
    }
    Ok(())
}

/// The text a file must contain for the rule to match in it ([`need::of_rule`]), or
/// the error for a rule too large to expand.
pub(super) fn text_need(
    serialized: &SerializableRuleConfig<Lang>,
    globals: &Globals,
    blame: &Blame,
) -> Result<Option<Need>, Error> {
    let Ok(rule) = serde_json::to_value(&serialized.core.rule) else {
        return Ok(None);
    };
    let utils = serialized
        .core
        .utils
        .as_ref()
        .and_then(|u| serde_json::to_value(u).ok());
    need::of_rule(&rule, utils.as_ref(), serialized.language, &globals.needs).map_err(|too| {
        let detail = match too {
            need::TooLarge::Size => format!(
                "the rule stands for more than {} sub-rules once the utils its \
                 `matches` name are expanded (a util that names another several \
                 times at every level multiplies)",
                need::MAX_EXPANDED
            ),
            need::TooLarge::Depth => format!(
                "its `matches` go through a chain of more than {} utils",
                need::MAX_UTIL_DEPTH
            ),
        };
        blame.bad("rule", detail)
    })
}

/// The rule's message as a template of its metavariables and transforms. ast-grep
/// expands an unknown metavariable in a message to nothing; that is said once, here.
pub(super) fn message_template(
    config: &RuleConfig<Lang>,
    file: &str,
    id: &str,
    warnings: &mut Vec<String>,
) -> TemplateFix {
    let transform_keys: Vec<String> = config
        .transform
        .as_ref()
        .map(|t| t.keys().cloned().collect())
        .unwrap_or_default();
    let template = TemplateFix::with_transform(&config.message, &config.language, &transform_keys);
    let defined = config.matcher.defined_vars();
    let mut unknown: Vec<&str> = template
        .used_vars()
        .into_iter()
        .filter(|v| !defined.contains(v))
        .collect();
    unknown.sort_unstable();
    if !unknown.is_empty() {
        warnings.push(format!(
            "{file}: rule '{id}': the message uses ${}, which the rule does not capture (it prints as nothing)",
            unknown.join(", $")
        ));
    }
    template
}

/// An `imports:` statement or name may use only what the rule captures or makes with
/// `transform`: any other metavariable would never be filled in, and the import never
/// made.
pub(super) fn check_import_vars(
    imports: &ImportFix,
    config: &RuleConfig<Lang>,
    transforms: &[String],
) -> Result<(), String> {
    let defined = config.matcher.defined_vars();
    for text in imports.add.iter().chain(&imports.remove) {
        let unknown: Vec<&str> = crate::rewrite::metavariable_names(text)
            .into_iter()
            .filter(|v| !defined.contains(v) && !transforms.iter().any(|t| t == v))
            .collect();
        if !unknown.is_empty() {
            return Err(format!(
                "`{text}` uses ${}, which the rule neither captures nor makes with `transform`",
                unknown.join(", $")
            ));
        }
    }
    Ok(())
}

/// A rule's `edits:`, each entry's `fix` compiled as the rule's own `fix` would be (in
/// the rule, `fix` swapped for it): same metavariables, transforms and utils.
pub(super) fn edits_of(
    value: &Value,
    rule: &Value,
    config: &RuleConfig<Lang>,
    globals: &Globals,
) -> Result<Vec<super::super::captured::CapturedEdit>, String> {
    let Value::Map(rule) = rule else {
        return Err("a rule must be a mapping of fields".into());
    };
    let defined = config.matcher.defined_vars();
    super::super::captured::parse(value, &defined, |fix| {
        let mut with = rule.clone();
        with.insert(Value::String("fix".into()), fix.clone());
        let serialized = SerializableRuleConfig::<Lang>::deserialize(Value::Map(with))
            .map_err(|e| format!("fix: {e}"))?;
        let mut compiled = RuleConfig::try_from(serialized, &globals.rules)
            .map_err(|e| format!("fix: {}", chain(&e)))?;
        match compiled.fixer.len() {
            1 => Ok(compiled.fixer.remove(0)),
            _ => Err("fix: one template (or one fix object) per edit".into()),
        }
    })
}

/// Finds which top-level field makes a rule fail to deserialize: `rule` alone beside
/// `language`, then every other field beside both. Returns the field and the message.
pub(super) fn blame_field(map: &BTreeMap<Value, Value>, whole: String) -> (String, String) {
    let key = |k: &str| Value::String(k.into());
    let try_fields = |fields: &[&str]| -> Result<(), String> {
        let mut part = BTreeMap::new();
        part.insert(key("id"), Value::String("probe".into()));
        for f in fields {
            if let Some(v) = map.get(&key(f)) {
                part.insert(key(f), v.clone());
            }
        }
        SerializableRuleConfig::<Lang>::deserialize(Value::Map(part))
            .map(|_| ())
            .map_err(|e| e.to_string())
    };
    if let Some(lang) = map.get(&key("language")) {
        if let Err(e) = Lang::deserialize(lang.clone()) {
            return ("language".into(), e.to_string());
        }
    }
    if let Err(e) = try_fields(&["language", "rule"]) {
        return ("rule".into(), e);
    }
    for field in RULE_FIELDS {
        if matches!(*field, "language" | "rule" | "id") || !map.contains_key(&key(field)) {
            continue;
        }
        if let Err(e) = try_fields(&["language", "rule", field]) {
            return ((*field).into(), e);
        }
    }
    ("(rule)".into(), whole)
}

/// The field a compile error of ast-grep-config is about.
pub(super) fn config_error_field(e: &RuleConfigError) -> &'static str {
    match e {
        RuleConfigError::Core(core) => match core {
            RuleCoreError::Utils(_) => "utils",
            RuleCoreError::Constraints(_) => "constraints",
            RuleCoreError::Transform(_) => "transform",
            RuleCoreError::UndefinedMetaVar(_, place) => place,
            RuleCoreError::Yaml(_) | RuleCoreError::Rule(_) => "rule",
        },
        RuleConfigError::Fixer(_) => "fix",
        RuleConfigError::Rewriter(_) => "rewriters",
        RuleConfigError::UndefinedRewriter(_) => "transform",
        RuleConfigError::LabelVariable(_) => "labels",
        RuleConfigError::MissingPotentialKinds | RuleConfigError::Yaml(_) => "rule",
    }
}

/// ast-grep's file glob: a string, or `{glob, caseInsensitive}` (its own type is private).
#[derive(Deserialize)]
#[serde(untagged)]
enum GlobSpec {
    Glob(String),
    #[serde(rename_all = "camelCase")]
    Config {
        glob: String,
        #[serde(default)]
        case_insensitive: bool,
    },
}

pub(super) fn globs(value: Option<&Value>) -> Result<Option<Globs>, String> {
    let Some(value) = value else {
        return Ok(None);
    };
    let list = Vec::<GlobSpec>::deserialize(value.clone()).map_err(|e| e.to_string())?;
    let specs = list
        .into_iter()
        .map(|glob| match glob {
            GlobSpec::Glob(g) => (g, false),
            GlobSpec::Config {
                glob,
                case_insensitive,
            } => (glob, case_insensitive),
        })
        .collect();
    build_globs(specs).map(Some)
}

/// (glob, case-insensitive) pairs built into a set.
pub(super) fn build_globs(specs: Vec<(String, bool)>) -> Result<Globs, String> {
    let mut builder = GlobSetBuilder::new();
    for (glob, case_insensitive) in &specs {
        // The same construction as ast-grep's RuleCollection, so globs mean the same
        // (`Glob::new` is a builder with the defaults).
        let built = if *case_insensitive {
            GlobBuilder::new(glob).case_insensitive(true).build()
        } else {
            globset::Glob::new(glob)
        };
        builder.add(built.map_err(|e| e.to_string())?);
    }
    let set = builder.build().map_err(|e| e.to_string())?;
    Ok(Globs { specs, set })
}

/// The closest known field name, for typos like `pattrn` or `langauge`.
fn suggest(key: &str) -> Option<&'static str> {
    RULE_FIELDS
        .iter()
        .map(|f| (crate::text::edit_distance(key, f), *f))
        .filter(|(d, _)| *d <= 2)
        .min()
        .map(|(_, f)| f)
}

/// The 1-based line where `id: <id>` (YAML) or `id = "<id>"` (TOML) is written.
pub(super) fn find_id_line(text: &str, id: &str) -> Option<usize> {
    text.lines()
        .position(|line| {
            let t = line.trim_start().trim_start_matches("- ").trim_start();
            let Some(rest) = t.strip_prefix("id") else {
                return false;
            };
            let rest = rest.trim_start();
            let Some(rest) = rest.strip_prefix(':').or_else(|| rest.strip_prefix('=')) else {
                return false;
            };
            let value = rest.split(" #").next().unwrap_or("").trim();
            value.trim_matches(|c| c == '"' || c == '\'') == id
        })
        .map(|i| i + 1)
}
