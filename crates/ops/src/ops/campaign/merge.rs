//! `campaign merge`: merges the campaign's open pull requests that are ready, as the
//! spec's `[merge]` says — checks passing (`require_checks`), review approved by the
//! forge's approval answer (`require_approval`), by `method`, deleting the branch
//! (`delete_branch`) — one at a time at the spec's rate. The branch is the spec's (the
//! state is shared, so nothing it names is merged by its word): its pull request is
//! merged only when its head is the commit this campaign made for the repository's
//! current preview ([`super::vouch`]) and the commit it recorded pushing. Anything else
//! is recorded `diverged`, as `refresh` records it, and the forge is also told to merge
//! only that head. Each merge is a state commit.

use std::path::Path;

use super::git;
use super::outcome;
use super::record;
use super::Checkouts;
use super::Loaded;
use super::State;
use crate::ops::forge;
use crate::ops::forge::FoundPr;
use crate::ops::pr::Pace;
use crate::repo::Repo;
use crate::report::campaign::CampaignReport;
use crate::report::campaign::RepoOutcome;
use crate::report::campaign::RepoState;
use crate::report::campaign::RepoStatus;
use crate::Error;

/// `campaign merge SPEC` (the pull requests' state asked `at_once` at a time first).
pub fn merge(
    repo: &Repo,
    loaded: &Loaded,
    checkouts: &Checkouts,
    at_once: usize,
) -> Result<CampaignReport, Error> {
    let mut state: State = super::read_state(repo, &super::state_ref(&loaded.spec.name))?;
    if state.commit.is_none() {
        return Err(super::CampaignError::NoState(loaded.spec.name.clone()).into());
    }
    let branch = loaded.branch();
    let mut outcomes =
        super::publish::sync_prs(repo, &mut state, checkouts, &branch, at_once, |_| true)?;
    let mut todo: Vec<RepoState> = state
        .repos
        .values()
        .filter(|s| s.status == RepoStatus::Published)
        .cloned()
        .collect();
    todo.sort_by_key(|s| s.order);
    let m = &loaded.spec.merge;
    let rate = if m.rate_per_minute > 0 {
        m.rate_per_minute
    } else {
        loaded.spec.pr.rate_per_minute
    };
    let pace =
        (rate > 0).then(|| Pace::new(std::time::Duration::from_secs_f64(60.0 / f64::from(rate))));
    let mut notes = vec![format!(
        "merging by {}{}{}",
        m.method.name(),
        if m.require_checks {
            ", checks passing"
        } else {
            ""
        },
        if m.require_approval { ", approved" } else { "" },
    )];
    for s in todo {
        let (o, changed) = merge_one(repo, &state, loaded, checkouts, s, pace.as_ref());
        if let Some(c) = changed {
            record(
                repo,
                &mut state,
                std::slice::from_ref(&c),
                &format!("merge {}: {}", c.key, o.action),
                &[],
            )?;
        }
        outcomes.push(o);
    }
    if outcomes.is_empty() {
        notes.push("no open pull request to merge".into());
    }
    Ok(super::report(loaded, "merge", &state, outcomes, notes))
}

/// One repository: the outcome, and the entry to record when it changed.
fn merge_one(
    repo: &Repo,
    state: &State,
    loaded: &Loaded,
    checkouts: &Checkouts,
    mut s: RepoState,
    pace: Option<&Pace>,
) -> (RepoOutcome, Option<RepoState>) {
    let m = &loaded.spec.merge;
    let forge = forge::of(s.forge.unwrap_or_default());
    // The spec's branch, never the state's: a rewritten state could name another
    // team's branch and its approved pull request.
    let branch = loaded.branch();
    let dir = match checkouts.dir(&s.key) {
        Ok(d) => d,
        Err(e) => return (outcome(&s, "failed", Some(e.to_string())), None),
    };
    let dir = dir.as_path();
    let found = match forge.find(dir, &branch) {
        Ok(Some(f)) => f,
        Ok(None) => {
            return (
                outcome(&s, "skipped", Some("no pull request found".into())),
                None,
            )
        }
        Err(e) => return (outcome(&s, "unknown", Some(e.to_string())), None),
    };
    if found.state != "OPEN" {
        return (
            outcome(
                &s,
                "skipped",
                Some(format!("pull request is {}", found.state.to_lowercase())),
            ),
            None,
        );
    }
    if let Some(why) = not_ready(m, &found) {
        return (outcome(&s, "waiting", Some(why)), None);
    }
    let refused = foreign(dir, &branch, &s, &found)
        .or_else(|| super::vouch::pushed_commit_is_ours(repo, state, dir, &branch, &s).err());
    if let Some(why) = refused {
        s.status = RepoStatus::Diverged;
        s.reason = Some(why);
        s.updated = super::now();
        return (outcome(&s, "diverged", s.reason.clone()), Some(s));
    }
    if let Some(pace) = pace {
        pace.wait();
    }
    let how = forge::MergeHow {
        method: m.method,
        delete_branch: m.delete_branch,
        head: s.pushed_commit.clone(),
    };
    let merged = if found.draft {
        forge.ready(dir, &found)
    } else {
        Ok(())
    }
    .and_then(|()| forge.merge(dir, &found, &how));
    if let Err(e) = merged {
        return (outcome(&s, "failed", Some(e.to_string())), None);
    }
    s.status = RepoStatus::Merged;
    s.merged_by = Some(m.method.name().to_string());
    s.pr_url = Some(found.url);
    s.pr_number = found.number.or(s.pr_number);
    s.reason = None;
    s.updated = super::now();
    (outcome(&s, "merged", None), Some(s))
}

/// Why an open pull request is not merged yet, as `[merge]` asks; `None`: it may be.
fn not_ready(m: &crate::report::campaign::MergeSpec, found: &FoundPr) -> Option<String> {
    let checks = found.checks.as_deref();
    if checks == Some("failing") {
        return Some("checks are failing".into());
    }
    if m.require_checks && checks != Some("passing") {
        return Some(match checks {
            None => "no checks reported (require_checks = false merges it)".into(),
            Some(c) => format!("checks are {c}"),
        });
    }
    if let (true, Some(why)) = (m.require_approval, &found.review_unknown) {
        return Some(format!("not approved as far as we know: {why}"));
    }
    if m.require_approval && found.review.as_deref() != Some("APPROVED") {
        return Some(format!(
            "not approved ({})",
            found
                .review
                .as_deref()
                .unwrap_or("no approving review of its head by someone other than its author")
        ));
    }
    None
}

/// Why the branch holds commits we did not push, if it does: the remote's head (and
/// the forge's view of it) must be the commit we pushed.
fn foreign(dir: &Path, branch: &str, s: &RepoState, found: &FoundPr) -> Option<String> {
    let pushed = s.pushed_commit.as_deref().unwrap_or("nothing");
    let remote = match git(
        dir,
        &["ls-remote", "--", "origin", &format!("refs/heads/{branch}")],
    ) {
        Ok(o) => o.split_whitespace().next().unwrap_or("").to_string(),
        Err(e) => return Some(format!("cannot read branch {branch} on the remote: {e}")),
    };
    let heads = std::iter::once(remote.as_str()).chain(found.head.as_deref());
    for head in heads {
        if head != pushed {
            return Some(format!(
                "branch {branch} is at {} but we pushed {pushed}: it holds commits we did not \
                 push, so it was not merged",
                if head.is_empty() { "nothing" } else { head }
            ));
        }
    }
    None
}
