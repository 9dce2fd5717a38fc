//! `pr`: open a pull request for a transaction.

use git_astedit::repo::Repo;
use git_astedit::report::PreviewRow;
use git_astedit::txn;
use git_astedit::Error;
use schemars::JsonSchema;
use serde::Deserialize;

use super::non_empty;

use super::push_notes;
use super::Call;
use super::Done;
use super::ToolError;

/// Input of `pr`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PrInput {
    /// The transaction's id or unique prefix, applied or pending (default: the newest
    /// preview this session staged that is applied or pending; when there is none,
    /// the error lists the pending previews to name).
    #[serde(default, alias = "previewId")]
    pub id: Option<String>,
    /// The remote to push the branch `astedit/<id>` to (default `origin`).
    #[serde(default)]
    pub remote: Option<String>,
    /// The branch the pull request merges into (default: the repository's default
    /// branch).
    #[serde(default)]
    pub base: Option<String>,
    /// The pull request's title (default: the preview's reason, else its summary).
    #[serde(default)]
    pub title: Option<String>,
    /// Open it ready for review instead of as a draft (default: a draft).
    #[serde(default)]
    pub ready: bool,
}

/// The transaction a no-id `pr` means: the newest one this session staged that is
/// still applied or pending. Another session's work is never published unnamed.
fn session_pr_target(repo: &Repo, call: &Call) -> Result<String, Error> {
    let ids = call.session.staged();
    let mut undone = Vec::new();
    for id in ids.iter().rev() {
        if let Ok(t) = txn::resolve::resolve(repo, Some(id), txn::resolve::Want::AppliedOrPending) {
            // Undone since (by anyone): publishing it unnamed would publish what its
            // author took back, so it must be named, as for the CLI.
            if t.state == (txn::resolve::State::Pending { undone: true }) {
                undone.push(t.id);
                continue;
            }
            return Ok(t.id);
        }
    }
    if !undone.is_empty() {
        return Err(txn::Error::OnlyUndone(undone).into());
    }
    let pending = txn::list(repo)?.iter().map(PreviewRow::of).collect();
    Err(ToolError::IdRequired {
        tool: "pr",
        staged_here: !ids.is_empty(),
        pending,
    }
    .into())
}

pub fn pr(call: &Call, input: PrInput) -> Result<Done, Error> {
    let (repo, notes) = call.open()?;
    let id = match input.id {
        Some(id) => id,
        None => session_pr_target(&repo, call)?,
    };
    call.cancel.check()?;
    // The CLI's `pr`, in-process: the same branch, commit, push and `gh` calls.
    let report = git_astedit::ops::pr::open(
        &repo,
        &git_astedit::ops::pr::PrRequest {
            id: Some(id),
            remote: non_empty(input.remote).unwrap_or_else(|| "origin".into()),
            base: non_empty(input.base),
            title: non_empty(input.title),
            ready: input.ready,
            agent: call.agent.clone(),
        },
    )?;
    let (url, branch, id) = (&report.url, &report.branch, &report.id);
    let mut text = if report.created {
        format!(
            "Opened {}pull request {url} for {id} (branch {branch} at {}).\n",
            if report.draft { "draft " } else { "" },
            report.commit
        )
    } else {
        format!("A pull request for {id} already exists: {url} (branch {branch}, pushed again).\n")
    };
    push_notes(&mut text, &notes, &[]);
    Done::new(text, &report)
}
