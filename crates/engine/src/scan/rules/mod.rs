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

mod checks;
mod compile;
mod config;
mod loader;
mod open;
mod project;

use crate::lang::Lang;
use ast_grep_config::RuleConfig;
use ast_grep_core::replacer::TemplateFix;
use ast_grep_core::tree_sitter::LanguageExt;
use globset::GlobSet;

use super::need::Need;
use super::Error;
use checks::build_globs;

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

pub use checks::METADATA_KEY;
pub use config::check_inside;
pub use config::yaml_error;
pub use config::yaml_files;
pub use open::open;
pub use open::open_lazily;
pub use open::Opened;
pub use open::Rules;
pub use open::Unplanned;
pub use project::from_inline;
pub use project::from_text;
pub use project::from_values;
pub use project::load;
pub use project::project_custom_languages;
pub use project::project_language_globs;
pub use project::rule_files_only;
pub use project::yaml_documents;
pub use project::TextFormat;
