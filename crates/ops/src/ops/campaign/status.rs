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
    /// Also review each pending preview (`status --html` writes a review page for
    /// each and links it).
    pub reviews: bool,
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
    let reviews = if req.reviews {
        reviews(&repos, &mut notes)
    } else {
        Default::default()
    };
    Ok(CampaignStatusReport {
        schema_version: Version,
        name: req.name.clone(),
        state_ref: refname,
        state_commit: state.commit.map(|c| c.to_string()),
        totals: super::totals(&repos),
        burndown: burndown(repo, state.commit)?,
        repos,
        notes,
        reviews,
    })
}

/// The review of each repository's preview that is pending in its checkout (a
/// repository whose preview was applied, discarded or never made has none; one that
/// cannot be reviewed gets a note).
fn reviews(
    repos: &[crate::report::campaign::RepoState],
    notes: &mut Vec<String>,
) -> std::collections::BTreeMap<String, crate::report::review::Review> {
    use crate::report::campaign::RepoStatus;
    let mut out = std::collections::BTreeMap::new();
    for r in repos {
        let (Some(preview), Some(checkout)) = (&r.preview, &r.checkout) else {
            continue;
        };
        use RepoStatus::*;
        if !matches!(r.status, Staged | Stale | Published | Diverged | Undone) {
            continue;
        }
        let review = Repo::discover_from(std::path::Path::new(checkout))
            .map_err(Error::from)
            .and_then(|clone| crate::ops::review::load(&clone, Some(preview)))
            .map(|model| model.review());
        match review {
            Ok(review) => {
                out.insert(r.key.clone(), review);
            }
            Err(e) => notes.push(format!("{}: no review page: {e}", r.key)),
        }
    }
    out
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
