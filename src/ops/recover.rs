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

/// What the recovery before a command did, and whether it left a run unfinished.
#[derive(Debug)]
pub struct Prelude {
    /// Lines for the user, in order: what was cleared, what recovery did.
    pub warnings: Vec<String>,
    /// Recovery failed (`Err`), or left this run unfinished (`Some((op, id))`).
    outcome: Result<Option<(crate::txn::TxnOp, String)>, Error>,
}

impl Prelude {
    /// The error the command gets: recovery's own failure, or (`refuse`: a command
    /// that writes) the run recovery could not finish.
    pub fn check(self, refuse: bool) -> Result<(), Error> {
        match self.outcome? {
            Some((op, id)) if refuse => Err(crate::txn::Error::RecoveryPending {
                op: op.as_str(),
                id,
            }
            .into()),
            _ => Ok(()),
        }
    }
}

/// What every command runs first: clears what killed runs of ours left behind (a
/// failure there is only a warning: the command may not need it), then finishes or
/// rolls back an interrupted apply or undo.
pub fn prelude(repo: &Repo) -> Prelude {
    let mut warnings = match crate::txn::clear_stale(repo) {
        Ok(notes) => notes,
        Err(e) => vec![format!(
            "could not clear what a killed git astedit left: {e} (`git astedit recover --status` shows it)"
        )],
    };
    let outcome = match crate::txn::recover(repo) {
        Ok(Some(r)) => {
            warnings.push(r.message.clone());
            Ok(r.pending().then(|| (r.op, r.id.clone())))
        }
        Ok(None) => Ok(None),
        Err(e) => Err(e.into()),
    };
    Prelude { warnings, outcome }
}
