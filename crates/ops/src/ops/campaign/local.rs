//! `campaign apply --local` and `campaign undo` (local checkouts: each repository its
//! own transaction, listed in the state), `campaign matrix` (shards for CI) and
//! `campaign collect` (the shards' states merged into one commit).

use super::outcome;
use super::record;
use super::Checkouts;
use super::Loaded;
use crate::repo::Repo;
use crate::report::campaign::CampaignMatrixReport;
use crate::report::campaign::CampaignReport;
use crate::report::campaign::RepoState;
use crate::report::campaign::RepoStatus;
use crate::report::Version;
use crate::Error;

/// Applies every staged preview of a local checkout (`campaign apply --local`).
pub fn apply(repo: &Repo, loaded: &Loaded) -> Result<CampaignReport, Error> {
    let from = [RepoStatus::Staged, RepoStatus::Undone];
    each_local(repo, loaded, "apply", &from, |clone, s| {
        let req = crate::ops::apply::ApplyRequest::whole(
            s.preview.clone(),
            crate::ops::apply::ApplyOptions {
                reason: Some(format!("campaign {}", loaded.spec.name)),
                ..Default::default()
            },
        );
        // As `git astedit apply ID`: a reviewed preview's decisions are obeyed.
        crate::ops::review::apply::run(clone, &req, &crate::cancel::Cancel::never())?;
        Ok(RepoStatus::Applied)
    })
}

/// Undoes every preview `campaign apply --local` applied (`campaign undo`).
pub fn undo(repo: &Repo, loaded: &Loaded) -> Result<CampaignReport, Error> {
    each_local(repo, loaded, "undo", &[RepoStatus::Applied], |clone, s| {
        let req = crate::ops::undo::UndoRequest {
            id: s.preview.clone(),
            reason: Some(format!("campaign {} undone", loaded.spec.name)),
            ..Default::default()
        };
        crate::ops::undo::run(clone, &req)?;
        Ok(RepoStatus::Undone)
    })
}

fn each_local(
    repo: &Repo,
    loaded: &Loaded,
    command: &str,
    from: &[RepoStatus],
    act: impl Fn(&Repo, &RepoState) -> Result<RepoStatus, Error>,
) -> Result<CampaignReport, Error> {
    let mut state = super::read_state(repo, &super::state_ref(&loaded.spec.name))?;
    if state.commit.is_none() {
        return Err(super::CampaignError::NoState(loaded.spec.name.clone()).into());
    }
    let mut todo: Vec<RepoState> = state
        .repos
        .values()
        .filter(|s| from.contains(&s.status))
        .cloned()
        .collect();
    todo.sort_by_key(|s| s.order);
    let mut outcomes = Vec::new();
    let mut notes = Vec::new();
    let checkouts = Checkouts::new(loaded, super::default_workspace(&loaded.spec.name));
    for mut s in todo {
        if !s.local {
            outcomes.push(outcome(
                &s,
                "skipped",
                Some("a clone in the workspace: publish it instead".into()),
            ));
            continue;
        }
        // The spec's path, never the state's (shared, and anyone's to write).
        let result = checkouts
            .dir(&s.key)
            .map_err(Error::from)
            .and_then(|dir| Repo::discover_from(&dir).map_err(Error::from))
            .and_then(|clone| act(&clone, &s));
        match result {
            Ok(status) => {
                s.status = status;
                s.reason = None;
                s.updated = super::now();
                let action = if command == "apply" {
                    "applied"
                } else {
                    "undone"
                };
                record(
                    repo,
                    &mut state,
                    std::slice::from_ref(&s),
                    &format!("{command} {}: {action}", s.key),
                    &[],
                )?;
                outcomes.push(outcome(&s, action, None));
            }
            Err(e) => {
                // The entry keeps its status: the preview is where it was.
                let mut o = outcome(&s, "failed", Some(format!("{} ({})", e, e.code())));
                o.status = RepoStatus::Failed;
                outcomes.push(o);
            }
        }
    }
    if outcomes.is_empty() {
        let names: Vec<&str> = from.iter().map(|s| s.name()).collect();
        notes.push(format!("no repository is {}", names.join(" or ")));
    }
    Ok(super::report(loaded, command, &state, outcomes, notes))
}

/// `campaign matrix SPEC --jobs N`.
pub fn matrix(loaded: &Loaded, jobs: usize) -> CampaignMatrixReport {
    let jobs = jobs.max(1);
    let shards: Vec<String> = (1..=jobs).map(|i| format!("{i}/{jobs}")).collect();
    let repos: Vec<Vec<String>> = (1..=jobs)
        .map(|i| {
            loaded
                .repos
                .iter()
                .enumerate()
                .filter(|(o, _)| super::in_shard(*o, Some((i, jobs))))
                .map(|(_, (k, _))| k.clone())
                .collect()
        })
        .collect();
    CampaignMatrixReport {
        schema_version: Version,
        name: loaded.spec.name.clone(),
        jobs,
        github: serde_json::json!({
            "include": shards.iter().map(|s| serde_json::json!({"shard": s})).collect::<Vec<_>>()
        }),
        gitlab: serde_json::json!([{ "SHARD": shards }]),
        shards,
        repos,
    }
}

/// `campaign collect`: every shard ref's entries merged into the state, one commit
/// whose parents are the state and every shard.
pub fn collect(repo: &Repo, loaded: &Loaded) -> Result<CampaignReport, Error> {
    let name = &loaded.spec.name;
    let prefix = super::shard_prefix(name);
    let platform = repo
        .git
        .references()
        .map_err(super::git_fail("list refs"))?;
    let mut shards = Vec::new();
    for r in platform
        .prefixed(prefix.as_str())
        .map_err(super::git_fail("list refs"))?
    {
        let mut r = r.map_err(super::git_fail("read a shard ref"))?;
        let refname = r.name().as_bstr().to_string();
        let id = r
            .peel_to_id()
            .map_err(super::git_fail(format!("read {refname}")))?
            .detach();
        shards.push((refname, id));
    }
    shards.sort();
    let mut state = super::read_state(repo, &super::state_ref(name))?;
    let mut merged: Vec<RepoState> = Vec::new();
    let mut notes = Vec::new();
    for (refname, id) in &shards {
        let entries = super::entries_at(repo, *id)?;
        notes.push(format!("{refname}: {} repositories", entries.len()));
        merged.extend(entries.into_values());
    }
    merged.sort_by_key(|s| s.order);
    let outcomes = merged
        .iter()
        .map(|s| outcome(s, "collected", None))
        .collect();
    if shards.is_empty() {
        notes.push(format!("no shard refs under {prefix}"));
    } else {
        let parents: Vec<gix::ObjectId> = shards.iter().map(|(_, id)| *id).collect();
        record(
            repo,
            &mut state,
            &merged,
            &format!("collect {} shards", shards.len()),
            &parents,
        )?;
    }
    Ok(super::report(loaded, "collect", &state, outcomes, notes))
}
