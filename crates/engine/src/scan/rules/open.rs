//! Rules for a scan ([`Rules`]): the plan the result cache keeps, the rules compiled
//! only when a file needs them, and severities set after loading.

use std::path::PathBuf;

use crate::lang::Lang;

use super::loader::Loader;
use super::project::read;
use super::Error;
use super::Plan;
use super::Rule;
use super::RuleHead;
use super::RuleSet;
use super::Severity;
use crate::repo::Repo;

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

#[cfg(test)]
mod plan_tests {
    use super::super::project::from_text;
    use super::super::project::text_loader;
    use super::super::project::TextFormat;
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
