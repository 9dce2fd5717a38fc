//! The recipe of a scan preview: the config files its rules came from (and their
//! content hash), the rules selected, the pass bound and the file set, recorded under
//! `details.refresh`. A stale path has the rules re-run on it when the rule files hash
//! as they did at staging; `refresh --all` re-runs them over the recorded file set.

use std::collections::BTreeSet;

use crate::change::PreviewMeta;
use crate::ops::recipe::Derived;
use crate::ops::recipe::NewFile;
use crate::ops::recipe::Pairs;
use crate::ops::recipe::PerPath;
use crate::ops::recipe::Recorded;
use crate::ops::recipe::Rerun;
use crate::ops::recipe::Stale;
use crate::repo::Repo;
use crate::report::How;
use crate::Error;

/// What a scan preview records: the config files given (repository paths; none: the
/// defaults at the top), a content hash of every file the rules were read from, the
/// rules selected, the pass bound, the file set; and whether it holds a selection of
/// the fixes (`scan -i`), which is merged three-way, never re-run. Fields an older
/// version did not record read as their defaults.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ScanRecipe {
    #[serde(default)]
    pub configs: Option<Vec<String>>,
    #[serde(default)]
    pub rules_digest: Option<String>,
    #[serde(default)]
    pub only_rules: Vec<String>,
    #[serde(default)]
    pub max_passes: Option<usize>,
    #[serde(default)]
    pub pathspecs: Vec<String>,
    #[serde(default)]
    pub prefix: String,
    #[serde(default = "default_max_file_size")]
    pub max_file_size: u64,
    #[serde(default)]
    pub cached: bool,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub selected: bool,
}

fn default_max_file_size() -> u64 {
    crate::files::DEFAULT_MAX_FILE_SIZE
}

impl Recorded for ScanRecipe {}

impl ScanRecipe {
    /// The recipe of the scan `req` with `rules` (loaded from its configs, as typed)
    /// and `opts`; `selected` when the fixes were chosen one by one.
    pub fn new(
        repo: &Repo,
        rules: &crate::scan::rules::Plan,
        req: &super::ScanRequest,
        opts: &crate::scan::Options,
        selected: bool,
    ) -> ScanRecipe {
        let configs: Vec<String> = req
            .configs
            .iter()
            .map(|c| {
                let abs = repo.cwd.join(c);
                let abs = std::fs::canonicalize(&abs).unwrap_or(abs);
                match abs.strip_prefix(&repo.workdir) {
                    Ok(rel) => rel.to_string_lossy().replace('\\', "/"),
                    Err(_) => abs.to_string_lossy().into_owned(),
                }
            })
            .collect();
        ScanRecipe {
            configs: Some(configs),
            rules_digest: Some(rules_digest(&repo.cwd, &rules.sources)),
            only_rules: opts.only_rules.clone(),
            max_passes: Some(opts.max_passes.unwrap_or(rules.max_passes)),
            pathspecs: req.input.pathspecs.clone(),
            prefix: repo.prefix.clone().unwrap_or_default(),
            max_file_size: opts.max_file_size,
            cached: req.input.cached,
            selected,
        }
    }

    /// The re-derivation of a stale scan preview with this recipe (`None`: staged by
    /// a version that recorded none).
    pub fn rederive(recipe: Option<ScanRecipe>) -> ScanRederive {
        ScanRederive {
            recipe,
            rules: None,
        }
    }
}

/// SHA-256 over the bytes of every file `rules` were read from (`sources` are shown
/// relative to `cwd`), in order: the rules "by content hash".
fn rules_digest(cwd: &std::path::Path, sources: &[String]) -> String {
    use sha2::Digest;
    let mut h = sha2::Sha256::new();
    for s in sources {
        let bytes = std::fs::read(cwd.join(s)).unwrap_or_default();
        h.update((bytes.len() as u64).to_le_bytes());
        h.update(&bytes);
    }
    format!("{:x}", h.finalize())
}

/// A scan preview being refreshed: its rules are loaded once, on the first stale
/// path (or for `--all`).
pub struct ScanRederive {
    recipe: Option<ScanRecipe>,
    rules: Option<Result<ScanRules, String>>,
}

impl PerPath for ScanRederive {
    fn cached(&self) -> bool {
        self.recipe.as_ref().is_some_and(|r| r.cached)
    }

    fn path(&mut self, s: &Stale<'_>, notes: &mut Vec<String>) -> Result<Derived, Error> {
        let recipe = &self.recipe;
        let rules = self.rules.get_or_insert_with(|| {
            let r = ScanRules::of(s.repo, recipe.as_ref());
            if let Err(why) = &r {
                notes.push(format!("{why}; changed files are merged three-way instead"));
            }
            r
        });
        let (Ok(rules), Some(after)) = (rules, s.after) else {
            return s.merged();
        };
        let (Ok(now_text), Ok(before_text)) = (
            std::str::from_utf8(&s.current.bytes),
            std::str::from_utf8(s.before),
        ) else {
            return s.merged();
        };
        let (Some(now), Some(then)) = (
            rules.run(s.path(), now_text),
            rules.run(s.path(), before_text),
        ) else {
            return s.merged();
        };
        let rerun = Rerun {
            stale: s,
            lang: crate::files::language_of(s.path()),
            now: now.pairs,
            then: then.pairs,
            what: "rules",
            other: "edited where the preview changes it, and re-running the rules there gives \
                    other fixes",
        };
        let why = match rerun.check(after, notes)? {
            Ok(why) => why,
            Err(conflict) => return Ok(conflict),
        };
        Ok(
            match now.after.filter(|t| t.as_bytes() != s.current.bytes) {
                None => Derived::Dropped("the rules no longer fix it".into()),
                Some(text) => Derived::Changed {
                    after: text.into_bytes(),
                    count: now.count,
                    how: How::Rerun,
                    why,
                    flags: now.flags,
                },
            },
        )
    }

    fn all(
        &mut self,
        repo: &Repo,
        _meta: &PreviewMeta,
        known: &BTreeSet<String>,
        notes: &mut Vec<String>,
    ) -> Result<Option<Vec<NewFile>>, Error> {
        let recipe = &self.recipe;
        let rules = self
            .rules
            .get_or_insert_with(|| ScanRules::of(repo, recipe.as_ref()));
        match rules {
            Ok(rules) => rescan_all(repo, rules, known, notes).map(Some),
            Err(why) => {
                notes.push(format!("--all needs the recorded rules: {why}"));
                Ok(Some(Vec::new()))
            }
        }
    }
}

/// A scan's recorded rules loaded again, when they still hash the same.
pub struct ScanRules {
    rules: crate::scan::RuleSet,
    only: Vec<String>,
    max_passes: usize,
    recipe: ScanRecipe,
}

impl ScanRules {
    /// `Err` says why re-running is impossible (then files are merged three-way).
    pub fn of(repo: &Repo, recipe: Option<&ScanRecipe>) -> Result<ScanRules, String> {
        if recipe.is_some_and(|r| r.selected) {
            return Err("the preview holds a selection of the fixes (-i)".into());
        }
        let recipe =
            recipe.ok_or("the preview did not record its rules (staged by an older version)")?;
        let configs: Vec<std::path::PathBuf> = recipe
            .configs
            .as_ref()
            .ok_or("the preview did not record its rules")?
            .iter()
            .map(|c| repo.workdir.join(c))
            .collect();
        let at_top = Repo::discover_from(&repo.workdir).map_err(|e| e.to_string())?;
        let rules = crate::scan::rules::load(&at_top, &configs)
            .map_err(|e| format!("the rules no longer load: {e}"))?;
        if recipe.rules_digest.as_deref()
            != Some(rules_digest(&at_top.cwd, &rules.sources).as_str())
        {
            return Err("the rule files changed since the preview was staged".into());
        }
        // A recorded bound over the ceiling was never staged by git-astedit (the flag
        // and the config refuse it): a forged recipe, not re-run.
        let ceiling = crate::scan::rules::MAX_PASSES_CEILING;
        let max_passes = recipe.max_passes.unwrap_or(rules.max_passes);
        if !(1..=ceiling).contains(&max_passes) {
            return Err(format!(
                "the preview records max_passes = {max_passes}, outside 1 to {ceiling} (not \
                 staged so by git-astedit)"
            ));
        }
        Ok(ScanRules {
            only: recipe.only_rules.clone(),
            max_passes,
            rules,
            recipe: recipe.clone(),
        })
    }

    /// The fixes the rules make on `text` (a preview's before side), in the input's
    /// coordinates, each with its rule's id: how review finds a scan preview's sites.
    /// `None` when the path's language is unknown or the rules fail on it.
    pub fn fixes(
        &self,
        path: &str,
        text: &str,
    ) -> Option<Vec<(String, crate::scan::engine::FindingFix)>> {
        let (_, res) = self.file_result(path, text)?;
        Some(
            res.findings
                .into_iter()
                .filter_map(|f| Some((f.rule, f.fix?)))
                .collect(),
        )
    }

    /// The rules that run on `path`, and their result in fix mode on `text`.
    fn file_result(
        &self,
        path: &str,
        text: &str,
    ) -> Option<(Vec<&crate::scan::Rule>, crate::scan::engine::FileResult)> {
        let lang = self.rules.language_globs.language_of(path)?;
        let active: Vec<&crate::scan::Rule> = self
            .rules
            .rules
            .iter()
            .filter(|r| self.only.is_empty() || self.only.contains(&r.id))
            .filter(|r| self.rules.runs_in(r, path, lang))
            .collect();
        let res = crate::scan::engine::run_file_injected(
            path,
            text,
            lang,
            crate::scan::engine::FileRules {
                rules: &active,
                injections: &self.rules.injections,
            },
            crate::scan::Mode::Fix,
            self.max_passes.max(1),
            &mut |_| true,
        )
        .ok()?;
        Some((active, res))
    }

    /// The rules' fixes on `text`: the new text (`None`: nothing to fix), the count,
    /// and the fixes as (rule, matched text, inserted text), sorted.
    fn run(&self, path: &str, text: &str) -> Option<ScanRun> {
        let (active, res) = self.file_result(path, text)?;
        let mut pairs: Pairs = res
            .findings
            .iter()
            .filter_map(|f| {
                let fix = f.fix.as_ref()?;
                let rule = active.iter().position(|r| r.id == f.rule)?;
                Some((rule, f.text.clone(), fix.inserted.clone()))
            })
            .collect();
        pairs.sort();
        let flags = res.flags();
        Some(ScanRun {
            after: res.after,
            count: res.counts.iter().map(|(_, n)| n).sum(),
            flags,
            pairs,
        })
    }
}

struct ScanRun {
    after: Option<String>,
    count: usize,
    flags: Vec<crate::change::FileFlag>,
    pairs: Pairs,
}

/// `refresh --all` of a scan: the recorded rules over the file set recorded at
/// staging, for the files not in the preview. Returns the newly fixed ones.
fn rescan_all(
    repo: &Repo,
    rules: &ScanRules,
    known: &BTreeSet<String>,
    notes: &mut Vec<String>,
) -> Result<Vec<NewFile>, Error> {
    let recipe = &rules.recipe;
    if recipe.cached {
        notes.push(
            "--all: the preview was staged from the index (--cached); only its own files \
             were refreshed"
                .into(),
        );
        return Ok(Vec::new());
    }
    let at = Repo::discover_from(&repo.workdir.join(&recipe.prefix))?;
    let input = crate::ops::input::Input {
        pathspecs: recipe.pathspecs.clone(),
        max_file_size: recipe.max_file_size,
        ..Default::default()
    };
    let listing = crate::ops::input::Listing {
        input: &input,
        rules: &rules.rules.plan(),
        only: None,
        shard: None,
        ask_git: false,
        asked: None,
    };
    let inputs = listing.files(&at)?;
    let opts = crate::scan::Options {
        mode: crate::scan::Mode::Fix,
        only_rules: rules.only.clone(),
        // A refresh re-makes fixes; findings are not reported.
        unused_suppressions: None,
        max_file_size: recipe.max_file_size,
        max_passes: Some(rules.max_passes),
        // A refresh runs on a worktree of the preview's base: nothing to reuse.
        cache: None,
        cancel: Default::default(),
        name_contents: false,
    };
    let outcome = crate::scan::scan(&at, &rules.rules, &opts, &inputs)?;
    let mut out = Vec::new();
    for (change, fixed) in outcome.changes.changes.into_iter().zip(&outcome.fixed) {
        if known.contains(&change.path) {
            continue;
        }
        let flags = fixed.flags.clone();
        let count = fixed.counts.iter().map(|(_, n)| n).sum();
        out.push((change.path.clone(), change, count, flags));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_recipe_of_the_first_scan_previews_reads() {
        // What scan previews recorded before they recorded their file set.
        let old: ScanRecipe = serde_json::from_value(serde_json::json!({
            "configs": [], "rules_digest": "ab", "only_rules": [], "max_passes": 3,
        }))
        .expect("reads");
        assert_eq!(old.configs, Some(Vec::new()));
        assert_eq!(old.max_passes, Some(3));
        assert!(old.pathspecs.is_empty() && old.prefix.is_empty() && !old.cached);
        assert_eq!(old.max_file_size, crate::files::DEFAULT_MAX_FILE_SIZE);
    }
}
