//! Compiling the rule documents read: each into a [`Rule`], on every core, the
//! results taken in file order (a repeated id refused, `severity: off` rules set apart).

use std::collections::BTreeMap;

use crate::lang::Lang;
use ast_grep_config::DeserializeEnv;
use ast_grep_config::GlobalRules;
use ast_grep_config::RuleConfig;
use ast_grep_config::SerializableRuleConfig;
use ast_grep_core::matcher::Matcher;
use ast_grep_core::Language;
use serde::Deserialize;
use serde_value::Value;

use super::checks::blame_field;
use super::checks::check_fields;
use super::checks::check_import_vars;
use super::checks::config_error_field;
use super::checks::edits_of;
use super::checks::find_id_line;
use super::checks::globs;
use super::checks::message_template;
use super::checks::own_keys;
use super::checks::text_need;
use super::checks::Blame;
use super::checks::Globals;
use super::config::chain;
use super::hex_digest;
use super::loader::Doc;
use super::loader::Loader;
use super::serves;
use super::Error;
use super::Rule;
use super::RuleHead;
use super::RuleSet;
use super::Severity;
use super::TopLevelForm;
use super::DEFAULT_MAX_PASSES;
use super::OWN_FIELDS;
use crate::rewrite::imports::ImportFix;
use crate::scan::need;

impl<'r> Loader<'r> {
    /// Compiles the rules read: all of them, or (`only`) those with these ids (a
    /// partial set for files whose results are not cached: ids are not checked for
    /// duplicates, the rest is not checked at all).
    pub(super) fn finish(
        mut self,
        only: Option<&std::collections::HashSet<&str>>,
    ) -> Result<RuleSet, Error> {
        self.parse(None)?;
        self.compile_parsed(only, None)
    }

    /// Like [`Loader::finish`] with `only`, parsing only the rule files in `files`
    /// (where the plan says those rules were read from).
    pub(super) fn finish_some(
        mut self,
        only: &std::collections::HashSet<&str>,
        files: &std::collections::HashSet<&str>,
    ) -> Result<RuleSet, Error> {
        self.parse(Some(files))?;
        self.compile_parsed(Some(only), None)
    }

    /// As [`Loader::finish`]; with `lang`, only the rules that may run on a file of
    /// that language (see [`Unplanned::compile_for`]) and the documents whose
    /// language does not read (compiled to say why).
    pub(super) fn compile_parsed(
        self,
        only: Option<&std::collections::HashSet<&str>>,
        lang: Option<Lang>,
    ) -> Result<RuleSet, Error> {
        // Built before the utils are taken, its error said after theirs.
        let language_globs = self.built_language_globs();
        let needs = need::GlobalUtils::new(&self.utils);
        let rules = if self.utils.is_empty() {
            GlobalRules::default()
        } else {
            DeserializeEnv::parse_global_utils(self.utils).map_err(|e| Error::BadConfigFile {
                file: "utilDirs".into(),
                detail: chain(&e),
            })?
        };
        let globals = Globals {
            rules,
            needs,
            ignored_custom: self.ignored_custom,
        };
        let language_globs = language_globs?;
        let mut rules: Vec<Rule> = Vec::new();
        let mut disabled = Vec::new();
        let mut disabled_configs = Vec::new();
        let mut warnings = self.warnings;
        let mut seen: BTreeMap<String, String> = BTreeMap::new();
        let injections = &self.injections;
        let wanted = |value: &Value| {
            let field = |key: &str| match value {
                Value::Map(map) => map.get(&Value::String(key.into())),
                _ => None,
            };
            if let Some(lang) = lang {
                let rule_lang = match field("language") {
                    Some(Value::String(name)) => name.parse::<Lang>().ok(),
                    _ => None,
                };
                return rule_lang.is_none_or(|r| serves(lang, r, injections));
            }
            let Some(only) = only else { return true };
            matches!(field("id"), Some(Value::String(id)) if only.contains(id.as_str()))
        };
        let docs: Vec<(Doc, Value)> = self
            .docs
            .into_iter()
            .filter_map(|mut doc| doc.value.take().map(|v| (doc, v)))
            .filter(|(_, value)| wanted(value))
            .collect();
        // Each rule compiles on its own (a collection of a hundred rules is compiled
        // on every core); the results are taken in file order, so the first error,
        // the warnings and the rules' order are what one at a time would give.
        let texts = &self.texts;
        let compiled: Vec<CompiledDoc> = {
            use rayon::prelude::*;
            docs.into_par_iter()
                .map(|(doc, value)| {
                    let mut notes = Notes::default();
                    let text = &texts[doc.text_index];
                    let rule = compile(
                        value,
                        doc.ordinal,
                        &doc.file,
                        text,
                        &doc.base,
                        &globals,
                        &mut notes,
                    );
                    (doc.file, doc.text_index, rule, notes)
                })
                .collect()
        };
        let mut top_level_form: Vec<TopLevelForm> = Vec::new();
        for (file, text_index, rule, notes) in compiled {
            warnings.extend(notes.warnings);
            let yaml = self
                .paths
                .get(text_index)
                .is_some_and(|p| p.extension().is_some_and(|x| x == "yml" || x == "yaml"));
            if notes.top_level && yaml && !top_level_form.iter().any(|t| t.file == file) {
                top_level_form.push(TopLevelForm {
                    digest: hex_digest(&texts[text_index]),
                    file: file.clone(),
                });
            }
            let Some(rule) = rule? else {
                continue;
            };
            let (id, line) = match &rule {
                Compiled::Active(r) | Compiled::Off(r) => (r.id.clone(), r.line),
            };
            if let Some(first) = seen.insert(id.clone(), file.clone()) {
                let first = if first == file {
                    "this file".to_string()
                } else {
                    first
                };
                return Err(Error::BadRule {
                    file,
                    line,
                    rule: id,
                    field: "id".into(),
                    detail: format!("the id is already used by a rule in {first}"),
                });
            }
            match rule {
                Compiled::Active(rule) => rules.push(*rule),
                Compiled::Off(rule) => {
                    disabled.push(id);
                    disabled_configs.push(*rule);
                }
            }
        }
        let digest = {
            use sha2::Digest as _;
            let mut h = sha2::Sha256::new();
            for t in self.texts.iter().chain(self.sources.iter()) {
                h.update((t.len() as u64).to_le_bytes());
                h.update(t.as_bytes());
            }
            h.finalize().into()
        };
        Ok(RuleSet {
            rules,
            disabled,
            off_rules: disabled_configs,
            digest,
            sources: self.sources,
            max_passes: self.max_passes.unwrap_or(DEFAULT_MAX_PASSES),
            warnings,
            top_level_form,
            language_globs,
            injections: self.injections,
            no_ignore: self.no_ignore,
            // A custom language's extensions are globs too: a plan read back from the
            // cache must find those files as this run does.
            language_glob_specs: self
                .language_globs
                .into_iter()
                .chain(self.custom_languages)
                .collect(),
        })
    }
}

/// One rule document compiled apart: its file and text, the rule (or why not), its notes.
type CompiledDoc = (String, usize, Result<Option<Compiled>, Error>, Notes);

enum Compiled {
    Active(Box<Rule>),
    /// `severity: off`: checked and compiled like any rule, then left out (unless a
    /// severity given on the command line turns it on).
    Off(Box<Rule>),
}

/// Compiles one rule document; `None` for an empty document.
///
/// In steps: our own checks of its fields, then ast-grep's reading of what is left,
/// the text need, ast-grep's compilation, our `edits:`, and the rule we keep.
fn compile(
    value: Value,
    n: usize,
    file: &str,
    text: &str,
    base: &str,
    globals: &Globals,
    notes: &mut Notes,
) -> Result<Option<Compiled>, Error> {
    let map = match &value {
        Value::Map(map) => map,
        Value::Unit | Value::Option(None) => return Ok(None),
        _ => {
            return Err(Error::BadRule {
                file: file.into(),
                line: None,
                rule: format!("#{}", n + 1),
                field: "(rule)".into(),
                detail: "a rule must be a mapping of fields".into(),
            })
        }
    };
    let id = match map.get(&Value::String("id".into())) {
        Some(Value::String(id)) if !id.trim().is_empty() => id.clone(),
        _ => String::new(),
    };
    let blame = Blame {
        file,
        line: if id.is_empty() {
            None
        } else {
            find_id_line(text, &id)
        },
        rule: if id.is_empty() {
            format!("#{}", n + 1)
        } else {
            id.clone()
        },
    };
    check_fields(map, &id, globals, &blame)?;
    let own = own_keys(map, &blame)?;
    notes.top_level |= own.top_level;
    let imports = match &own.imports {
        None => ImportFix::default(),
        Some(v) => ImportFix::deserialize(v.clone()).map_err(|e| {
            blame.bad(
                "imports",
                format!("{e}: expected `imports: {{add: [STATEMENT…], remove: [NAME…]}}`"),
            )
        })?,
    };
    // What ast-grep reads: the rule without our keys.
    let ast_grep_value = Value::Map(
        map.iter()
            .filter(|(k, _)| !matches!(k, Value::String(k) if OWN_FIELDS.contains(&k.as_str())))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect(),
    );
    let serialized = match SerializableRuleConfig::<Lang>::deserialize(ast_grep_value.clone()) {
        Ok(s) => s,
        Err(e) => {
            let (field, detail) = blame_field(map, e.to_string());
            return Err(blame.bad(&field, detail));
        }
    };
    let get = |key: &str| map.get(&Value::String(key.into()));
    let files = globs(get("files")).map_err(|e| blame.bad("files", e))?;
    let ignores = globs(get("ignores")).map_err(|e| blame.bad("ignores", e))?;
    let expando = serialized.language.expando_char();
    // Before ast-grep compiles it: its matcher (and `potential_kinds`) would expand a
    // rule that blows up through its utils just the same, without end.
    let need = text_need(&serialized, globals, &blame)?;
    let config = RuleConfig::try_from(serialized, &globals.rules).map_err(|e| {
        // ast-grep quotes patterns in their internal form; show the user's `$`.
        let mut detail = chain(&e);
        if expando != '$' && !expando.is_ascii_alphanumeric() && expando != '_' {
            detail = detail.replace(expando, "$");
        }
        blame.bad(config_error_field(&e), detail)
    })?;
    let transforms: Vec<String> = config
        .transform
        .as_ref()
        .map(|t| t.keys().cloned().collect())
        .unwrap_or_default();
    check_import_vars(&imports, &config, &transforms).map_err(|e| blame.bad("imports", e))?;
    let edits = match &own.edits {
        None => Vec::new(),
        Some(v) => {
            edits_of(v, &ast_grep_value, &config, globals).map_err(|e| blame.bad("edits", e))?
        }
    };
    // Checked like any rule, then left out: a disabled rule must still be valid. Its
    // severity is the one given when it is turned on.
    let off = config.severity == ast_grep_config::Severity::Off;
    let severity = match config.severity {
        ast_grep_config::Severity::Off | ast_grep_config::Severity::Hint => Severity::Hint,
        ast_grep_config::Severity::Info => Severity::Info,
        ast_grep_config::Severity::Warning => Severity::Warning,
        ast_grep_config::Severity::Error => Severity::Error,
    };
    let mut said = Vec::new();
    let warnings = if off { &mut said } else { &mut notes.warnings };
    let message_template = message_template(&config, file, &id, warnings);
    let lang = config.language;
    let metadata = config
        .metadata
        .as_ref()
        .and_then(|m| serde_json::to_value(m).ok());
    let rule = Box::new(Rule {
        head: RuleHead {
            id,
            lang,
            severity,
            message: config.message.clone(),
            note: config.note.clone(),
            url: config.url.clone(),
            source: file.into(),
            line: blame.line,
            // A rule with `edits:` and no `fix` leaves its match and edits around it.
            fixable: !config.fixer.is_empty() || !edits.is_empty(),
            metadata,
            files,
            ignores,
            base: base.into(),
        },
        message_template,
        need,
        kinds: config
            .matcher
            .potential_kinds()
            .map(|set| set.iter().filter_map(|k| u16::try_from(k).ok()).collect()),
        imports: (!imports.is_empty())
            .then(|| crate::rewrite::imports::Plan::with_transforms(&imports, lang, &transforms)),
        edits,
        config,
    });
    Ok(Some(if off {
        Compiled::Off(rule)
    } else {
        Compiled::Active(rule)
    }))
}

/// What compiling one rule document says beside the rule.
#[derive(Default)]
struct Notes {
    warnings: Vec<String>,
    /// The rule has one of our keys at the top level, where ast-grep refuses it.
    top_level: bool,
}
