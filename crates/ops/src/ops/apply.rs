/*!
`apply` (and `resolve apply`, the server's `resolve` with `action: "apply"`): writes a
pending preview to the work tree.

How an apply runs — the whole preview, the part some pathspecs select, or refreshed
first when it is stale — is decided here, once; both front ends build an
[`ApplyRequest`] and print the [`ResolveReport`] they get back.
*/

use crate::repo::Repo;
use crate::report::Action;
use crate::report::ResolveReport;
use crate::txn;
use crate::Error;

/// Which part of a preview an apply writes, and whether it may refresh it first.
#[derive(Debug, Clone, Default)]
pub enum ApplyScope {
    /// Every path of the preview.
    #[default]
    Whole,
    /// The paths these git pathspecs select (relative to the current folder); the rest
    /// stays pending as a new preview.
    Part(Vec<String>),
    /// The whole preview; when it is stale, refreshed on the current files and the
    /// successor applied only if it makes the same changes in the same files.
    Refreshed,
}

impl ApplyScope {
    /// The scope both front ends' flags mean: `refresh` (exclusive with pathspecs, as
    /// their parsers check), else the part `pathspecs` select, else the whole preview.
    pub fn of(refresh: bool, pathspecs: Vec<String>) -> ApplyScope {
        if refresh {
            ApplyScope::Refreshed
        } else if !pathspecs.is_empty() {
            ApplyScope::Part(pathspecs)
        } else {
            ApplyScope::Whole
        }
    }
}

/// How to apply: what the journal records, and whether the index and HEAD move too.
#[derive(Debug, Clone, Default)]
pub struct ApplyOptions {
    pub reason: Option<String>,
    /// Also update the index entries of the touched paths.
    pub index: bool,
    /// Make a commit on HEAD holding exactly the preview's changes (with this message;
    /// `Some(None)`: the default subject).
    pub commit: Option<Option<String>>,
    /// The agent acting (MCP client name/version), recorded in the journal.
    pub agent: Option<String>,
    /// Whether programs may run: a `verify` command, a stale preview's recipe on
    /// `refresh` (the CLI: yes; the MCP server: only with `--allow-run`). Checked by
    /// [`crate::ops::trust`].
    pub allow_run: bool,
}

impl From<&ApplyOptions> for txn::ApplyOptions {
    fn from(o: &ApplyOptions) -> txn::ApplyOptions {
        txn::ApplyOptions {
            reason: o.reason.clone(),
            index: o.index,
            commit: o.commit.clone(),
            agent: o.agent.clone(),
            verified: None,
        }
    }
}

/// An apply: which preview, which part, how. Made by [`ApplyRequest::new`], which
/// checks the rules between its parts, or [`ApplyRequest::whole`].
#[derive(Debug, Clone)]
pub struct ApplyRequest {
    /// A pending preview's id or unique prefix; the newest pending one when `None`.
    id: Option<String>,
    scope: ApplyScope,
    options: ApplyOptions,
    /// Check the preview in a worktree of its own first; apply only if it passes.
    verify: Option<VerifyPlan>,
    /// Apply the whole preview even when it has review decisions (`apply --all`).
    all: bool,
}

/// `apply --verify`: the command and how long it may take.
#[derive(Debug, Clone)]
pub struct VerifyPlan {
    pub command: crate::ops::verify::VerifyCommand,
    pub timeout: std::time::Duration,
}

impl VerifyPlan {
    /// A shell command line, killed after `secs` seconds (at least one), as every
    /// front end's `verify` flag gives it.
    pub fn shell(line: String, secs: u64) -> VerifyPlan {
        VerifyPlan {
            command: crate::ops::verify::VerifyCommand::Shell(line),
            timeout: std::time::Duration::from_secs(secs.max(1)),
        }
    }
}

impl ApplyRequest {
    /// An apply of the preview `id` (the newest pending when `None`): refreshed first
    /// when it is stale (`refresh`), or only the part `pathspecs` select, checked in a
    /// worktree first (`verify`). The flag rules both front ends share are checked
    /// here, once.
    pub fn new(
        id: Option<String>,
        refresh: bool,
        pathspecs: Vec<String>,
        options: ApplyOptions,
        verify: Option<VerifyPlan>,
    ) -> Result<ApplyRequest, crate::error::UsageError> {
        if verify.is_some() && (refresh || !pathspecs.is_empty()) {
            return Err(crate::error::UsageError(
                "verify checks the whole preview: not with paths or refresh (refresh first, \
                 then verify the successor)"
                    .into(),
            ));
        }
        if refresh && !pathspecs.is_empty() {
            return Err(crate::error::UsageError(
                "refresh and paths cannot be combined".into(),
            ));
        }
        Ok(ApplyRequest {
            id,
            scope: ApplyScope::of(refresh, pathspecs),
            options,
            verify,
            all: false,
        })
    }

    /// An apply of the whole preview `id` (the newest pending when `None`), as it is.
    pub fn whole(id: Option<String>, options: ApplyOptions) -> ApplyRequest {
        ApplyRequest {
            id,
            scope: ApplyScope::Whole,
            options,
            verify: None,
            all: false,
        }
    }

    /// The preview asked for (`None`: the newest pending one).
    pub fn id(&self) -> Option<&str> {
        self.id.as_deref()
    }

    /// Whether this is an apply of the whole preview as it is (no pathspecs, no
    /// refresh), which obeys review decisions unless `--all`.
    pub fn obeys_decisions(&self) -> bool {
        !self.all && matches!(self.scope, ApplyScope::Whole)
    }

    /// Whether a verify command runs first.
    pub fn verifies(&self) -> bool {
        self.verify.is_some()
    }

    pub fn options(&self) -> &ApplyOptions {
        &self.options
    }

    /// The same apply, of the whole preview even when it has review decisions
    /// (`apply --all`); else a whole apply obeys them (see
    /// [`crate::ops::review::apply`]).
    pub fn all(self, all: bool) -> ApplyRequest {
        ApplyRequest { all, ..self }
    }

    /// The same apply, of the preview `id` (a caller that checks its flags before it
    /// knows which preview it means).
    pub fn of(self, id: String) -> ApplyRequest {
        ApplyRequest {
            id: Some(id),
            ..self
        }
    }
}

/// Runs `plan` on the preview `id` (the newest pending when `None`) in a worktree of
/// it: the report and the line for an `Astedit-Verified` trailer when it passed, a
/// `verify-failed` error (the preview left pending, nothing written) when not.
/// `apply --verify`, `scan --apply --verify` and the server's `resolve` share it.
pub fn check(
    repo: &Repo,
    id: Option<String>,
    plan: &VerifyPlan,
    agent: &Option<String>,
    cancel: &crate::cancel::Cancel,
) -> Result<(crate::report::verify::VerifyReport, String), Error> {
    let check = crate::ops::verify::run(
        repo,
        &crate::ops::verify::VerifyRequest {
            id,
            command: plan.command.clone(),
            timeout: plan.timeout,
            agent: agent.clone(),
            new_only: false,
        },
        cancel,
    )?;
    if !check.passed {
        return Err(crate::ops::verify::VerifyError::Failed {
            id: check.id.clone(),
            command: check.command.clone(),
            how: crate::ops::verify::how(&check),
            output: check.output.clone(),
        }
        .into());
    }
    let line = format!("{} {}", check.command, crate::ops::verify::how(&check));
    Ok((check, line))
}

/// Applies a pending preview as `request` says, as it was staged: review decisions are
/// not read here. Every front end (and `campaign apply --local`) goes through
/// [`crate::ops::review::apply::run`], which obeys them and calls this otherwise; `scan
/// --apply` calls it on the preview it has just staged (no decisions yet). After a
/// refresh (`ApplyScope::Refreshed` of a stale preview) the report's `refreshed` tells
/// how.
pub fn run_as_staged(repo: &Repo, request: &ApplyRequest) -> Result<ResolveReport, Error> {
    run_cancellable(repo, request, &crate::cancel::Cancel::never())
}

/// [`run_as_staged`], with a verify command (`request.verify`) stopped when `cancel`
/// fires.
pub fn run_cancellable(
    repo: &Repo,
    request: &ApplyRequest,
    cancel: &crate::cancel::Cancel,
) -> Result<ResolveReport, Error> {
    let mut id = request.id.as_deref();
    let mut options = txn::ApplyOptions::from(&request.options);
    let mut verified = None;
    let checked_id;
    if let Some(plan) = &request.verify {
        crate::ops::trust::allow_run(
            request.options.allow_run,
            "verify",
            vec![format!("command: {}", plan.command.display())],
        )?;
        // `ApplyRequest::new` keeps `verify` to the whole preview.
        let (check, line) = check(repo, request.id.clone(), plan, &options.agent, cancel)?;
        options.verified = Some(line);
        // The preview checked is the one applied, even if another is staged meanwhile
        // (the stale check still guards its files).
        checked_id = check.id.clone();
        id = Some(&checked_id);
        verified = Some(Box::new(check));
    }
    let (applied, refreshed) = match &request.scope {
        ApplyScope::Whole => (txn::apply(repo, id, &options)?, None),
        ApplyScope::Part(pathspecs) => (
            crate::ops::split::apply_part(repo, id, pathspecs, &options)?,
            None,
        ),
        ApplyScope::Refreshed => {
            let done = crate::ops::refresh::apply_refreshed(
                repo,
                id,
                &options,
                request.options.allow_run,
            )?;
            (done.report, done.refreshed)
        }
    };
    let mut report = resolved(
        &applied,
        Action::Applied,
        options.index,
        options.reason.clone(),
    );
    report.refreshed = refreshed.map(|r| Box::new(crate::ops::refresh::report(repo, &r)));
    report.verified = verified;
    Ok(report)
}

/// The report of an apply or undo the transaction layer made: `files` is the paths
/// written and deleted.
pub fn resolved(
    report: &txn::ApplyReport,
    action: Action,
    index: bool,
    reason: Option<String>,
) -> ResolveReport {
    ResolveReport::of(report, action, None, index, reason)
}
