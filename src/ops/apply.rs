/*!
Apply, undo and discard of a preview (DESIGN §7a: the operations both front ends call).

How an apply runs — the whole preview, the part some pathspecs select, or refreshed
first when it is stale — is decided here, once; the CLI's `apply`/`undo`/`discard` and
the server's `resolve`/`undo` build a request and print the report they get back.
*/

use crate::ops::refresh::Refreshed;
use crate::repo::Repo;
use crate::report::Action;
use crate::report::PreviewState;
use crate::report::ResolveReport;
use crate::report::Version;
use crate::txn;
use crate::txn::ApplyOptions;
use crate::txn::UndoOptions;
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

/// An apply: which preview, which part, how.
#[derive(Debug, Clone, Default)]
pub struct ApplyRequest {
    /// A pending preview's id or unique prefix; the newest pending one when `None`.
    pub id: Option<String>,
    pub scope: ApplyScope,
    pub options: ApplyOptions,
}

/// What an apply did: the report, and the refresh it needed (for `Refreshed`).
#[derive(Debug)]
pub struct Applied {
    /// `refreshed` is left `None` here: its paths are printed as the front end shows
    /// paths (see [`Applied::refreshed`]).
    pub report: ResolveReport,
    pub refreshed: Option<Refreshed>,
}

/// Applies a pending preview as `request` says.
pub fn apply(repo: &Repo, request: &ApplyRequest) -> Result<Applied, Error> {
    let id = request.id.as_deref();
    let options = &request.options;
    let (report, refreshed) = match &request.scope {
        ApplyScope::Whole => (txn::apply(repo, id, options)?, None),
        ApplyScope::Part(pathspecs) => (
            crate::ops::split::apply_part(repo, id, pathspecs, options)?,
            None,
        ),
        ApplyScope::Refreshed => {
            let done = crate::ops::refresh::apply_refreshed(repo, id, options)?;
            (done.report, done.refreshed)
        }
    };
    Ok(Applied {
        report: ResolveReport::of(
            &report,
            Action::Applied,
            None,
            options.index,
            options.reason.clone(),
        ),
        refreshed,
    })
}

/// An undo of an applied transaction.
#[derive(Debug, Clone, Default)]
pub struct UndoRequest {
    /// The transaction's id or unique prefix; the newest applied one when `None`.
    pub id: Option<String>,
    pub options: UndoOptions,
}

/// Restores what an apply replaced; the preview is pending again.
pub fn undo(repo: &Repo, request: &UndoRequest) -> Result<ResolveReport, Error> {
    let report = txn::undo(repo, request.id.as_deref(), &request.options)?;
    Ok(ResolveReport::of(
        &report,
        Action::Undone,
        None,
        request.options.index,
        request.options.reason.clone(),
    ))
}

/// A discard of a pending preview.
#[derive(Debug, Clone, Default)]
pub struct DiscardRequest {
    /// A pending preview's id or unique prefix; the newest pending one when `None`.
    pub id: Option<String>,
    pub reason: Option<String>,
    /// The MCP client (`name/version`) asking, journalled with the event.
    pub agent: Option<String>,
}

/// The report of a discard, and the discarded preview's summary (for the text).
#[derive(Debug)]
pub struct Discarded {
    pub report: ResolveReport,
    pub summary: String,
}

/// Drops a pending preview, recording why.
pub fn discard(repo: &Repo, request: &DiscardRequest) -> Result<Discarded, Error> {
    let preview = txn::discard_as(
        repo,
        request.id.as_deref(),
        request.reason.as_deref(),
        request.agent.as_deref(),
    )?;
    let files: Vec<String> = preview.entries.iter().map(|e| e.path.clone()).collect();
    Ok(Discarded {
        report: ResolveReport {
            schema_version: Version,
            id: preview.id,
            action: Action::Discarded,
            state: PreviewState::Discarded,
            written: Vec::new(),
            deleted: Vec::new(),
            file_count: files.len(),
            files,
            index: false,
            commit: None,
            reason: request.reason.clone(),
            index_restored: false,
            index_left: Vec::new(),
            commit_kept: None,
            split: None,
            refreshed: None,
        },
        summary: preview.meta.summary,
    })
}
