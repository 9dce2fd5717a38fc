/*!
Loading rules: `astedit.toml`, ast-grep rule YAML files and `sgconfig.yml` projects.

Every rule, whatever file it comes from, is deserialized into ast-grep-config's own
`SerializableRuleConfig` and compiled by `RuleConfig::try_from`, so a rule means the same
here as in ast-grep. What this module adds is the error report: ast-grep's messages say
what is wrong but not where, and serde's errors for flattened structs lose the field. So
each rule document is first read as a generic value, and a failure is narrowed down to
one top-level field by deserializing that field alone beside the rule's `language` and
`rule`. The user then reads: the file, the line of the rule, its id, the field, why.
*/

use std::collections::BTreeMap;
use std::path::Path;
use std::path::PathBuf;

use crate::lang::Lang;
use ast_grep_config::DeserializeEnv;
use ast_grep_config::GlobalRules;
use ast_grep_config::RuleConfig;
use ast_grep_config::RuleConfigError;
use ast_grep_config::RuleCoreError;
use ast_grep_config::SerializableGlobalRule;
use ast_grep_config::SerializableRuleConfig;
use ast_grep_core::matcher::Matcher;
use ast_grep_core::replacer::TemplateFix;
use ast_grep_core::tree_sitter::LanguageExt;
use ast_grep_core::Language;
use globset::GlobBuilder;
use globset::GlobSet;
use globset::GlobSetBuilder;
use serde::Deserialize;
use serde_value::Value;

use super::need;
use super::need::Need;
use super::Error;
use crate::repo::Repo;
use crate::rewrite::imports::ImportFix;

/// The bound on fix re-runs when the config does not set one.
pub const DEFAULT_MAX_PASSES: usize = 10;

/// The most fix re-runs `max-passes` (or `--max-passes`) may ask for: each pass may
/// re-run every rule as many times, so a bound near 2^64 (a forged preview's recipe)
/// would never end.
pub const MAX_PASSES_CEILING: usize = 100;

/// `max-passes` as a config file gives it: 1 to [`MAX_PASSES_CEILING`].
fn check_max_passes(n: usize, file: &str) -> Result<usize, Error> {
    if (1..=MAX_PASSES_CEILING).contains(&n) {
        return Ok(n);
    }
    Err(Error::BadConfigFile {
        file: file.to_string(),
        detail: format!("max-passes must be from 1 to {MAX_PASSES_CEILING} (it is {n})"),
    })
}

/// File names looked for at the repository root when no `--config` is given.
pub const ASTEDIT_TOML: &str = "astedit.toml";
pub const SGCONFIG_NAMES: &[&str] = &["sgconfig.yml", "sgconfig.yaml"];

/// The top-level keys of an ast-grep rule (ast-grep-config keeps its list private).
const RULE_FIELDS: &[&str] = &[
    "id",
    "language",
    "rule",
    "constraints",
    "utils",
    "transform",
    "fix",
    "rewriters",
    "message",
    "note",
    "severity",
    "labels",
    "files",
    "ignores",
    "url",
    "metadata",
    // Ours (issue 37): not ast-grep's, taken out before ast-grep reads the rule.
    "imports",
    "edits",
];

/// The keys of [`RULE_FIELDS`] that are ours, not ast-grep's.
const OWN_FIELDS: &[&str] = &["imports", "edits"];

pub use crate::levels::Severity;

/// What a scan needs of a rule before any file is parsed: enough to choose its files,
/// key its results in the cache and report it. A scan whose files all hit the result
/// cache reads these from the cache's *plan* of the rule set and compiles no rule.
#[derive(Clone, serde::Serialize, serde::Deserialize)]
pub struct RuleHead {
    pub id: String,
    pub lang: Lang,
    pub severity: Severity,
    /// The message template as written (metavariables unexpanded).
    pub message: String,
    pub note: Option<String>,
    pub url: Option<String>,
    /// The file the rule was read from, as given or found.
    pub source: String,
    /// 1-based line of the rule's `id` in that file, when found.
    pub line: Option<usize>,
    /// The rule has a fix (the first one is used when ast-grep lists several).
    fixable: bool,
    /// The rule's `metadata`, as JSON (`--include-metadata`).
    pub metadata: Option<serde_json::Value>,
    files: Option<Globs>,
    ignores: Option<Globs>,
    /// Repository folder the globs are relative to (`""` for the root).
    base: String,
}

/// One compiled rule and where it came from (its [`RuleHead`], which it derefs to).
pub struct Rule {
    pub head: RuleHead,
    pub config: RuleConfig<Lang>,
    pub message_template: TemplateFix,
    /// Text a file must hold before the rule can match in it; `None`: no telling.
    need: Option<Need>,
    /// The node kinds the rule can match (`None`: any), for dispatching nodes by kind.
    pub kinds: Option<Vec<u16>>,
    /// The imports its fix adds and removes in each file it fixes (`imports:`).
    pub imports: Option<crate::rewrite::imports::Plan>,
    /// Edits of nodes it captured outside its match, made with its fix (`edits:`).
    pub edits: Vec<super::captured::CapturedEdit>,
}

impl std::ops::Deref for Rule {
    type Target = RuleHead;
    fn deref(&self) -> &RuleHead {
        &self.head
    }
}

impl std::ops::DerefMut for Rule {
    fn deref_mut(&mut self) -> &mut RuleHead {
        &mut self.head
    }
}

impl std::borrow::Borrow<RuleHead> for Rule {
    fn borrow(&self) -> &RuleHead {
        &self.head
    }
}

impl std::borrow::BorrowMut<RuleHead> for Rule {
    fn borrow_mut(&mut self) -> &mut RuleHead {
        &mut self.head
    }
}

impl Rule {
    /// False only when the rule cannot match anywhere in `text` (no parse needed).
    pub fn may_match(&self, text: &str) -> bool {
        self.need.as_ref().is_none_or(|n| n.holds(text))
    }
}

impl RuleHead {
    /// Whether the rule has `files` or `ignores` globs (which files of its language it
    /// runs on depends on their paths).
    pub fn has_globs(&self) -> bool {
        self.files.is_some() || self.ignores.is_some()
    }

    /// Whether the rule has a fix (the first one is used when ast-grep lists several).
    pub fn fixable(&self) -> bool {
        self.fixable
    }

    /// Whether the rule runs on a file of this path and language: on the file itself,
    /// or on the code of its language embedded in it (a JavaScript rule in an HTML
    /// file's `<script>`, as ast-grep's injections).
    pub fn runs_in(&self, path: &str, lang: Lang) -> bool {
        self.applies_to(path, lang) || (hosts(lang, self.lang) && self.applies_to(path, self.lang))
    }

    /// Whether the rule applies to a file of this repository path and language.
    pub fn applies_to(&self, path: &str, lang: Lang) -> bool {
        if self.lang != lang {
            return false;
        }
        if self.files.is_none() && self.ignores.is_none() {
            return true;
        }
        // Globs are relative to the folder of the config that declared them.
        let rel = if self.base.is_empty() {
            Some(path)
        } else {
            path.strip_prefix(&self.base)
                .and_then(|p| p.strip_prefix('/'))
        };
        if let (Some(ignores), Some(rel)) = (&self.ignores, rel) {
            if ignores.set.is_match(rel) {
                return false;
            }
        }
        match (&self.files, rel) {
            (Some(files), Some(rel)) => files.set.is_match(rel),
            (Some(_), None) => false,
            (None, _) => true,
        }
    }
}

/// A rule's `files` or `ignores`: the globs as written (what the plan keeps) and built.
#[derive(Clone)]
struct Globs {
    specs: Vec<(String, bool)>,
    set: GlobSet,
}

impl serde::Serialize for Globs {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.specs.serialize(s)
    }
}

impl<'de> serde::Deserialize<'de> for Globs {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Globs, D::Error> {
        let specs = Vec::<(String, bool)>::deserialize(d)?;
        build_globs(specs).map_err(serde::de::Error::custom)
    }
}

/// Whether files of `host` may embed code of `guest` (HTML: JavaScript, TypeScript and
/// CSS in `<script>` and `<style>`), as ast-grep's language injections.
pub fn hosts(host: Lang, guest: Lang) -> bool {
    host != guest
        && host.injectable_languages().is_some_and(|names| {
            names
                .iter()
                .any(|n| crate::files::parse_language(n).is_ok_and(|l| l == guest))
        })
}

/// Every rule to run, in the order they were declared.
pub struct RuleSet {
    pub rules: Vec<Rule>,
    /// Ids of rules with `severity: off` (loaded, checked, not run).
    pub disabled: Vec<String>,
    /// Those rules compiled, in the same order: `test --include-off` runs them, and a
    /// severity given on the command line for them (`--error` and kin, with their id
    /// or none) turns them on, as in ast-grep.
    pub off_rules: Vec<Rule>,
    /// The config files read, as displayed.
    pub sources: Vec<String>,
    /// Bound on fix re-runs (`max-passes` in astedit.toml).
    pub max_passes: usize,
    /// Things in the config that were read but not honoured.
    pub warnings: Vec<String>,
    /// The sgconfig's `languageGlobs`: which files are which language.
    pub language_globs: crate::files::LanguageGlobs,
    /// The sgconfig's `languageInjections` (styled templates and the like).
    pub injections: Vec<Injection>,
    /// A digest of every config text read (rules, utilities, globs): part of the
    /// result cache's key, so that an edited rule file never reuses old results.
    pub digest: [u8; 32],
    /// `languageGlobs` as written, for the plan.
    language_glob_specs: Vec<(String, Vec<String>)>,
    /// The sgconfig's `noIgnore`: the scan reads the files git ignores too.
    pub no_ignore: bool,
    /// The YAML rule files that put our keys at the top level (see [`TopLevelForm`]).
    pub top_level_form: Vec<TopLevelForm>,
}

/// A YAML rule file with `imports:` or `edits:` at a rule's top level, which ast-grep
/// refuses (`unknown field`), locking it out of the whole project; under
/// `metadata.astedit` it reads the file. Whether to say so is the caller's decision.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct TopLevelForm {
    /// The file, as displayed.
    pub file: String,
    /// The SHA-256 of its text, in hex.
    pub digest: String,
}

fn hex_digest(text: &str) -> String {
    use sha2::Digest as _;
    sha2::Sha256::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

impl RuleSet {
    /// Whether `rule` runs on a file of this path and language: on the file, or on
    /// code of the rule's language embedded in it (HTML's `<script>`, or where a
    /// `languageInjections` entry says).
    pub fn runs_in(&self, rule: &RuleHead, path: &str, lang: Lang) -> bool {
        rule.runs_in(path, lang)
            || (self
                .injections
                .iter()
                .any(|i| i.host == lang && i.candidates.contains(&rule.lang))
                && rule.applies_to(path, rule.lang))
    }

    /// The set without its compiled matchers.
    pub fn plan(&self) -> Plan {
        Plan {
            rules: self.rules.iter().map(|r| r.head.clone()).collect(),
            disabled: self.disabled.clone(),
            off: self.off_rules.iter().map(|r| r.head.clone()).collect(),
            sources: self.sources.clone(),
            max_passes: self.max_passes,
            warnings: self.warnings.clone(),
            top_level_form: self.top_level_form.clone(),
            language_glob_specs: self.language_glob_specs.clone(),
            language_globs: self.language_globs.clone(),
            injected: self
                .injections
                .iter()
                .map(|i| InjectedLangs {
                    host: i.host,
                    candidates: i.candidates.clone(),
                })
                .collect(),
            digest: self.digest,
            no_ignore: self.no_ignore,
        }
    }
}

/// A rule set without its compiled matchers: which rules run on which files, and what
/// the report says of them. The result cache keeps it beside the results (see
/// [`Rules`]).
#[derive(Clone, serde::Serialize, serde::Deserialize)]
pub struct Plan {
    pub rules: Vec<RuleHead>,
    pub disabled: Vec<String>,
    /// The off rules' heads, in `disabled`'s order, so a severity given for them can
    /// turn them on without compiling (no default: a plan cached without them is
    /// made again).
    pub off: Vec<RuleHead>,
    pub sources: Vec<String>,
    pub max_passes: usize,
    pub warnings: Vec<String>,
    /// As [`RuleSet::top_level_form`].
    #[serde(default)]
    pub top_level_form: Vec<TopLevelForm>,
    language_glob_specs: Vec<(String, Vec<String>)>,
    /// Built from `language_glob_specs` (again, when read from the cache).
    #[serde(skip)]
    pub language_globs: crate::files::LanguageGlobs,
    injected: Vec<InjectedLangs>,
    pub digest: [u8; 32],
    /// As [`RuleSet::no_ignore`].
    #[serde(default)]
    pub no_ignore: bool,
}

/// Which languages a `languageInjections` entry may embed in which host.
#[derive(Clone, serde::Serialize, serde::Deserialize)]
struct InjectedLangs {
    host: Lang,
    candidates: Vec<Lang>,
}

impl Plan {
    /// As [`RuleSet::runs_in`].
    pub fn runs_in(&self, rule: &RuleHead, path: &str, lang: Lang) -> bool {
        rule.runs_in(path, lang)
            || (self
                .injected
                .iter()
                .any(|i| i.host == lang && i.candidates.contains(&rule.lang))
                && rule.applies_to(path, rule.lang))
    }

    /// Whether `rule` runs on some file of `lang`; on every one when it has no
    /// `files` or `ignores` (then [`Plan::runs_in`] does not depend on the path).
    pub fn runs_on_language(&self, rule: &RuleHead, lang: Lang) -> bool {
        rule.lang == lang
            || hosts(lang, rule.lang)
            || self
                .injected
                .iter()
                .any(|i| i.host == lang && i.candidates.contains(&rule.lang))
    }

    /// A plan read back from the cache, its globs built; `None` if they do not build.
    fn decode(bytes: &[u8]) -> Option<Plan> {
        let mut plan: Plan = serde_json::from_slice(bytes).ok()?;
        plan.language_globs = crate::files::LanguageGlobs::new(
            plan.language_glob_specs
                .iter()
                .map(|(lang, globs)| (lang.as_str(), globs.clone())),
        )
        .ok()?;
        Some(plan)
    }
}

/// Whether a rule of `rule` may run on files of `lang`: its own, or embedded in them
/// (as [`Plan::runs_on_language`], from the compiled injections).
fn serves(lang: Lang, rule: Lang, injections: &[Injection]) -> bool {
    rule == lang
        || hosts(lang, rule)
        || injections
            .iter()
            .any(|i| i.host == lang && i.candidates.contains(&rule))
}

pub use crate::lang::Injection;

/// A `languageInjections` entry as written (ast-grep's schema).
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct SerializableInjection {
    #[serde(flatten)]
    core: ast_grep_config::SerializableRuleCore,
    host_language: String,
    injected: Injected,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum Injected {
    Static(String),
    Dynamic(Vec<String>),
}

/// `astedit.toml`: rules inline, plus optional ast-grep rule files.
#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct AsteditToml {
    #[serde(default)]
    rules: Vec<Value>,
    /// ast-grep rule YAML files or folders of them, relative to this file.
    #[serde(default)]
    rule_files: Vec<String>,
    /// Folders of ast-grep global utility rules, relative to this file.
    #[serde(default)]
    util_dirs: Vec<String>,
    #[serde(default)]
    max_passes: Option<usize>,
    /// `--fmt`'s formatters (read by `ops::fmt`, not here).
    #[serde(default)]
    #[allow(dead_code)]
    fmt: Option<Value>,
    /// `git astedit steps`' ordered steps (read by `ops::steps`, not here).
    #[serde(default)]
    #[allow(dead_code)]
    steps: Option<Value>,
}

/// The parts of an ast-grep `sgconfig.yml` that concern rules; other keys are ignored.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct SgConfig {
    #[serde(default)]
    rule_dirs: Vec<String>,
    #[serde(default)]
    util_dirs: Vec<String>,
    #[serde(default)]
    language_globs: Option<Value>,
    #[serde(default)]
    custom_languages: Option<Value>,
    #[serde(default)]
    language_injections: Option<Value>,
    /// ast-grep's `--no-ignore` values, for the project (a value or a list).
    #[serde(default)]
    no_ignore: Option<Value>,
}

/// Reads `noIgnore`: ast-grep's `--no-ignore` values (`hidden`, `dot`, `exclude`,
/// `global`, `parent`, `vcs`), one or a list. Whether the scan reads the files git
/// ignores: any of the last four (git's ignore sources are not told apart, as with
/// `grep --no-ignore`); hidden files are always read and `.ignore` files never.
fn no_ignore(value: &Value, file: &str) -> Result<bool, Error> {
    const VALUES: &[&str] = &["hidden", "dot", "exclude", "global", "parent", "vcs"];
    let bad = |detail: String| Error::BadConfigFile {
        file: file.to_string(),
        detail: format!("noIgnore: {detail}"),
    };
    let items = match value {
        Value::Seq(items) => items.clone(),
        Value::Unit | Value::Option(None) => Vec::new(),
        one => vec![one.clone()],
    };
    let mut reads_ignored = false;
    for item in items {
        let Value::String(name) = item else {
            return Err(bad("expected a list of ignore kinds".into()));
        };
        if !VALUES.contains(&name.as_str()) {
            return Err(bad(format!("'{name}' is not one of {}", VALUES.join(", "))));
        }
        reads_ignored |= !matches!(name.as_str(), "hidden" | "dot");
    }
    Ok(reads_ignored)
}

/// A rule document before compilation: its value and where it came from.
#[derive(Clone)]
struct Doc {
    /// `None`: every document of the text, not parsed yet.
    value: Option<Value>,
    /// The file, as displayed.
    file: String,
    text_index: usize,
    /// 0-based position among the file's documents (names a rule without an id).
    ordinal: usize,
    /// Repository folder its globs are relative to.
    base: String,
}

/// Accumulates documents and global utils while config files are read.
struct Loader<'r> {
    /// `None` for rules given as text (no files, no folders).
    repo: Option<&'r Repo>,
    docs: Vec<Doc>,
    /// Source texts, indexed by `Doc::text_index`, to find a rule's line.
    texts: Vec<String>,
    /// The file of each text (empty for a text not read from a file).
    paths: Vec<PathBuf>,
    utils: Vec<SerializableGlobalRule<Lang>>,
    /// Utility rule files read, not parsed yet: (text index, file as displayed).
    util_texts: Vec<(usize, String)>,
    sources: Vec<String>,
    max_passes: Option<usize>,
    warnings: Vec<String>,
    /// `languageGlobs`, as (language, globs) in the order read.
    language_globs: Vec<(String, Vec<String>)>,
    /// `customLanguages`, loaded: (name, `*.ext` globs), taken after `languageGlobs`
    /// and before the built-in extensions, as ast-grep does.
    custom_languages: Vec<(String, Vec<String>)>,
    /// `customLanguages` left unloaded (not allowed): a rule in one is refused saying so.
    ignored_custom: Vec<String>,
    injections: Vec<Injection>,
    /// Each `languageInjections` as written, and its file (to compile them again
    /// for [`Loader::fork`]).
    injection_specs: Vec<(Value, String)>,
    /// `noIgnore` asks for the files git ignores.
    no_ignore: bool,
}

/// Loads the rules: from `configs` when given (each a `.toml`, an `sgconfig.yml` or a
/// rule YAML file), else `astedit.toml` and `sgconfig.yml` at the repository root.
pub fn load(repo: &Repo, configs: &[PathBuf]) -> Result<RuleSet, Error> {
    read(repo, configs)?.finish(None)
}

/// Rules for a scan: their [`Plan`] at once, the compiled set when a file needs it.
///
/// With a result cache, the plan of a rule set is kept in the cache under a digest of
/// every config file's path and bytes (and the tool's version): a scan that finds it
/// reads and digests the config files but parses and compiles no rule until a file
/// misses the cache, so a scan of an unchanged tree costs what listing its files
/// costs. A plan is only ever written from a set that compiled.
pub struct Rules {
    pub plan: Plan,
    /// Every rule, compiled.
    set: std::sync::OnceLock<RuleSet>,
    /// Only the rules some files needed (the others' results were cached).
    some: std::sync::OnceLock<RuleSet>,
    /// The config files read, not yet compiled.
    pending: std::sync::Mutex<Option<Loader<'static>>>,
    /// The config files given, to read them again should all rules be needed after
    /// some were compiled.
    configs: Vec<PathBuf>,
    /// Severities set after loading (`None`: off), by rule id, for the compiled set too.
    overrides: Vec<(String, Option<Severity>)>,
}

impl From<RuleSet> for Rules {
    fn from(set: RuleSet) -> Rules {
        Rules {
            plan: set.plan(),
            set: std::sync::OnceLock::from(set),
            some: Default::default(),
            pending: Default::default(),
            configs: Vec::new(),
            overrides: Vec::new(),
        }
    }
}

impl Rules {
    /// Sets severities: `decide(id)` gives `Some(None)` to turn a rule off,
    /// `Some(Some(s))` for severity `s`, `None` to leave it. Off rules leave the run.
    pub fn set_severities(&mut self, decide: impl Fn(&str) -> Option<Option<Severity>>) {
        for head in self.plan.rules.iter().chain(&self.plan.off) {
            if let Some(decision) = decide(&head.id) {
                self.overrides.push((head.id.clone(), decision));
            }
        }
        let plan = &mut self.plan;
        let (rules, off) = (&mut plan.rules, &mut plan.off);
        apply_overrides(rules, off, &mut plan.disabled, &self.overrides);
        if let Some(set) = self.set.get_mut() {
            override_set(set, &self.overrides);
        }
    }

    /// Whether every rule is compiled already (no cost to [`Rules::compiled`]).
    pub fn is_compiled(&self) -> bool {
        self.set.get().is_some()
    }

    /// Every rule compiled, in the plan's order (compiled now if they were not).
    pub fn compiled(&self, repo: &Repo) -> Result<&RuleSet, Error> {
        if let Some(set) = self.set.get() {
            return Ok(set);
        }
        let mut pending = self.pending.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(set) = self.set.get() {
            return Ok(set);
        }
        let loader = match pending.take() {
            Some(loader) => loader,
            None => read(repo, &self.configs)?.detach(),
        };
        let mut set = loader.finish(None)?;
        override_set(&mut set, &self.overrides);
        let same = set.rules.len() == self.plan.rules.len()
            && set
                .rules
                .iter()
                .zip(&self.plan.rules)
                .all(|(r, h)| same_rule(r, h));
        if !same {
            return Err(Error::StalePlan);
        }
        Ok(self.set.get_or_init(|| set))
    }

    /// The rules named by `ids` compiled (others may be too): all of them when they
    /// are, else only these, once.
    pub fn compiled_some(
        &self,
        repo: &Repo,
        ids: &std::collections::HashSet<&str>,
    ) -> Result<&RuleSet, Error> {
        if let Some(set) = self.set.get().or(self.some.get()) {
            return Ok(set);
        }
        let mut pending = self.pending.lock().unwrap_or_else(|e| e.into_inner());
        let Some(loader) = pending.take() else {
            drop(pending);
            return self.compiled(repo);
        };
        let files: std::collections::HashSet<&str> = self
            .plan
            .rules
            .iter()
            .filter(|h| ids.contains(h.id.as_str()))
            .map(|h| h.source.as_str())
            .collect();
        let mut set = loader.finish_some(ids, &files)?;
        override_set(&mut set, &self.overrides);
        let found = set.rules.iter().all(|r| {
            self.plan
                .rules
                .iter()
                .any(|h| h.id == r.id && same_rule(r, h))
        }) && ids.iter().all(|id| set.rules.iter().any(|r| r.id == *id));
        if !found {
            return Err(Error::StalePlan);
        }
        Ok(self.some.get_or_init(|| set))
    }
}

/// Whether a compiled rule is the one a plan's head describes.
fn same_rule(rule: &Rule, head: &RuleHead) -> bool {
    rule.id == head.id && rule.lang == head.lang && rule.severity == head.severity
}

/// Applies severity overrides to a compiled set (see [`apply_overrides`]).
fn override_set(set: &mut RuleSet, overrides: &[(String, Option<Severity>)]) {
    apply_overrides(
        &mut set.rules,
        &mut set.off_rules,
        &mut set.disabled,
        overrides,
    );
}

/// The overrides on the rules that run and the off ones (heads or compiled), in
/// order: the last override of a rule wins. A rule turned off moves to `off` and its
/// id to `disabled`; an off rule given a severity (its file's `severity: off` too, as
/// ast-grep's `--error` turns it on) runs, after the others.
fn apply_overrides<R: std::borrow::BorrowMut<RuleHead>>(
    rules: &mut Vec<R>,
    off: &mut Vec<R>,
    disabled: &mut Vec<String>,
    overrides: &[(String, Option<Severity>)],
) {
    let last = |id: &str| overrides.iter().rev().find(|(o, _)| o == id).map(|o| o.1);
    let mut kept = Vec::with_capacity(rules.len());
    let mut still_off = Vec::with_capacity(off.len());
    let mut turned_on = Vec::new();
    for mut rule in std::mem::take(off) {
        let head: &mut RuleHead = rule.borrow_mut();
        match last(&head.id) {
            Some(Some(severity)) => {
                head.severity = severity;
                disabled.retain(|d| *d != head.id);
                turned_on.push(rule);
            }
            _ => still_off.push(rule),
        }
    }
    for mut rule in std::mem::take(rules) {
        let head: &mut RuleHead = rule.borrow_mut();
        match last(&head.id) {
            Some(None) => {
                disabled.push(head.id.clone());
                still_off.push(rule);
            }
            Some(Some(severity)) => {
                head.severity = severity;
                kept.push(rule);
            }
            None => kept.push(rule),
        }
    }
    kept.extend(turned_on);
    *rules = kept;
    *off = still_off;
}

/// Loads the rules for a scan (see [`Rules`]): from the cache's plan when it has one
/// for these config files, compiling them only when a file needs it; else compiled
/// now, and their plan stored.
pub fn open(
    repo: &Repo,
    configs: &[PathBuf],
    cache: Option<&crate::cache::Settings>,
) -> Result<Rules, Error> {
    let (loader, store) = match find_plan(repo, configs, cache)? {
        Found::Plan(rules) => return Ok(*rules),
        Found::Missing(missing) => *missing,
    };
    let set = loader.finish(None)?;
    if let (Some((bucket, key)), Ok(bytes)) = (store, serde_json::to_vec(&set.plan())) {
        bucket.put(&key, &bytes);
        bucket.finish();
    }
    Ok(Rules::from(set))
}

/// Rules read with no plan of them in the cache, nothing compiled (see
/// [`open_lazily`]).
pub struct Unplanned {
    /// Which files are which language, as the plan will say.
    pub language_globs: crate::files::LanguageGlobs,
    /// As [`RuleSet::no_ignore`].
    pub no_ignore: bool,
    loader: Loader<'static>,
    /// Where the plan is stored once every rule compiles.
    store: Option<(crate::cache::Settings, crate::cache::Key)>,
}

/// What [`open_lazily`] found.
pub enum Opened {
    /// The cache's plan of these config files: as [`open`] gives it.
    Planned(Box<Rules>),
    /// No plan: the config files read, no rule compiled.
    Unplanned(Box<Unplanned>),
}

impl Unplanned {
    /// Compiles the rules that may run on a file of `lang` (rules of `lang`, or of a
    /// language its files embed) as [`load`] compiles them, and no other rule: the
    /// others are not checked, nor the ids against theirs
    /// ([`Unplanned::compile_all`] does that).
    pub fn compile_for(&self, lang: Lang) -> Result<RuleSet, Error> {
        let mut loader = self.loader.fork()?;
        loader.parse(None)?;
        loader.compile_parsed(None, Some(lang))
    }

    /// Every rule compiled, from the texts read when the rules were opened, as
    /// [`open`] gives them; their plan is stored in the cache.
    pub fn compile_all(&self) -> Result<Rules, Error> {
        let set = self.loader.fork()?.finish(None)?;
        if let (Some((settings, key)), Ok(bytes)) = (&self.store, serde_json::to_vec(&set.plan())) {
            let bucket = crate::cache::Bucket::open(settings, key);
            bucket.put(key, &bytes);
            bucket.finish();
        }
        Ok(Rules::from(set))
    }
}

/// As [`open`] when the cache has the plan of these config files; else the files read
/// and nothing compiled (an editor compiles the rules the document shown needs, then
/// the others).
pub fn open_lazily(
    repo: &Repo,
    configs: &[PathBuf],
    cache: Option<&crate::cache::Settings>,
) -> Result<Opened, Error> {
    let (loader, store) = match find_plan(repo, configs, cache)? {
        Found::Plan(rules) => return Ok(Opened::Planned(rules)),
        Found::Missing(missing) => *missing,
    };
    match loader.built_language_globs() {
        Ok(language_globs) => Ok(Opened::Unplanned(Box::new(Unplanned {
            language_globs,
            no_ignore: loader.no_ignore,
            loader: loader.detach(),
            store: store
                .zip(cache)
                .map(|((_, key), settings)| (settings.clone(), key)),
        }))),
        // The error a compile of every rule gives (a broken utility rule's first).
        Err(e) => Err(loader.finish(None).err().unwrap_or(e)),
    }
}

/// The config files read, and the cache's plan of them or where to store it.
enum Found<'r> {
    Plan(Box<Rules>),
    Missing(
        Box<(
            Loader<'r>,
            Option<(crate::cache::Bucket, crate::cache::Key)>,
        )>,
    ),
}

fn find_plan<'r>(
    repo: &'r Repo,
    configs: &[PathBuf],
    cache: Option<&crate::cache::Settings>,
) -> Result<Found<'r>, Error> {
    let loader = read(repo, configs)?;
    let Some(settings) = cache else {
        return Ok(Found::Missing(Box::new((loader, None))));
    };
    let key = {
        let mut k = crate::cache::KeyBuilder::new("rule-plan");
        // Where the rules are shown from (sources and rule files are displayed
        // relative to the current folder) and every file read, by path and bytes.
        k.add(repo.workdir.as_os_str().as_encoded_bytes())
            .add(repo.cwd.as_os_str().as_encoded_bytes());
        for s in &loader.sources {
            k.add(s.as_bytes());
        }
        for (path, text) in loader.paths.iter().zip(&loader.texts) {
            k.add(path.as_os_str().as_encoded_bytes())
                .add(text.as_bytes());
        }
        k.finish()
    };
    let bucket = crate::cache::Bucket::open(settings, &key);
    if let Some(plan) = bucket.get(&key).and_then(Plan::decode) {
        return Ok(Found::Plan(Box::new(Rules {
            plan,
            set: Default::default(),
            some: Default::default(),
            pending: std::sync::Mutex::new(Some(loader.detach())),
            configs: configs.to_vec(),
            overrides: Vec::new(),
        })));
    }
    Ok(Found::Missing(Box::new((loader, Some((bucket, key))))))
}

/// Reads the config files (see [`load`]), compiling nothing yet.
fn read<'r>(repo: &'r Repo, configs: &[PathBuf]) -> Result<Loader<'r>, Error> {
    let mut loader = Loader::new(Some(repo));
    if configs.is_empty() {
        let toml = repo.workdir.join(ASTEDIT_TOML);
        if toml.is_file() {
            loader.toml_file(&toml)?;
        }
        if let Some(sg) = SGCONFIG_NAMES
            .iter()
            .map(|n| repo.workdir.join(n))
            .find(|p| p.is_file())
        {
            loader.sgconfig_file(&sg)?;
        }
        if loader.sources.is_empty() {
            return Err(Error::NoConfig);
        }
    } else {
        for path in configs {
            let path = repo.cwd.join(path);
            if !path.is_file() {
                return Err(Error::ConfigMissing(display(Some(repo), &path)));
            }
            let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
            if name.ends_with(".toml") {
                loader.toml_file(&path)?;
            } else if SGCONFIG_NAMES.contains(&name) || looks_like_sgconfig(&path) {
                loader.sgconfig_file(&path)?;
            } else {
                // A lone rule file's globs are relative to the repository root.
                loader.yaml_rule_file(&path, "")?;
                loader.sources.push(display(Some(repo), &path));
            }
        }
        // Only rule files (`-r`): the project's utility rules serve them, as in
        // ast-grep 0.51.
        if rule_files_only(repo, configs) {
            loader.project_utils()?;
        }
    }
    Ok(loader)
}

/// Whether `configs` are rule files only (`-r FILE`, or a rule YAML file as `-c`): no
/// `astedit.toml` or `sgconfig.yml` project among them.
pub fn rule_files_only(repo: &Repo, configs: &[PathBuf]) -> bool {
    !configs.is_empty()
        && !configs.iter().any(|c| {
            let name = c.file_name().and_then(|n| n.to_str()).unwrap_or("");
            name.ends_with(".toml")
                || SGCONFIG_NAMES.contains(&name)
                || looks_like_sgconfig(&repo.cwd.join(c))
        })
}

/// Rules given as YAML text on the command line (`--inline-rules`), with the utility
/// rules of the project's `sgconfig.yml` (its `utilDirs`), as in ast-grep 0.51.
pub fn from_inline(repo: &Repo, text: &str) -> Result<RuleSet, Error> {
    let mut loader = text_loader(Some(repo), text, TextFormat::Yaml, "--inline-rules")?;
    loader.project_utils()?;
    loader.finish(None)
}

/// Rules given as documents already read (a step of `git astedit steps`: its inline
/// rules and the documents of its rule files, with its variables filled in), with the
/// utility rules of the project's `sgconfig.yml`. `name` stands for the file in
/// errors; globs are relative to the repository root.
pub fn from_values(repo: &Repo, docs: Vec<Value>, name: &str) -> Result<RuleSet, Error> {
    let mut loader = Loader::new(Some(repo));
    loader.texts.push(String::new());
    loader.paths.push(PathBuf::new());
    loader.sources.push(name.to_string());
    for (ordinal, value) in docs.into_iter().enumerate() {
        loader.docs.push(Doc {
            value: Some(value),
            file: name.to_string(),
            text_index: 0,
            ordinal,
            base: String::new(),
        });
    }
    loader.project_utils()?;
    loader.finish(None)
}

/// The documents of an ast-grep rule YAML text, unread (`name` stands for the file in
/// errors).
pub fn yaml_documents(text: &str, name: &str) -> Result<Vec<Value>, Error> {
    ast_grep_config::from_multiple(text).map_err(|e| Error::BadConfigFile {
        file: name.to_string(),
        detail: yaml_error(&e),
    })
}

/// The `customLanguages` an `sgconfig.yml` declares (`config`, displayed as `file`),
/// read but not loaded.
fn custom_specs(
    value: &Value,
    config: &Path,
    file: &str,
) -> Result<Vec<crate::lang::CustomSpec>, Error> {
    let bad = |detail: String| Error::BadConfigFile {
        file: file.to_string(),
        detail: format!("customLanguages: {detail}"),
    };
    let Value::Map(map) = value else {
        return Err(bad("expected a mapping of language names".into()));
    };
    let dir = config.parent().unwrap_or(Path::new("."));
    let mut out = Vec::new();
    for (name, spec) in map {
        let Value::String(name) = name else {
            return Err(bad("language names must be strings".into()));
        };
        let Value::Map(spec) = spec else {
            return Err(bad(format!("{name}: expected a mapping")));
        };
        let field = |key: &str| spec.get(&Value::String(key.into()));
        let text = |key: &str| -> Result<Option<String>, Error> {
            match field(key) {
                None | Some(Value::Unit) | Some(Value::Option(None)) => Ok(None),
                Some(Value::String(s)) => Ok(Some(s.clone())),
                Some(_) => Err(bad(format!("{name}: {key} must be a string"))),
            }
        };
        let one_char = |key: &str| -> Result<Option<char>, Error> {
            match text(key)? {
                None => Ok(None),
                Some(s) => {
                    let mut chars = s.chars();
                    match (chars.next(), chars.next()) {
                        (Some(c), None) => Ok(Some(c)),
                        _ => Err(bad(format!("{name}: {key} must be one character"))),
                    }
                }
            }
        };
        let library = match field("libraryPath") {
            Some(Value::String(p)) => p.clone(),
            Some(Value::Map(per)) => {
                let target = env!("ASTEDIT_TARGET");
                match per.get(&Value::String(target.into())) {
                    Some(Value::String(p)) => p.clone(),
                    _ => {
                        return Err(bad(format!(
                            "{name}: libraryPath names no library for this platform \
                             ({target})"
                        )))
                    }
                }
            }
            None => return Err(bad(format!("{name}: libraryPath is missing"))),
            Some(_) => return Err(bad(format!("{name}: libraryPath must be a path"))),
        };
        let extensions = match field("extensions") {
            None => Vec::new(),
            Some(Value::Seq(items)) => items
                .iter()
                .map(|v| match v {
                    Value::String(e) => Ok(e.trim_start_matches('.').to_string()),
                    _ => Err(bad(format!("{name}: extensions must be strings"))),
                })
                .collect::<Result<_, _>>()?,
            Some(_) => return Err(bad(format!("{name}: extensions must be a list"))),
        };
        out.push(crate::lang::CustomSpec {
            name: name.clone(),
            library: dir.join(&library),
            library_shown: library,
            symbol: text("languageSymbol")?,
            meta_var: one_char("metaVarChar")?,
            expando: one_char("expandoChar")?,
            extensions,
        });
    }
    Ok(out)
}

/// The `customLanguages` of the `sgconfig.yml` at the root of `repo` (none without
/// one), read but not loaded, with the file as shown: what `git astedit allow` lists.
pub fn project_custom_languages(
    repo: &Repo,
) -> Result<Vec<(String, crate::lang::CustomSpec)>, Error> {
    let Some(path) = SGCONFIG_NAMES
        .iter()
        .map(|n| repo.workdir.join(n))
        .find(|p| p.is_file())
    else {
        return Ok(Vec::new());
    };
    let file = display(Some(repo), &path);
    let text = std::fs::read_to_string(&path).map_err(|e| Error::BadConfigFile {
        file: file.clone(),
        detail: format!("cannot read it: {e}"),
    })?;
    let parsed: SgConfig = ast_grep_config::from_str(&text).map_err(|e| Error::BadConfigFile {
        file: file.clone(),
        detail: yaml_error(&e),
    })?;
    let Some(custom) = &parsed.custom_languages else {
        return Ok(Vec::new());
    };
    Ok(custom_specs(custom, &path, &file)?
        .into_iter()
        .map(|spec| (file.clone(), spec))
        .collect())
}

/// The `languageGlobs`, `customLanguages` (loaded) and `languageInjections` of an
/// ast-grep project, for `grep` and `edit`: from `config` (an `sgconfig.yml`, relative
/// to the current folder) when given, else from the `sgconfig.yml` at the root; none
/// without one.
pub fn project_language_globs(
    repo: &Repo,
    config: Option<&Path>,
) -> Result<crate::files::LanguageGlobs, Error> {
    let path = match config {
        Some(path) => {
            let path = repo.cwd.join(path);
            if !path.is_file() {
                return Err(Error::ConfigMissing(display(Some(repo), &path)));
            }
            path
        }
        None => match SGCONFIG_NAMES
            .iter()
            .map(|n| repo.workdir.join(n))
            .find(|p| p.is_file())
        {
            Some(path) => path,
            None => return Ok(crate::files::LanguageGlobs::default()),
        },
    };
    let mut loader = Loader::new(Some(repo));
    let index = loader.read(&path)?;
    let file = display(Some(repo), &path);
    let parsed: SgConfig =
        ast_grep_config::from_str(&loader.texts[index]).map_err(|e| Error::BadConfigFile {
            file: file.clone(),
            detail: yaml_error(&e),
        })?;
    if let Some(custom) = &parsed.custom_languages {
        loader.custom_languages(custom, &path, &file)?;
    }
    if let Some(globs) = &parsed.language_globs {
        loader.language_globs(globs, &file)?;
    }
    if let Some(injections) = &parsed.language_injections {
        loader.language_injections(injections, &file)?;
    }
    let mut globs = crate::files::LanguageGlobs::new(
        loader
            .language_globs
            .iter()
            .chain(&loader.custom_languages)
            .map(|(lang, globs)| (lang.as_str(), globs.clone())),
    )
    .map_err(|detail| Error::BadConfigFile {
        file,
        detail: format!("languageGlobs: {detail}"),
    })?;
    globs.injections = std::sync::Arc::new(loader.injections);
    Ok(globs)
}

/// The syntax of rules given as text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TextFormat {
    /// An `astedit.toml` (inline `[[rules]]` only).
    Toml,
    /// One or more ast-grep rule documents.
    Yaml,
}

/// Every `.yml`/`.yaml` file under `dir`, in path order (so rule order is stable).
/// Symbolic links inside `dir` are not followed, to a folder or to a file (as
/// ast-grep's walk): a link may lead out of the repository, or back into a folder
/// above it, which would make the walk endless.
pub fn yaml_files(dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    let mut entries: Vec<(PathBuf, std::fs::FileType)> = std::fs::read_dir(dir)?
        .filter_map(|e| {
            let e = e.ok()?;
            Some((e.path(), e.file_type().ok()?))
        })
        .collect();
    entries.sort_by(|a, b| a.0.cmp(&b.0));
    for (p, kind) in entries {
        if kind.is_dir() {
            yaml_files(&p, out)?;
        } else if kind.is_file() && p.extension().is_some_and(|e| e == "yml" || e == "yaml") {
            out.push(p);
        }
    }
    Ok(())
}

/// Refuses a folder or file that a project file inside the repository names outside
/// it (symbolic links resolved): a clone's `sgconfig.yml` (CI running a pull
/// request's) must not make a scan read the runner's other files. A config from
/// outside the repository (given with `-c`) is the person's own and names anything.
pub fn check_inside(
    repo: Option<&Repo>,
    config: &Path,
    file: &str,
    key: &str,
    entry: &str,
) -> Result<(), Error> {
    let Some(repo) = repo else {
        return Ok(());
    };
    let canonical = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    let root = canonical(&repo.workdir);
    let dir = canonical(config.parent().unwrap_or(Path::new(".")));
    if !dir.starts_with(&root) {
        return Ok(());
    }
    let target = dir.join(entry);
    // A path that does not exist is reported where it is read.
    let Ok(resolved) = std::fs::canonicalize(&target) else {
        return Ok(());
    };
    if resolved.starts_with(&root) {
        return Ok(());
    }
    Err(Error::BadConfigFile {
        file: file.to_string(),
        detail: format!(
            "{key}: '{entry}' is outside the repository (a project file names only \
             folders and files inside it)"
        ),
    })
}

/// Compiles rules given as text rather than files (tests, agents). Globs are relative to
/// the repository root; `rule-files` and `util-dirs` need files on disk and are refused.
pub fn from_text(text: &str, format: TextFormat, name: &str) -> Result<RuleSet, Error> {
    text_loader(None, text, format, name)?.finish(None)
}

/// Rules given as text, read and not compiled.
fn text_loader<'r>(
    repo: Option<&'r Repo>,
    text: &str,
    format: TextFormat,
    name: &str,
) -> Result<Loader<'r>, Error> {
    let mut loader = Loader::new(repo);
    loader.texts.push(text.to_string());
    loader.paths.push(PathBuf::new());
    loader.sources.push(name.to_string());
    let bad = |detail: String| Error::BadConfigFile {
        file: name.to_string(),
        detail,
    };
    let values: Vec<Value> = match format {
        TextFormat::Toml => {
            let parsed: AsteditToml =
                toml::from_str(text).map_err(|e| bad(e.to_string().trim_end().to_string()))?;
            if !parsed.rule_files.is_empty() || !parsed.util_dirs.is_empty() {
                return Err(bad(
                    "rule-files and util-dirs need a config file on disk".into()
                ));
            }
            loader.max_passes = parsed
                .max_passes
                .map(|n| check_max_passes(n, name))
                .transpose()?;
            parsed.rules
        }
        TextFormat::Yaml => {
            ast_grep_config::from_multiple(text).map_err(|e| bad(yaml_error(&e)))?
        }
    };
    for (ordinal, value) in values.into_iter().enumerate() {
        loader.docs.push(Doc {
            value: Some(value),
            file: name.to_string(),
            text_index: 0,
            ordinal,
            base: String::new(),
        });
    }
    Ok(loader)
}

impl<'r> Loader<'r> {
    /// Nothing read yet; `repo` is `None` for rules given as text.
    fn new(repo: Option<&'r Repo>) -> Loader<'r> {
        Loader {
            repo,
            docs: Vec::new(),
            warnings: Vec::new(),
            texts: Vec::new(),
            paths: Vec::new(),
            utils: Vec::new(),
            util_texts: Vec::new(),
            sources: Vec::new(),
            max_passes: None,
            language_globs: Vec::new(),
            custom_languages: Vec::new(),
            ignored_custom: Vec::new(),
            injections: Vec::new(),
            injection_specs: Vec::new(),
            no_ignore: false,
        }
    }

    fn read(&mut self, path: &Path) -> Result<usize, Error> {
        let text = std::fs::read_to_string(path).map_err(|source| Error::ReadConfig {
            file: display(self.repo, path),
            source,
        })?;
        self.texts.push(text);
        self.paths.push(path.to_path_buf());
        Ok(self.texts.len() - 1)
    }

    /// The same, with no repository to show paths from: compiling needs none.
    fn detach(self) -> Loader<'static> {
        Loader {
            repo: None,
            docs: self.docs,
            texts: self.texts,
            paths: self.paths,
            utils: self.utils,
            util_texts: self.util_texts,
            sources: self.sources,
            max_passes: self.max_passes,
            warnings: self.warnings,
            language_globs: self.language_globs,
            custom_languages: self.custom_languages,
            ignored_custom: self.ignored_custom,
            injections: self.injections,
            injection_specs: self.injection_specs,
            no_ignore: self.no_ignore,
        }
    }

    /// A copy of what was read, with no repository (compiling needs none), to compile
    /// some rules now and every one later from the same texts.
    fn fork(&self) -> Result<Loader<'static>, Error> {
        let mut fork = Loader {
            repo: None,
            docs: self.docs.clone(),
            texts: self.texts.clone(),
            paths: self.paths.clone(),
            utils: self.utils.clone(),
            util_texts: self.util_texts.clone(),
            sources: self.sources.clone(),
            max_passes: self.max_passes,
            warnings: self.warnings.clone(),
            language_globs: self.language_globs.clone(),
            custom_languages: self.custom_languages.clone(),
            ignored_custom: self.ignored_custom.clone(),
            injections: Vec::new(),
            injection_specs: Vec::new(),
            no_ignore: self.no_ignore,
        };
        for (value, file) in &self.injection_specs {
            fork.language_injections(value, file)?;
        }
        Ok(fork)
    }

    /// The repository folder of a config file: where its globs are rooted.
    fn base_of(&self, path: &Path) -> String {
        let Some(repo) = self.repo else {
            return String::new();
        };
        path.parent()
            .and_then(|p| p.strip_prefix(&repo.workdir).ok())
            .map(|p| {
                p.components()
                    .map(|c| c.as_os_str().to_string_lossy().into_owned())
                    .collect::<Vec<_>>()
                    .join("/")
            })
            .unwrap_or_default()
    }

    fn toml_file(&mut self, path: &Path) -> Result<(), Error> {
        let index = self.read(path)?;
        let file = display(self.repo, path);
        let parsed: AsteditToml =
            toml::from_str(&self.texts[index]).map_err(|e| Error::BadConfigFile {
                file: file.clone(),
                detail: e.to_string().trim_end().to_string(),
            })?;
        let base = self.base_of(path);
        for (ordinal, value) in parsed.rules.into_iter().enumerate() {
            self.docs.push(Doc {
                value: Some(value),
                file: file.clone(),
                text_index: index,
                ordinal,
                base: base.clone(),
            });
        }
        if let Some(n) = parsed.max_passes {
            self.max_passes = Some(check_max_passes(n, &file)?);
        }
        let dir = path.parent().unwrap_or(Path::new("."));
        for entry in &parsed.rule_files {
            check_inside(self.repo, path, &file, "rule-files", entry)?;
            let target = dir.join(entry);
            if target.is_dir() {
                self.yaml_dir(&target, &base)?;
            } else if target.is_file() {
                self.yaml_rule_file(&target, &base)?;
            } else {
                return Err(Error::BadConfigFile {
                    file,
                    detail: format!("rule-files: '{entry}' does not exist"),
                });
            }
        }
        for entry in &parsed.util_dirs {
            check_inside(self.repo, path, &file, "util-dirs", entry)?;
            self.util_dir(&dir.join(entry))?;
        }
        self.sources.push(file);
        Ok(())
    }

    /// Reads `languageGlobs`: a mapping from a language name to a list of globs (or
    /// one glob).
    fn language_globs(&mut self, value: &Value, file: &str) -> Result<(), Error> {
        let bad = |detail: String| Error::BadConfigFile {
            file: file.to_string(),
            detail: format!("languageGlobs: {detail}"),
        };
        let Value::Map(map) = value else {
            return Err(bad("expected a mapping from a language to its globs".into()));
        };
        for (lang, globs) in map {
            let Value::String(lang) = lang else {
                return Err(bad("a language name must be a string".into()));
            };
            let globs: Vec<String> = match globs {
                Value::String(g) => vec![g.clone()],
                Value::Seq(items) => items
                    .iter()
                    .map(|g| match g {
                        Value::String(g) => Ok(g.clone()),
                        _ => Err(bad(format!("{lang}: a glob must be a string"))),
                    })
                    .collect::<Result<_, _>>()?,
                _ => return Err(bad(format!("{lang}: expected a list of globs"))),
            };
            crate::files::parse_language(lang).map_err(|e| bad(e.to_string()))?;
            self.language_globs.push((lang.clone(), globs));
        }
        Ok(())
    }

    /// Loads `customLanguages` (ast-grep's schema: `{name: {libraryPath, extensions,
    /// languageSymbol, metaVarChar, expandoChar}}`, `libraryPath` relative to the
    /// config's folder, or a map from target triple to path): each one the person
    /// allowed ([`crate::lang::custom_allowed`]); the others are left unloaded, with a
    /// warning naming the library and its consent digest.
    fn custom_languages(&mut self, value: &Value, config: &Path, file: &str) -> Result<(), Error> {
        let root = self.repo.map(|r| r.workdir.as_path());
        for spec in custom_specs(value, config, file)? {
            let digest = crate::lang::custom_digest(&spec, root);
            if !crate::lang::custom_allowed(digest.as_deref().ok()) {
                let digest = digest.unwrap_or_else(|e| format!("unreadable: {e}"));
                self.warnings.push(format!(
                    "{file}: customLanguages: {} ({}, {digest}) is not loaded: {}",
                    spec.name,
                    spec.library_shown,
                    crate::lang::NOT_LOADED
                ));
                self.ignored_custom.push(spec.name);
                continue;
            }
            crate::lang::load_custom(&spec).map_err(|e| Error::CustomLanguage {
                file: file.to_string(),
                error: e,
            })?;
            let globs = spec.extensions.iter().map(|e| format!("*.{e}")).collect();
            self.custom_languages.push((spec.name, globs));
        }
        Ok(())
    }

    /// Compiles `languageInjections`: a list of ast-grep rules with a `hostLanguage`
    /// and the language (or `$LANG` candidates) `injected` at their `$CONTENT`.
    fn language_injections(&mut self, value: &Value, file: &str) -> Result<(), Error> {
        let bad = |detail: String| Error::BadConfigFile {
            file: file.to_string(),
            detail: format!("languageInjections: {detail}"),
        };
        let Value::Seq(entries) = value else {
            return Err(bad("expected a list of injections".into()));
        };
        for (n, entry) in entries.iter().enumerate() {
            let parsed = SerializableInjection::deserialize(entry.clone())
                .map_err(|e| bad(format!("#{}: {e}", n + 1)))?;
            let host = crate::files::parse_language(&parsed.host_language)
                .map_err(|e| bad(format!("#{}: hostLanguage: {e}", n + 1)))?;
            let matcher = parsed
                .core
                .get_matcher(DeserializeEnv::new(host))
                .map_err(|e| bad(format!("#{}: {}", n + 1, chain(&e))))?;
            let names = match &parsed.injected {
                Injected::Static(one) => vec![one.clone()],
                Injected::Dynamic(many) => many.clone(),
            };
            let candidates = names
                .iter()
                .map(|name| crate::files::parse_language(name))
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| bad(format!("#{}: injected: {e}", n + 1)))?;
            let default = match parsed.injected {
                Injected::Static(_) => candidates.first().copied(),
                Injected::Dynamic(_) => None,
            };
            self.injections.push(Injection {
                host,
                matcher,
                default,
                candidates,
            });
        }
        self.injection_specs.push((value.clone(), file.to_string()));
        Ok(())
    }

    fn sgconfig_file(&mut self, path: &Path) -> Result<(), Error> {
        let index = self.read(path)?;
        let file = display(self.repo, path);
        let parsed: SgConfig =
            ast_grep_config::from_str(&self.texts[index]).map_err(|e| Error::BadConfigFile {
                file: file.clone(),
                detail: yaml_error(&e),
            })?;
        // Custom languages first: globs, injections and rules may name them.
        if let Some(custom) = &parsed.custom_languages {
            self.custom_languages(custom, path, &file)?;
        }
        if let Some(globs) = &parsed.language_globs {
            self.language_globs(globs, &file)?;
        }
        if let Some(injections) = &parsed.language_injections {
            self.language_injections(injections, &file)?;
        }
        if let Some(value) = &parsed.no_ignore {
            self.no_ignore |= no_ignore(value, &file)?;
        }
        let base = self.base_of(path);
        let dir = path.parent().unwrap_or(Path::new("."));
        for entry in &parsed.util_dirs {
            check_inside(self.repo, path, &file, "utilDirs", entry)?;
            self.util_dir(&dir.join(entry))?;
        }
        for entry in &parsed.rule_dirs {
            check_inside(self.repo, path, &file, "ruleDirs", entry)?;
            let target = dir.join(entry);
            if !target.is_dir() {
                return Err(Error::BadConfigFile {
                    file,
                    detail: format!("ruleDirs: '{entry}' is not a folder"),
                });
            }
            self.yaml_dir(&target, &base)?;
        }
        self.sources.push(file);
        Ok(())
    }

    fn list_yaml(&self, dir: &Path) -> Result<Vec<PathBuf>, Error> {
        let mut files = Vec::new();
        yaml_files(dir, &mut files).map_err(|source| Error::ReadConfig {
            file: display(self.repo, dir),
            source,
        })?;
        Ok(files)
    }

    fn yaml_dir(&mut self, dir: &Path, base: &str) -> Result<(), Error> {
        for file in self.list_yaml(dir)? {
            self.yaml_rule_file(&file, base)?;
        }
        Ok(())
    }

    /// Notes a rule file's documents, parsed when the rules are compiled (a scan whose
    /// plan is cached reads the file for its digest only).
    fn yaml_rule_file(&mut self, path: &Path, base: &str) -> Result<(), Error> {
        let index = self.read(path)?;
        self.docs.push(Doc {
            value: None,
            file: display(self.repo, path),
            text_index: index,
            ordinal: 0,
            base: base.to_string(),
        });
        Ok(())
    }

    /// Notes the utility rule files of the `utilDirs` of the `sgconfig.yml` at the
    /// repository root (none without one): for rules given without a project config.
    fn project_utils(&mut self) -> Result<(), Error> {
        let Some(repo) = self.repo else {
            return Ok(());
        };
        let Some(path) = SGCONFIG_NAMES
            .iter()
            .map(|n| repo.workdir.join(n))
            .find(|p| p.is_file())
        else {
            return Ok(());
        };
        let index = self.read(&path)?;
        let file = display(self.repo, &path);
        let parsed: SgConfig =
            ast_grep_config::from_str(&self.texts[index]).map_err(|e| Error::BadConfigFile {
                file: file.clone(),
                detail: yaml_error(&e),
            })?;
        let dir = path.parent().unwrap_or(Path::new("."));
        for entry in &parsed.util_dirs {
            check_inside(self.repo, &path, &file, "utilDirs", entry)?;
            self.util_dir(&dir.join(entry))?;
        }
        Ok(())
    }

    /// Notes a folder's utility rule files, parsed when the rules are compiled.
    fn util_dir(&mut self, dir: &Path) -> Result<(), Error> {
        for file in self.list_yaml(dir)? {
            let index = self.read(&file)?;
            self.util_texts.push((index, display(self.repo, &file)));
        }
        Ok(())
    }

    /// Parses the rule and utility files read: every document in the order read
    /// (only the rule files named in `files`, when given).
    fn parse(&mut self, files: Option<&std::collections::HashSet<&str>>) -> Result<(), Error> {
        for (index, file) in std::mem::take(&mut self.util_texts) {
            let utils: Vec<SerializableGlobalRule<Lang>> =
                ast_grep_config::from_multiple(&self.texts[index]).map_err(|e| {
                    Error::BadConfigFile {
                        file,
                        detail: yaml_error(&e),
                    }
                })?;
            self.utils.extend(utils);
        }
        let mut docs = Vec::with_capacity(self.docs.len());
        for doc in std::mem::take(&mut self.docs) {
            if doc.value.is_some() {
                docs.push(doc);
                continue;
            }
            if files.is_some_and(|f| !f.contains(doc.file.as_str())) {
                continue;
            }
            let values: Vec<Value> = ast_grep_config::from_multiple(&self.texts[doc.text_index])
                .map_err(|e| Error::BadConfigFile {
                    file: doc.file.clone(),
                    detail: yaml_error(&e),
                })?;
            for (ordinal, value) in values.into_iter().enumerate() {
                docs.push(Doc {
                    value: Some(value),
                    file: doc.file.clone(),
                    text_index: doc.text_index,
                    ordinal,
                    base: doc.base.clone(),
                });
            }
        }
        self.docs = docs;
        Ok(())
    }

    /// Compiles the rules read: all of them, or (`only`) those with these ids (a
    /// partial set for files whose results are not cached: ids are not checked for
    /// duplicates, the rest is not checked at all).
    fn finish(mut self, only: Option<&std::collections::HashSet<&str>>) -> Result<RuleSet, Error> {
        self.parse(None)?;
        self.compile_parsed(only, None)
    }

    /// Like [`Loader::finish`] with `only`, parsing only the rule files in `files`
    /// (where the plan says those rules were read from).
    fn finish_some(
        mut self,
        only: &std::collections::HashSet<&str>,
        files: &std::collections::HashSet<&str>,
    ) -> Result<RuleSet, Error> {
        self.parse(Some(files))?;
        self.compile_parsed(Some(only), None)
    }

    /// `languageGlobs` and the custom languages' extensions, built.
    fn built_language_globs(&self) -> Result<crate::files::LanguageGlobs, Error> {
        crate::files::LanguageGlobs::new(
            self.language_globs
                .iter()
                .chain(&self.custom_languages)
                .map(|(lang, globs)| (lang.as_str(), globs.clone())),
        )
        .map_err(|detail| Error::BadConfigFile {
            file: "languageGlobs".into(),
            detail,
        })
    }

    /// As [`Loader::finish`]; with `lang`, only the rules that may run on a file of
    /// that language (see [`Unplanned::compile_for`]) and the documents whose
    /// language does not read (compiled to say why).
    fn compile_parsed(
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

/// The global utility rules (`utilDirs`): compiled, and as text needs.
struct Globals {
    rules: GlobalRules,
    needs: need::GlobalUtils,
    /// `customLanguages` not loaded (not allowed).
    ignored_custom: Vec<String>,
}

/// One rule document compiled apart: its file and text, the rule (or why not), its notes.
type CompiledDoc = (String, usize, Result<Option<Compiled>, Error>, Notes);

enum Compiled {
    Active(Box<Rule>),
    /// `severity: off`: checked and compiled like any rule, then left out (unless a
    /// severity given on the command line turns it on).
    Off(Box<Rule>),
}

/// Names a rule document in its errors: its file, the line of its id, and its id (or
/// `#N`, its place in the file, when it has none).
struct Blame<'a> {
    file: &'a str,
    line: Option<usize>,
    rule: String,
}

impl Blame<'_> {
    fn bad(&self, field: &str, detail: String) -> Error {
        Error::BadRule {
            file: self.file.into(),
            line: self.line,
            rule: self.rule.clone(),
            field: field.into(),
            detail,
        }
    }
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

/// The key under a rule's `metadata:` that holds our keys (ast-grep keeps `metadata`
/// free-form, so a rule file using it stays an ast-grep rule file).
pub const METADATA_KEY: &str = "astedit";

/// A rule's own keys ([`OWN_FIELDS`]), from `metadata.astedit` or the top level.
struct OwnKeys {
    imports: Option<Value>,
    edits: Option<Value>,
    /// Read from the top level (the older form, which locks ast-grep out).
    top_level: bool,
}

/// Reads our keys from `metadata: {astedit: {imports, edits}}` or, as before, from the
/// top level of the rule; one key in both places, or an unknown key under
/// `metadata.astedit`, is refused.
fn own_keys(map: &BTreeMap<Value, Value>, blame: &Blame) -> Result<OwnKeys, Error> {
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
fn check_fields(
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
fn text_need(
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
fn message_template(
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
fn check_import_vars(
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
fn edits_of(
    value: &Value,
    rule: &Value,
    config: &RuleConfig<Lang>,
    globals: &Globals,
) -> Result<Vec<super::captured::CapturedEdit>, String> {
    let Value::Map(rule) = rule else {
        return Err("a rule must be a mapping of fields".into());
    };
    let defined = config.matcher.defined_vars();
    super::captured::parse(value, &defined, |fix| {
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
fn blame_field(map: &BTreeMap<Value, Value>, whole: String) -> (String, String) {
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
fn config_error_field(e: &RuleConfigError) -> &'static str {
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

/// An error and its sources on one line: ast-grep-config puts the detail in the chain,
/// under wrappers that only say that parsing failed.
fn chain(e: &dyn std::error::Error) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut cur: Option<&dyn std::error::Error> = Some(e);
    while let Some(err) = cur {
        let text = err.to_string();
        let text = text.trim_end_matches('.').to_string();
        if !text.starts_with("Fail to parse yaml") && parts.last() != Some(&text) {
            parts.push(text);
        }
        cur = err.source();
    }
    parts.join(": ")
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

fn globs(value: Option<&Value>) -> Result<Option<Globs>, String> {
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
fn build_globs(specs: Vec<(String, bool)>) -> Result<Globs, String> {
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
fn find_id_line(text: &str, id: &str) -> Option<usize> {
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

/// An sgconfig under another name: a YAML mapping with `ruleDirs` and no `rule`.
fn looks_like_sgconfig(path: &Path) -> bool {
    let Ok(text) = std::fs::read_to_string(path) else {
        return false;
    };
    match ast_grep_config::from_str::<Value>(&text) {
        Ok(Value::Map(map)) => {
            map.contains_key(&Value::String("ruleDirs".into()))
                && !map.contains_key(&Value::String("rule".into()))
        }
        _ => false,
    }
}

/// A YAML error in a project file, as shown: where and what is wrong, never the
/// file's text. The parser's message quotes the lines around the error, and serde's
/// quotes a scalar it did not expect; a file in a rule or test folder that is not a
/// rule (an `.env`-like file, a key) would have its secret printed into a CI log.
pub fn yaml_error(e: &serde_saphyr::Error) -> String {
    let text = e.without_snippet().to_string();
    let text = text.lines().next().unwrap_or("").trim();
    let text = text.strip_prefix("error: ").unwrap_or(text);
    redact_scalars(text)
}

/// `invalid type: string "…", expected …` without what is between the quotes.
fn redact_scalars(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find('"') {
        out.push_str(&rest[..start]);
        match rest[start + 1..].find('"') {
            Some(len) => {
                out.push_str("(text not shown)");
                rest = &rest[start + len + 2..];
            }
            None => {
                rest = "";
            }
        }
    }
    out.push_str(rest);
    out
}

/// A config path as the user reads it: relative to the current folder when inside the
/// repository, else as is.
fn display(repo: Option<&Repo>, path: &Path) -> String {
    let Some(repo) = repo else {
        return path.display().to_string();
    };
    let canonical = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    match canonical.strip_prefix(&repo.workdir) {
        Ok(rel) => repo.display_path(&rel.to_string_lossy().replace('\\', "/")),
        Err(_) => path.display().to_string(),
    }
}

#[cfg(test)]
mod plan_tests {
    use super::*;

    const RULES: &str = "
id: a
language: python
severity: warning
message: print of $$$A
rule: {pattern: print($$$A)}
files: ['src/**', {glob: 'LIB/**', caseInsensitive: true}]
---
id: b
language: rust
rule: {pattern: $A.unwrap()}
fix: $A.expect(\"b\")
";

    fn lazy(plan: Plan) -> Rules {
        let loader = text_loader(None, RULES, TextFormat::Yaml, "rules.yml").expect("read");
        Rules {
            plan,
            set: Default::default(),
            some: Default::default(),
            pending: std::sync::Mutex::new(Some(loader)),
            configs: Vec::new(),
            overrides: Vec::new(),
        }
    }

    #[test]
    fn a_plan_reads_back_as_written() {
        let set = from_text(RULES, TextFormat::Yaml, "rules.yml").expect("load");
        let bytes = serde_json::to_vec(&set.plan()).expect("json");
        let plan = Plan::decode(&bytes).expect("decode");
        assert_eq!(plan.rules.len(), 2);
        let (a, b) = (&plan.rules[0], &plan.rules[1]);
        assert_eq!(
            (a.id.as_str(), a.lang, a.severity),
            ("a", Lang::Python, Severity::Warning)
        );
        assert!(a.applies_to("src/x.py", Lang::Python));
        assert!(a.applies_to("lib/x.py", Lang::Python));
        assert!(!a.applies_to("x.py", Lang::Python));
        assert!(b.fixable() && !a.fixable());
        assert_eq!(b.lang, Lang::Rust);
        assert_eq!(plan.digest, set.digest);
    }

    #[test]
    fn some_rules_compile_alone_and_a_plan_that_does_not_match_is_refused() {
        let set = from_text(RULES, TextFormat::Yaml, "rules.yml").expect("load");
        let repo = crate::repo::Repo::discover_from(std::path::Path::new("."));
        let Ok(repo) = repo else { return };
        let rules = lazy(set.plan());
        let only: std::collections::HashSet<&str> = ["b"].into_iter().collect();
        let some = rules.compiled_some(&repo, &only).expect("compile b");
        assert_eq!(some.rules.len(), 1);
        assert_eq!(some.rules[0].id, "b");
        // A plan whose rules are not these: refused, never run with the wrong rules.
        let mut forged = set.plan();
        forged.rules[1].severity = Severity::Error;
        assert!(matches!(
            lazy(forged.clone()).compiled(&repo),
            Err(Error::StalePlan)
        ));
        assert!(matches!(
            lazy(forged).compiled_some(&repo, &only),
            Err(Error::StalePlan)
        ));
    }
}
