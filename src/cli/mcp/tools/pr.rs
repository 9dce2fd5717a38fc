//! `pr`: open a pull request for a transaction.

use git_astedit::ops::pr::PrRequest;
use git_astedit::ops::session;
use git_astedit::render::agent;
use git_astedit::Error;
use schemars::JsonSchema;
use serde::Deserialize;

use super::non_empty;
use super::Call;
use super::Done;

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

pub fn pr(call: &Call, input: PrInput) -> Result<Done, Error> {
    let (repo, notes) = call.open()?;
    let id = match input.id {
        Some(id) => id,
        // The newest transaction this session staged that is still applied or
        // pending: another session's work is never published unnamed.
        None => session::target(&repo, &call.session.staged(), session::Tool::Pr)?,
    };
    call.cancel.check()?;
    // The CLI's `pr`, in-process: the same branch, commit, push and `gh` calls.
    let report = git_astedit::ops::pr::run(
        &repo,
        &PrRequest {
            id: Some(id),
            remote: non_empty(input.remote).unwrap_or_else(|| "origin".into()),
            base: non_empty(input.base),
            title: non_empty(input.title),
            ready: input.ready,
            agent: call.agent.clone(),
            branch: None,
        },
    )?;
    Done::new(agent::resolve::pr(&report, &notes), &report)
}
