//! `campaign publish` (push each preview as the campaign's branch and open a draft pull
//! request, through [`crate::ops::pr`]: a rerun finds the pull request by branch) and
//! `campaign refresh` (the base moved: re-derive on the new base with `refresh --all`
//! semantics, and move the branch only over the commit we pushed).

use std::path::Path;
use std::sync::Arc;

use super::clone;
use super::git;
use super::outcome;
use super::record;
use super::Checkouts;
use super::Loaded;
use super::State;
use crate::ops::pr::BranchPlan;
use crate::ops::pr::Pace;
use crate::ops::pr::PrRequest;
use crate::repo::Repo;
use crate::report::campaign::CampaignReport;
use crate::report::campaign::RepoOutcome;
use crate::report::campaign::RepoState;
use crate::report::campaign::RepoStatus;
use crate::Error;

pub struct PublishRequest {
    pub spec: Loaded,
    /// Publish this many first, then wait (overrides the spec's `canary`).
    pub canary: Option<usize>,
    /// Go on past a canary that is not merged yet.
    pub go_on: bool,
    /// How many repositories are pushed and opened at the same time.
    pub at_once: usize,
    /// Where each repository's checkout is (never where the state says).
    pub checkouts: Checkouts,
}

fn load(repo: &Repo, loaded: &Loaded) -> Result<State, Error> {
    let state = super::read_state(repo, &super::state_ref(&loaded.spec.name))?;
    if state.commit.is_none() {
        return Err(super::CampaignError::NoState(loaded.spec.name.clone()).into());
    }
    Ok(state)
}

/// Asks the forge for the pull request of `branch` (the spec's, never one the shared
/// state names) in each published repository (`at_once` at a time) and records what
/// moved (merged, closed; an open one's checks and review); returns the outcomes.
pub(super) fn sync_prs(
    repo: &Repo,
    state: &mut State,
    checkouts: &Checkouts,
    branch: &str,
    at_once: usize,
    only: impl Fn(&RepoState) -> bool,
) -> Result<Vec<RepoOutcome>, Error> {
    let mut outcomes = Vec::new();
    let mut asked: Vec<RepoState> = state
        .repos
        .values()
        .filter(|s| matches!(s.status, RepoStatus::Published | RepoStatus::Diverged) && only(s))
        .cloned()
        .collect();
    asked.sort_by_key(|s| s.order);
    super::pool::in_order(
        &asked,
        at_once,
        None,
        |s| {
            let forge = crate::ops::forge::of(s.forge.unwrap_or_default());
            Some(
                checkouts
                    .dir(&s.key)
                    .map_err(Error::from)
                    .and_then(|dir| forge.find(&dir, branch)),
            )
        },
        |_| true,
        |s, found| {
            let mut s = s.clone();
            let key = s.key.clone();
            let found = match found.flatten() {
                None => return Ok(()),
                Some(Ok(f)) => f,
                Some(Err(e)) => {
                    let why = format!("{e} ({})", e.code());
                    outcomes.push(outcome(&s, "unknown", Some(why)));
                    return Ok(());
                }
            };
            let Some(found) = found else { return Ok(()) };
            let status = match found.state.as_str() {
                "MERGED" => RepoStatus::Merged,
                "CLOSED" => RepoStatus::Closed,
                _ => {
                    // Open: its checks and review, recorded when they changed.
                    if (&found.checks, &found.review) != (&s.checks, &s.review) {
                        s.checks = found.checks;
                        s.review = found.review;
                        s.updated = super::now();
                        let said = [s.checks.as_deref(), s.review.as_deref()]
                            .into_iter()
                            .flatten()
                            .collect::<Vec<_>>()
                            .join(", ");
                        record(
                            repo,
                            state,
                            std::slice::from_ref(&s),
                            &format!(
                                "status {key}: open, {}",
                                if said.is_empty() { "no checks" } else { &said }
                            ),
                            &[],
                        )?;
                    }
                    return Ok(());
                }
            };
            s.status = status;
            s.pr_url = Some(found.url);
            s.pr_number = found.number.or(s.pr_number);
            s.updated = super::now();
            record(
                repo,
                state,
                std::slice::from_ref(&s),
                &format!("status {key}: {}", status.name()),
                &[],
            )?;
            outcomes.push(outcome(&s, status.name(), None));
            Ok(())
        },
    )?;
    Ok(outcomes)
}

/// The spec's rate limit as a pace shared by every repository of one run.
fn pace(loaded: &Loaded) -> Option<Arc<Pace>> {
    let rate = loaded.spec.pr.rate_per_minute;
    (rate > 0).then(|| {
        Arc::new(Pace::new(std::time::Duration::from_secs_f64(
            60.0 / f64::from(rate),
        )))
    })
}

pub fn publish(repo: &Repo, req: &PublishRequest) -> Result<CampaignReport, Error> {
    let loaded = &req.spec;
    let pr = &loaded.spec.pr;
    let mut state = load(repo, loaded)?;
    let mut notes = Vec::new();
    let canary = req.canary.unwrap_or(pr.canary);
    let checkouts = &req.checkouts;
    let branch = loaded.branch();
    let mut outcomes = sync_prs(repo, &mut state, checkouts, &branch, req.at_once, |s| {
        s.canary
    })?;
    let published: Vec<&RepoState> = state
        .repos
        .values()
        .filter(|s| s.status.published())
        .collect();
    let canaries: Vec<&RepoState> = published.iter().copied().filter(|s| s.canary).collect();
    // How many to publish this run.
    let mut budget = usize::MAX;
    let mut as_canary = false;
    // Canaries published earlier hold the rest until they are merged (or --continue).
    let waiting: Vec<String> = canaries
        .iter()
        .filter(|s| s.status != RepoStatus::Merged)
        .map(|s| s.key.clone())
        .collect();
    if req.go_on {
        // Asked to go on: no hold.
    } else if !waiting.is_empty() {
        notes.push(format!(
            "waiting for the canary to be merged: {}; `--continue` publishes the rest now",
            waiting.join(", ")
        ));
        budget = 0;
    } else if canary > 0 && published.is_empty() {
        budget = canary;
        as_canary = true;
        notes.push(format!(
            "canary: publishing {canary} first; run `campaign publish --continue` (or \
             again once they are merged) for the rest"
        ));
    }
    if pr.max_open > 0 {
        let open = state
            .repos
            .values()
            .filter(|s| matches!(s.status, RepoStatus::Published | RepoStatus::Diverged))
            .count();
        let room = pr.max_open.saturating_sub(open);
        if room < budget {
            budget = room;
            notes.push(format!(
                "at most {} open at the same time: {open} open, publishing at most {room}",
                pr.max_open
            ));
        }
    }
    let mut todo: Vec<RepoState> = state
        .repos
        .values()
        .filter(|s| s.status == RepoStatus::Staged && s.preview.is_some())
        .cloned()
        .collect();
    todo.sort_by_key(|s| s.order);
    let pace = pace(loaded);
    // A failure leaves its place in the budget to the next repository, as one at a
    // time would.
    super::pool::in_order(
        &todo,
        req.at_once,
        (budget != usize::MAX).then_some(budget),
        |s| {
            let dir = checkouts.dir(&s.key)?;
            publish_one(loaded, &dir, s, None, None, pace.clone())
        },
        |r| r.is_ok(),
        |s, result| {
            let mut s = s.clone();
            match result {
                None => outcomes.push(outcome(&s, "waiting", None)),
                Some(Ok(r)) => {
                    s.status = RepoStatus::Published;
                    s.pushed_commit = Some(r.commit);
                    s.pr_url = Some(r.url.clone());
                    s.pr_number = pr_number(&r.url);
                    s.canary = as_canary;
                    s.reason = None;
                    s.updated = super::now();
                    record(
                        repo,
                        &mut state,
                        std::slice::from_ref(&s),
                        &format!(
                            "publish {}: {} {}",
                            s.key,
                            if r.created { "opened" } else { "found" },
                            r.url
                        ),
                        &[],
                    )?;
                    outcomes.push(outcome(
                        &s,
                        if r.created { "published" } else { "found" },
                        Some(r.url),
                    ));
                }
                Some(Err(e)) => {
                    // Stays staged: a rerun tries again.
                    let why = format!("publish failed: {e}");
                    s.reason = Some(why.clone());
                    s.updated = super::now();
                    record(
                        repo,
                        &mut state,
                        std::slice::from_ref(&s),
                        &format!("publish {}: failed", s.key),
                        &[],
                    )?;
                    let mut o = outcome(&s, "failed", Some(why));
                    o.status = RepoStatus::Failed;
                    outcomes.push(o);
                }
            }
            Ok(())
        },
    )?;
    if pr.rate_per_minute > 0 {
        notes.push(format!(
            "rate limit {} per minute: one write to the forge every {:.1}s",
            pr.rate_per_minute,
            60.0 / f64::from(pr.rate_per_minute)
        ));
    }
    Ok(super::report(loaded, "publish", &state, outcomes, notes))
}

fn pr_number(url: &str) -> Option<u64> {
    url.trim_end_matches('/').rsplit('/').next()?.parse().ok()
}

/// Publishes one repository's preview through `pr`.
fn publish_one(
    loaded: &Loaded,
    dir: &Path,
    s: &RepoState,
    parent: Option<gix::ObjectId>,
    lease: Option<gix::ObjectId>,
    pace: Option<Arc<Pace>>,
) -> Result<crate::report::PrReport, Error> {
    let pr = &loaded.spec.pr;
    let clone = Repo::discover_from(dir)?;
    let name = &loaded.spec.name;
    let request = PrRequest {
        id: s.preview.clone(),
        remote: "origin".into(),
        base: s.base.clone(),
        title: Some(super::fill(
            pr.title.as_deref().unwrap_or("astedit campaign {name}"),
            name,
            s,
        )),
        ready: !pr.draft,
        agent: None,
        branch: Some(BranchPlan {
            name: loaded.branch(),
            body: pr.body.as_deref().map(|b| super::fill(b, name, s)),
            labels: pr.labels.clone(),
            reviewers: pr.reviewers.clone(),
            parent,
            lease,
            pace,
            forge: s.forge.unwrap_or_default(),
        }),
    };
    crate::ops::pr::run(&clone, &request)
}

/// `campaign refresh` (`at_once` repositories at a time).
pub fn refresh(
    repo: &Repo,
    loaded: &Loaded,
    checkouts: &Checkouts,
    at_once: usize,
) -> Result<CampaignReport, Error> {
    let mut state = load(repo, loaded)?;
    let branch = loaded.branch();
    let mut outcomes = sync_prs(repo, &mut state, checkouts, &branch, at_once, |_| true)?;
    let mut todo: Vec<RepoState> = state
        .repos
        .values()
        .filter(|s| {
            !s.local
                && s.preview.is_some()
                && matches!(
                    s.status,
                    RepoStatus::Staged | RepoStatus::Published | RepoStatus::Stale
                )
        })
        .cloned()
        .collect();
    todo.sort_by_key(|s| s.order);
    let pace = pace(loaded);
    super::pool::in_order(
        &todo,
        at_once,
        None,
        |s| refresh_one(loaded, checkouts.workspace(), s.clone(), pace.clone()),
        |_| true,
        |_, result| {
            let Some((o, changed)) = result else {
                return Ok(());
            };
            if let Some(c) = changed {
                record(
                    repo,
                    &mut state,
                    std::slice::from_ref(&c),
                    &format!("refresh {}: {}", c.key, o.action),
                    &[],
                )?;
            }
            outcomes.push(o);
            Ok(())
        },
    )?;
    Ok(super::report(
        loaded,
        "refresh",
        &state,
        outcomes,
        Vec::new(),
    ))
}

/// A repository's refresh, decided: its outcome, and the entry to record when it
/// changed.
type Refreshed = (RepoOutcome, Option<RepoState>);

/// One repository: the outcome, and the entry to record when it changed.
///
/// In steps, each of which may end it: find its clone and fetch, see whether the base
/// moved, refuse a published branch someone else pushed to, re-run the preview on the
/// new base, then move a published branch to the new commit.
fn refresh_one(
    loaded: &Loaded,
    workspace: &Path,
    mut s: RepoState,
    pace: Option<Arc<Pace>>,
) -> Refreshed {
    refresh_steps(loaded, workspace, &mut s, pace).unwrap_or_else(|done| *done)
}

fn refresh_steps(
    loaded: &Loaded,
    workspace: &Path,
    s: &mut RepoState,
    pace: Option<Arc<Pace>>,
) -> Result<Refreshed, Box<Refreshed>> {
    let (spec, dir) = fetched_clone(loaded, workspace, s)?;
    let base = s.base.clone().unwrap_or_default();
    let now = git(
        &dir,
        &[
            "rev-parse",
            "--verify",
            "--quiet",
            &format!("refs/remotes/origin/{base}^{{commit}}"),
        ],
    )
    .map(|c| c.trim().to_string())
    .map_err(|e| Box::new((outcome(s, "failed", Some(e)), None)))?;
    if Some(now.as_str()) == s.base_commit.as_deref() && s.status != RepoStatus::Stale {
        return Ok((outcome(s, "current", None), None));
    }
    let published = s.status == RepoStatus::Published;
    if published {
        // The spec's branch: the state's is anyone's to rewrite.
        let branch = loaded.branch();
        refuse_diverged(&dir, s, &branch, &base)?;
    }
    let spec = crate::report::campaign::RepoSpec {
        base: Some(base.clone()),
        ..spec
    };
    rerun_preview(workspace, &dir, &spec, s)?;
    s.base_commit = Some(now.clone());
    s.status = if published {
        RepoStatus::Published
    } else {
        RepoStatus::Staged
    };
    s.reason = None;
    s.updated = super::now();
    if published {
        let parent = gix::ObjectId::from_hex(now.as_bytes()).ok();
        let lease = s
            .pushed_commit
            .as_deref()
            .and_then(|c| gix::ObjectId::from_hex(c.as_bytes()).ok());
        match publish_one(loaded, &dir, s, parent, lease, pace) {
            Ok(r) => s.pushed_commit = Some(r.commit),
            Err(e) => {
                s.status = RepoStatus::Stale;
                s.reason = Some(format!("refreshed, but the branch could not be moved: {e}"));
                let o = outcome(s, "failed", s.reason.clone());
                return Err(Box::new((o, Some(s.clone()))));
            }
        }
    }
    let note = format!(
        "on {}: {} replacement{}",
        &now[..now.len().min(12)],
        s.replacements,
        if s.replacements == 1 { "" } else { "s" }
    );
    let action = if published { "moved" } else { "refreshed" };
    Ok((outcome(s, action, Some(note)), Some(s.clone())))
}

/// The repository's spec and its clone in the workspace, fetched. The clone is the
/// spec's key in the workspace, made by the campaign: the state (shared, and anyone's
/// to write) names no folder we work in; a local checkout is skipped.
fn fetched_clone(
    loaded: &Loaded,
    workspace: &Path,
    s: &RepoState,
) -> Result<(crate::report::campaign::RepoSpec, std::path::PathBuf), Box<Refreshed>> {
    let key = s.key.clone();
    let spec = match loaded.repos.iter().find(|(k, _)| *k == key) {
        Some((_, r)) if r.path.is_none() => r.clone(),
        Some(_) => {
            return Err(Box::new((
                outcome(s, "skipped", Some("a local checkout".into())),
                None,
            )))
        }
        None => {
            let e = super::CampaignError::NotInSpec(key);
            return Err(Box::new((
                outcome(s, "failed", Some(clone::reason(&e))),
                None,
            )));
        }
    };
    let dir = clone::existing(workspace, &key)
        .map_err(|e| Box::new((outcome(s, "failed", Some(clone::reason(&e))), None)))?;
    git(&dir, &["fetch", "--quiet", "--prune", "origin"])
        .map_err(|e| Box::new((outcome(s, "failed", Some(e)), None)))?;
    Ok((spec, dir))
}

/// Someone pushed to the published branch: never move it over their commits. The
/// repository is then recorded as diverged.
fn refuse_diverged(
    dir: &Path,
    s: &mut RepoState,
    branch: &str,
    base: &str,
) -> Result<(), Box<Refreshed>> {
    let remote_head = git(
        dir,
        &["ls-remote", "--", "origin", &format!("refs/heads/{branch}")],
    )
    .map(|o| o.split_whitespace().next().unwrap_or("").to_string());
    match remote_head {
        Ok(h) if Some(h.as_str()) != s.pushed_commit.as_deref() => {
            s.status = RepoStatus::Diverged;
            s.reason = Some(format!(
                "branch {branch} is at {} but we pushed {}: it holds commits we did not \
                 push, so it was left alone; rebase it onto {base} by hand, or close the \
                 pull request and publish again",
                if h.is_empty() { "nothing" } else { &h },
                s.pushed_commit.as_deref().unwrap_or("nothing")
            ));
            s.updated = super::now();
            let o = outcome(s, "diverged", s.reason.clone());
            Err(Box::new((o, Some(s.clone()))))
        }
        Err(e) => Err(Box::new((outcome(s, "failed", Some(e)), None))),
        Ok(_) => Ok(()),
    }
}

/// Checks the clone out on the new base and refreshes the repository's preview there
/// (`refresh --all`), taking its successor, replacements and files into the state. A
/// refresh that leaves nothing to change is "no change", any other failure "stale".
fn rerun_preview(
    workspace: &Path,
    dir: &Path,
    spec: &crate::report::campaign::RepoSpec,
    s: &mut RepoState,
) -> Result<(), Box<Refreshed>> {
    if let Err(e) = clone::sync_clone(workspace, &s.key, spec) {
        return Err(Box::new((outcome(s, "failed", Some(e)), None)));
    }
    let clone = Repo::discover_from(dir)
        .map_err(|e| Box::new((outcome(s, "failed", Some(Error::from(e).to_string())), None)))?;
    let request = crate::ops::refresh::RefreshRequest {
        id: s.preview.clone(),
        all: true,
        agent: None,
        // The campaign's own previews, in its own clone (the gate still checks them).
        allow_run: true,
    };
    let refreshed = match crate::ops::refresh::run(&clone, &request) {
        Ok(r) => r,
        Err(e) => {
            if e.code() == "refresh-empty" {
                s.status = RepoStatus::NoChange;
                s.reason = Some(format!("on the new base nothing is left to change: {e}"));
            } else {
                s.status = RepoStatus::Stale;
                s.reason = Some(e.to_string());
            }
            s.updated = super::now();
            let o = outcome(s, "conflict", s.reason.clone());
            return Err(Box::new((o, Some(s.clone()))));
        }
    };
    if let Some(next) = &refreshed.successor {
        s.preview = Some(next.clone());
    }
    s.replacements = refreshed.replacements_now;
    s.files = refreshed
        .files
        .iter()
        .filter(|f| f.now.is_some())
        .map(|f| f.path.clone())
        .collect();
    s.file_count = s.files.len();
    Ok(())
}
