//! `resolve` (and the legacy `ast_apply`): apply or discard a preview.

use git_astedit::error::UsageError;
use git_astedit::ops::apply;
use git_astedit::ops::discard;
use git_astedit::render::agent;
use git_astedit::Error;
use schemars::JsonSchema;
use serde::Deserialize;

use super::count;
use super::pathspecs;
use super::session_target;
use super::string_or_list;
use super::Call;
use super::Done;

/// How long `resolve`'s `verify` command may run unless the call says: shorter than the
/// CLI's ten minutes, since a client waits on the call.
const DEFAULT_VERIFY_TIMEOUT_SECS: usize = 300;

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
    /// With `apply`: first run this shell command line (`sh -c`, as the agent's own
    /// shell would) in a temporary worktree holding the preview's base commit and its
    /// changes, and apply only if it exits 0 (as `git astedit apply --verify`); when it
    /// fails, nothing is written, the preview stays pending and the error holds the end
    /// of its output (`details.output`). The server runs the command with the user's
    /// rights, as the agent's shell does. Not with `paths` or `refresh`.
    #[serde(default)]
    pub verify: Option<String>,
    /// With `verify`: kill the command (and what it started) after this many seconds
    /// (default 300).
    #[serde(default, deserialize_with = "count")]
    #[schemars(with = "usize", extend("default" = DEFAULT_VERIFY_TIMEOUT_SECS))]
    pub verify_timeout: Option<usize>,
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
            verify: None,
            verify_timeout: None,
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
    if input.verify.is_some() && matches!(input.action, ResolveAction::Discard) {
        return Err(UsageError("verify goes with action \"apply\"".into()).into());
    }
    if input.verify_timeout.is_some() && input.verify.is_none() {
        return Err(UsageError("verify_timeout goes with verify".into()).into());
    }
    // The flags are checked before the repository is opened; the id is the target's.
    let apply_request = apply::ApplyRequest::new(
        None,
        input.refresh,
        pathspecs(&input.paths, &[]),
        // The CLI's `apply --commit`: the commit goes through the index.
        apply::ApplyOptions {
            reason: Some(reason.clone()),
            agent: call.agent.clone(),
            allow_run: call.allow_run,
            index: input.commit,
            commit: input.commit.then(|| non_empty(input.message.clone())),
        },
        input.verify.clone().map(|line| {
            let secs = input.verify_timeout.unwrap_or(DEFAULT_VERIFY_TIMEOUT_SECS);
            apply::VerifyPlan::shell(line, secs as u64)
        }),
    )?;
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
        ResolveAction::Apply => {
            git_astedit::ops::review::apply::run(&repo, &apply_request.of(id), &call.cancel)?
        }
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
