//! `campaign status`: each repository's entry, the totals, and the burndown over the
//! state's history (one point per state commit, first parents, oldest first).

use super::State;
use crate::repo::Repo;
use crate::report::campaign::BurndownPoint;
use crate::report::campaign::CampaignStatusReport;
use crate::report::Version;
use crate::Error;

pub struct StatusRequest {
    pub name: String,
    /// The pull requests' head branch: the spec's (never one the shared state names).
    pub branch: String,
    /// Do not ask `gh` for the pull requests' state (no state commit then).
    pub offline: bool,
    /// How many pull requests are asked about at the same time.
    pub at_once: usize,
    /// Where each repository's checkout is (gh asks the forge from there).
    pub checkouts: super::Checkouts,
}

pub fn status(repo: &Repo, req: &StatusRequest) -> Result<CampaignStatusReport, Error> {
    let refname = super::state_ref(&req.name);
    let mut state: State = super::read_state(repo, &refname)?;
    if state.commit.is_none() {
        return Err(super::CampaignError::NoState(req.name.clone()).into());
    }
    let mut notes = Vec::new();
    if !req.offline {
        for o in super::publish::sync_prs(
            repo,
            &mut state,
            &req.checkouts,
            &req.branch,
            req.at_once,
            |_| true,
        )? {
            if let Some(n) = &o.note {
                notes.push(format!("{}: {n}", o.key));
            }
        }
    }
    let mut repos: Vec<_> = state.repos.values().cloned().collect();
    repos.sort_by_key(|s| s.order);
    Ok(CampaignStatusReport {
        schema_version: Version,
        name: req.name.clone(),
        state_ref: refname,
        state_commit: state.commit.map(|c| c.to_string()),
        totals: super::totals(&repos),
        burndown: burndown(repo, state.commit)?,
        repos,
        notes,
    })
}

fn burndown(repo: &Repo, tip: Option<gix::ObjectId>) -> Result<Vec<BurndownPoint>, Error> {
    let mut points = Vec::new();
    let mut next = tip;
    while let Some(id) = next {
        let what = format!("read campaign state {id}");
        let c = repo
            .git
            .find_commit(id)
            .map_err(super::git_fail(what.clone()))?;
        let time = c.time().map_err(super::git_fail(what.clone()))?.seconds;
        let subject = c
            .message_raw()
            .map_err(super::git_fail(what.clone()))?
            .to_string();
        next = c.parent_ids().next().map(|p| p.detach());
        let entries = super::entries_at(repo, id)?;
        points.push(BurndownPoint {
            commit: id.to_string(),
            time: crate::text::rfc3339(time),
            // The subject paragraph: the trailers after it say who made the commit.
            what: crate::text::first_line(subject.trim().split("\n\n").next().unwrap_or("")),
            totals: super::totals(entries.values()),
        });
    }
    points.reverse();
    Ok(points)
}
