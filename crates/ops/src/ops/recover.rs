//! `recover` (`--status`, `--finish`, `--abandon`): an apply or undo that was
//! interrupted and could not be finished safely; and [`prelude`], the recovery every
//! command runs first.

use crate::repo::Repo;
use crate::report::LockStatus;
use crate::report::RecoverOutput;
use crate::report::RecoverReport;
use crate::report::RecoverStatusReport;
use crate::report::RunPath;
use crate::report::UnfinishedRun;
use crate::report::UnresolvedPath;
use crate::report::Version;
use crate::txn::PathState;
use crate::Error;

/// What `recover` does.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum RecoverRequest {
    /// Show the interrupted run and where each of its paths stands; writes nothing.
    #[default]
    Status,
    /// Finish what can be finished; paths holding neither side stay as they are.
    Finish,
    /// Put back what can be put back safely, keep the rest, drop the run.
    Abandon,
}

pub fn run(repo: &Repo, req: &RecoverRequest) -> Result<RecoverOutput, Error> {
    let recovery = match req {
        RecoverRequest::Status => return status(repo).map(RecoverOutput::Status),
        RecoverRequest::Finish => crate::txn::finish(repo)?,
        RecoverRequest::Abandon => crate::txn::abandon(repo)?,
    };
    Ok(RecoverOutput::Done(RecoverReport {
        schema_version: Version,
        id: recovery.id,
        op: recovery.op,
        action: recovery.action,
        unresolved: recovery
            .unresolved
            .into_iter()
            .map(|p| UnresolvedPath {
                path: p.path,
                what: p.what,
            })
            .collect(),
        notes: recovery.notes,
        message: recovery.message,
    }))
}

fn status(repo: &Repo) -> Result<RecoverStatusReport, Error> {
    let status = crate::txn::status(repo)?;
    let locks = crate::txn::blocking_locks(repo);
    let hint = status
        .as_ref()
        .is_some_and(|s| {
            s.files
                .iter()
                .any(|f| matches!(f.state, PathState::Changed | PathState::Refused))
        })
        .then_some(crate::txn::RESOLVE_HINT);
    Ok(RecoverStatusReport {
        schema_version: Version,
        unfinished: status.map(|s| UnfinishedRun {
            files: s
                .files
                .into_iter()
                .map(|f| RunPath {
                    from_blob: f.from_blob,
                    path: f.path,
                    state: f.state,
                    to_blob: f.to_blob,
                    what: f.what,
                })
                .collect(),
            id: s.id,
            op: s.op,
            phase: s.phase,
            pid: s.pid,
            running: s.running,
        }),
        locks: locks
            .into_iter()
            .map(|(path, what)| LockStatus { path, what })
            .collect(),
        hint,
    })
}
