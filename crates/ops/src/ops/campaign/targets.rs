//! `[targets]`: repositories found on the forge — every non-archived, non-fork
//! repository of an owner (`org`), or those a search finds (`query`), kept when they
//! carry every topic of `topics` and the `language` — resolved when `stage` runs and
//! staged beside the spec's own, so the set is in the state (each one an entry,
//! reviewable with `status`, and kept there if the forge stops listing it).
//! `stage --dry-run` lists them and stages nothing.

use super::key_of;
use super::sanitize;
use super::Loaded;
use crate::ops::forge;
use crate::ops::forge::FoundRepo;
use crate::report::campaign::CampaignTargetsReport;
use crate::report::campaign::RepoSpec;
use crate::report::campaign::TargetRepo;
use crate::report::campaign::TargetsSpec;
use crate::report::Version;
use crate::Error;

/// The default number of repositories asked of the forge.
const DEFAULT_LIMIT: usize = 1000;

/// `loaded` with the repositories its `[targets]` find now appended (those the spec
/// names already, by URL, are not repeated), and where each came from, by key.
pub fn with_targets(mut loaded: Loaded) -> Result<(Loaded, Vec<(String, String)>), Error> {
    let Some(targets) = loaded.spec.targets.clone() else {
        return Ok((loaded, Vec::new()));
    };
    let forge = forge::of(loaded.spec.forge);
    let limit = targets.limit.unwrap_or(DEFAULT_LIMIT).max(1);
    let mut found: Vec<(FoundRepo, String)> = Vec::new();
    if let Some(org) = &targets.org {
        let from = format!("org {org}");
        for r in forge.list_repos(org, limit)? {
            if !r.archived && !r.fork {
                found.push((r, from.clone()));
            }
        }
    }
    if let Some(query) = &targets.query {
        let from = format!("query {query}");
        for r in forge.search_repos(query, limit)? {
            if !r.archived && !found.iter().any(|(f, _)| f.url == r.url) {
                found.push((r, from.clone()));
            }
        }
    }
    let mut from = Vec::new();
    for (r, why) in found.into_iter().filter(|(r, _)| keeps(&targets, r)) {
        if loaded
            .repos
            .iter()
            .any(|(_, s)| s.url.as_deref() == Some(&r.url))
        {
            continue;
        }
        let key = unique_key(&loaded, &r.name);
        from.push((key.clone(), why));
        loaded.repos.push((
            key,
            RepoSpec {
                url: Some(r.url),
                base: r.default_branch,
                forge: Some(loaded.spec.forge),
                ..Default::default()
            },
        ));
    }
    Ok((loaded, from))
}

/// `campaign stage --dry-run`: the repositories a stage would work on.
pub fn dry_run(loaded: Loaded) -> Result<CampaignTargetsReport, Error> {
    let name = loaded.spec.name.clone();
    let (loaded, from) = with_targets(loaded)?;
    let repos = loaded
        .repos
        .iter()
        .map(|(key, r)| TargetRepo {
            key: key.clone(),
            source: r.url.clone().or(r.path.clone()).unwrap_or_default(),
            base: r.base.clone(),
            from: from
                .iter()
                .find(|(k, _)| k == key)
                .map(|(_, f)| f.clone())
                .unwrap_or_else(|| "spec".into()),
        })
        .collect();
    Ok(CampaignTargetsReport {
        schema_version: Version,
        name,
        repos,
    })
}

/// Whether a found repository has every topic asked for and the language.
fn keeps(t: &TargetsSpec, r: &FoundRepo) -> bool {
    let topics = t
        .topics
        .iter()
        .all(|want| r.topics.iter().any(|have| have.eq_ignore_ascii_case(want)));
    let language = match (&t.language, &r.language) {
        (None, _) => true,
        (Some(want), Some(have)) => want.eq_ignore_ascii_case(have),
        (Some(_), None) => false,
    };
    topics && language
}

/// A key for `name` (`owner/repo`: `repo`) no repository of `loaded` has.
fn unique_key(loaded: &Loaded, name: &str) -> String {
    let base = sanitize(&key_of(name).unwrap_or_else(|| name.to_string()));
    let mut key = base.clone();
    let mut n = 2;
    while loaded.repos.iter().any(|(k, _)| *k == key) {
        key = format!("{base}-{n}");
        n += 1;
    }
    key
}
