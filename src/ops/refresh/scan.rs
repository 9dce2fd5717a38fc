//! Scan previews: their recorded rules loaded again (when the rule files hash as
//! they did at staging) and re-run on a file, or over the recorded file set.

use std::collections::BTreeSet;

use super::record::rules_digest;
use super::NewFile;
use super::DETAILS_KEY;
use crate::change::PreviewMeta;
use crate::repo::Repo;
use crate::Error;

/// A scan's recorded rules loaded again, when they still hash the same.
pub(super) struct ScanRules {
    pub(super) rules: crate::scan::RuleSet,
    pub(super) only: Vec<String>,
    pub(super) max_passes: usize,
}

impl ScanRules {
    /// `Err` says why re-running is impossible (then files are merged three-way).
    pub(super) fn of(repo: &Repo, meta: &PreviewMeta) -> Result<ScanRules, String> {
        if super::record::is_selection(meta) {
            return Err("the preview holds a selection of the fixes (-i)".into());
        }
        let rec = meta
            .details
            .get(DETAILS_KEY)
            .ok_or("the preview did not record its rules (staged by an older version)")?;
        let configs: Vec<std::path::PathBuf> = rec
            .get("configs")
            .and_then(|c| serde_json::from_value::<Vec<String>>(c.clone()).ok())
            .ok_or("the preview did not record its rules")?
            .into_iter()
            .map(|c| repo.workdir.join(c))
            .collect();
        let at_top = Repo::discover_from(&repo.workdir).map_err(|e| e.to_string())?;
        let rules = crate::scan::rules::load(&at_top, &configs)
            .map_err(|e| format!("the rules no longer load: {e}"))?;
        let digest = rec.get("rules_digest").and_then(|d| d.as_str());
        if digest != Some(rules_digest(&at_top.cwd, &rules.sources).as_str()) {
            return Err("the rule files changed since the preview was staged".into());
        }
        Ok(ScanRules {
            only: rec
                .get("only_rules")
                .and_then(|o| serde_json::from_value(o.clone()).ok())
                .unwrap_or_default(),
            max_passes: rec
                .get("max_passes")
                .and_then(|m| m.as_u64())
                .map_or(rules.max_passes, |m| m as usize),
            rules,
        })
    }

    /// The rules' fixes on `text`: the new text (`None`: nothing to fix), the count,
    /// and the fixes as (rule, matched text, inserted text), sorted.
    pub(super) fn run(&self, path: &str, text: &str) -> Option<ScanRun> {
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
        let mut pairs: Vec<(usize, String, String)> = res
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

pub(super) struct ScanRun {
    pub(super) after: Option<String>,
    pub(super) count: usize,
    pub(super) flags: Vec<crate::change::FileFlag>,
    pub(super) pairs: Vec<(usize, String, String)>,
}

/// `refresh --all` of a scan: the recorded rules over the file set recorded at
/// staging, for the files not in the preview. Returns the newly fixed ones.
pub(super) fn rescan_all(
    repo: &Repo,
    meta: &PreviewMeta,
    rules: &ScanRules,
    known: &BTreeSet<String>,
    notes: &mut Vec<String>,
) -> Result<Vec<NewFile>, Error> {
    let rec = meta.details.get(DETAILS_KEY);
    let get = |k: &str| rec.and_then(|r| r.get(k));
    if get("cached").and_then(|c| c.as_bool()) == Some(true) {
        notes.push(
            "--all: the preview was staged from the index (--cached); only its own files \
             were refreshed"
                .into(),
        );
        return Ok(Vec::new());
    }
    let prefix = get("prefix").and_then(|p| p.as_str()).unwrap_or("");
    let at = Repo::discover_from(&repo.workdir.join(prefix))?;
    let opts = crate::scan::Options {
        pathspecs: get("pathspecs")
            .and_then(|p| serde_json::from_value(p.clone()).ok())
            .unwrap_or_default(),
        cached: false,
        tree: None,
        shard: None,
        mode: crate::scan::Mode::Fix,
        only_rules: rules.only.clone(),
        // A refresh re-makes fixes; findings are not reported.
        unused_suppressions: None,
        max_file_size: get("max_file_size")
            .and_then(|m| m.as_u64())
            .unwrap_or(crate::files::DEFAULT_MAX_FILE_SIZE),
        max_passes: Some(rules.max_passes),
        // A refresh runs on a worktree of the preview's base: nothing to reuse.
        cache: None,
    };
    let outcome = crate::scan::scan(&at, &rules.rules, &opts)?;
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
