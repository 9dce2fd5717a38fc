//! `resolve` (and the legacy `ast_apply`): apply or discard a preview.

use git_astedit::error::UsageError;
use git_astedit::ops::apply;
use git_astedit::ops::discard;
use git_astedit::render::agent;
use git_astedit::Error;
use schemars::JsonSchema;
use serde::Deserialize;

use super::pathspecs;
use super::session_target;
use super::string_or_list;
use super::Call;
use super::Done;

/// What `resolve` does with a pending preview.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ResolveAction {
    /// Write the preview to the work tree, after checking that no touched file
    /// changed since it was staged.
    Apply,
    /// Drop the preview; nothing is written. (`reject` is accepted too.)
    #[serde(alias = "reject")]
    Discard,
}

/// The seed tools' `extra` object of `resolve`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct ResolveExtra {
    /// The preview id (the same as `id`).
    #[serde(default, alias = "previewId")]
    pub preview_id: Option<String>,
}

/// Input of `resolve`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ResolveInput {
    /// `apply` or `discard`.
    pub action: ResolveAction,
    /// Why: recorded in the journal with the agent's name.
    pub reason: String,
    /// A preview id or unique prefix (default: the newest preview this session
    /// staged; when it staged none, the error lists the pending previews to name).
    #[serde(default)]
    pub id: Option<String>,
    /// With `apply`: also make a commit on HEAD holding exactly the preview's changes,
    /// with `Astedit-*` trailers (as `git astedit apply --commit`). Other staged or
    /// unstaged changes stay out of the commit.
    #[serde(default)]
    pub commit: bool,
    /// With `commit`: the commit message's subject (default: `astedit KIND: SUMMARY`).
    #[serde(default)]
    pub message: Option<String>,
    /// With `apply`: when the preview is stale, refresh it on the current files and
    /// apply the refreshed preview only if it makes the same number of changes in the
    /// same files (as `git astedit apply --refresh`); otherwise the refreshed preview
    /// is staged for review and the error names it (`details.successor`).
    #[serde(default)]
    pub refresh: bool,
    /// With `apply`: apply only the part of the preview under these git pathspecs
    /// (relative to the repository root); the rest stays pending as a new preview,
    /// named in `split.remainder` (as `git astedit apply ID -- PATHSPEC…`).
    #[serde(default, deserialize_with = "string_or_list")]
    pub paths: Vec<String>,
    /// Accepted for callers of older tools: `extra.previewId` is the same as `id`.
    #[serde(default)]
    pub extra: Option<ResolveExtra>,
}

/// Input of the legacy `ast_apply` tool (the same as `resolve`).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AstApplyInput {
    /// `apply` or `discard` (`reject`).
    pub action: ResolveAction,
    /// The preview id (default: the newest preview this session staged).
    #[serde(default, alias = "previewId")]
    pub id: Option<String>,
    /// Why; journalled.
    #[serde(default)]
    pub reason: Option<String>,
}

pub fn ast_apply(call: &Call, input: AstApplyInput) -> Result<Done, Error> {
    resolve(
        call,
        ResolveInput {
            action: input.action,
            reason: non_empty(input.reason).unwrap_or_else(|| "ast_apply".into()),
            id: input.id,
            extra: None,
            commit: false,
            message: None,
            refresh: false,
            paths: Vec::new(),
        },
    )
}

pub(super) fn non_empty(reason: Option<String>) -> Option<String> {
    reason.filter(|r| !r.trim().is_empty())
}

pub fn resolve(call: &Call, input: ResolveInput) -> Result<Done, Error> {
    let Some(reason) = non_empty(Some(input.reason.clone())) else {
        return Err(UsageError(
            "reason is empty: say why the preview is applied or discarded".into(),
        )
        .into());
    };
    if input.commit && matches!(input.action, ResolveAction::Discard) {
        return Err(UsageError("commit goes with action \"apply\", not \"discard\"".into()).into());
    }
    if input.message.is_some() && !input.commit {
        return Err(
            UsageError("message is the commit's subject: set commit: true too".into()).into(),
        );
    }
    if (input.refresh || !input.paths.is_empty()) && matches!(input.action, ResolveAction::Discard)
    {
        return Err(UsageError("refresh and paths go with action \"apply\"".into()).into());
    }
    if input.refresh && !input.paths.is_empty() {
        return Err(UsageError("refresh and paths cannot be combined".into()).into());
    }
    let (repo, notes) = call.open()?;
    let named = input
        .id
        .clone()
        .or_else(|| input.extra.as_ref().and_then(|e| e.preview_id.clone()));
    let id = match named {
        Some(id) => id,
        None => session_target(&repo, call)?,
    };
    call.cancel.check()?;
    let report = match input.action {
        ResolveAction::Apply => apply::run(
            &repo,
            &apply::ApplyRequest {
                id: Some(id),
                scope: apply::ApplyScope::of(input.refresh, pathspecs(&input.paths, &[])),
                // The CLI's `apply --commit`: the commit goes through the index.
                options: apply::ApplyOptions {
                    reason: Some(reason),
                    agent: call.agent.clone(),
                    index: input.commit,
                    commit: input.commit.then(|| non_empty(input.message.clone())),
                },
                // The server runs no command an agent names: verification is the
                // CLI's (`apply --verify`), where a person chose the command.
                verify: None,
            },
        )?,
        ResolveAction::Discard => discard::run(
            &repo,
            &discard::DiscardRequest {
                id: Some(id),
                reason: Some(reason),
                agent: call.agent.clone(),
            },
        )?,
    };
    Done::new(agent::resolve::resolved(&report, &notes), &report)
}
