/*!
Crash recovery, run before every command ([`recover`]), and `git astedit recover`
([`status`], [`finish`], [`abandon`]).

An apply or undo that died leaves its record, `<git_dir>/astedit-applying.json`
(per work tree: it describes this work tree's files). Its phase decides:
`prepared` (the commit point was not reached, no target was touched) rolls back by
removing temp files and the folders the run created; `committed` rolls forward by
finishing the renames and deletions, writing whatever temp is missing from the
object database. Either way a `recovered` event is journalled.

Rolling forward checks every path first ([`super::record`]): one whose folder became
a symlink, or that holds neither side of the change (edited after the crash), is left
alone and reported, and the record stays: the run is *unfinished* until the user
resolves it with `recover --finish` (after making such a path hold either side) or
`recover --abandon` (put back what can be put back, keep the rest as it is).

A live holder of the repository lock is left alone (it will finish itself); the lock
of a dead one is broken by [`Lock::acquire`].
*/

use super::journal;
use super::journal::Event;
use super::journal::EventKind;
use super::journal::RecoveryAction;
use super::journal::TxnOp;
use super::lock::Lock;
use super::record;
use super::record::Direction;
use super::record::Phase;
use super::record::Record;
use super::record::State;
use super::Error;
use super::Recovery;
use super::StalePath;
use crate::repo::Repo;

/// Finishes or rolls back an interrupted apply/undo; every command calls this first.
/// `None` when there was nothing to do (or a live process is running it).
pub fn recover(repo: &Repo) -> Result<Option<Recovery>, Error> {
    if record::read_record(repo)?.is_none() {
        return Ok(None);
    }
    let _lock = match Lock::acquire(repo, "recover") {
        Ok(lock) => lock,
        // A live holder is running (or just created the lock): not ours to touch.
        Err(Error::Locked { .. }) => return Ok(None),
        Err(e) => return Err(e),
    };
    // The owner may have finished between our read and our lock.
    let Some(record) = record::read_record(repo)? else {
        return Ok(None);
    };
    roll(repo, record).map(Some)
}

/// `recover --finish`: what [`recover`] does, asked for (an error when there is
/// nothing to recover, or the run's process is still alive).
pub fn finish(repo: &Repo) -> Result<Recovery, Error> {
    let _lock = Lock::acquire(repo, "recover")?;
    let record = record::read_record(repo)?.ok_or(Error::NothingToRecover)?;
    roll(repo, record)
}

/// `recover --abandon`: rolls the interrupted run back as far as is safe (a path that
/// holds neither side stays as it is), drops the record, journals it.
pub fn abandon(repo: &Repo) -> Result<Recovery, Error> {
    let _lock = Lock::acquire(repo, "recover")?;
    let record = record::read_record(repo)?.ok_or(Error::NothingToRecover)?;
    if record.phase == Phase::Prepared || record::event_landed(repo, &record)? {
        // Nothing of it to abandon: rolled back anyway, or complete already.
        return roll(repo, record);
    }
    let pass = record::abandon(repo, &record)?;
    let mut notes = pass.notes.clone();
    notes.extend(left_alone_notes(&pass.unresolved));
    if super::index::clear_stale_lock(repo)? {
        notes.push(
            "removed the index.lock it held; check the staged state with `git status`".into(),
        );
    }
    journal_recovered(repo, &record, RecoveryAction::Abandoned, notes.clone())?;
    let mut message = format!(
        "the interrupted {} of {} was abandoned: {}",
        record.op,
        record.id,
        match pass.changed.len() {
            0 => "nothing needed putting back".to_string(),
            1 => "1 path put back as it was before it".to_string(),
            n => format!("{n} paths put back as they were before it"),
        }
    );
    if record.op == TxnOp::Apply {
        message.push_str("; the preview is pending again");
    }
    push_notes(&mut message, &notes);
    Ok(Recovery {
        id: record.id,
        op: record.op,
        action: RecoveryAction::Abandoned,
        message,
        unresolved: Vec::new(),
        notes,
    })
}

/// Rolls `record` back (before its commit point) or forward (after it), journals
/// what was done, and says so.
pub(super) fn roll(repo: &Repo, record: Record) -> Result<Recovery, Error> {
    let (action, pass) = match record.phase {
        Phase::Prepared => {
            let notes = record::rollback(repo, &record)?;
            let pass = record::Pass {
                notes,
                ..record::Pass::default()
            };
            (RecoveryAction::RolledBack, pass)
        }
        Phase::Committed => {
            let pass = record::finish(repo, &record, None)?;
            if pass.unresolved.is_empty() {
                (RecoveryAction::Completed, pass)
            } else {
                (RecoveryAction::Partial, pass)
            }
        }
    };
    let mut notes = pass.notes.clone();
    notes.extend(left_alone_notes(&pass.unresolved));
    // A killed `apply --index`/`--commit` also left its (marked) index.lock behind.
    if super::index::clear_stale_lock(repo)? {
        notes.push(
            "removed the index.lock it held; check the staged state with `git status`".into(),
        );
    }
    // A killed `apply --commit` past its point of no return: HEAD and the index too,
    // so that the `applied` event's `made_commit` is true.
    if let (RecoveryAction::Completed, TxnOp::Apply, Some(made)) =
        (action, record.op, record.made_commit.as_deref())
    {
        let paths: Vec<String> = record.ops.iter().map(|o| o.path.clone()).collect();
        notes.push(
            super::index::complete_commit(repo, made, &paths).unwrap_or_else(|e| {
                format!("made-commit-not-published: {made} was not put on HEAD: {e}")
            }),
        );
    }
    // An unfinished run that moved nothing this time has nothing new to journal.
    if action != RecoveryAction::Partial || !pass.changed.is_empty() {
        journal_recovered(repo, &record, action, notes.clone())?;
    }
    let (op, id) = (record.op, &record.id);
    let mut message = match action {
        RecoveryAction::Completed => format!(
            "an interrupted {op} of {id} was completed ({} paths); see `git astedit log`",
            record.ops.len()
        ),
        RecoveryAction::RolledBack => format!(
            "an interrupted {op} of {id} was rolled back; the work tree is as it was before it"
        ),
        _ => format!(
            "an interrupted {op} of {id} is unfinished: {} left alone, the rest done",
            crate::text::plural(pass.unresolved.len(), "path"),
        ),
    };
    push_notes(&mut message, &notes);
    if action == RecoveryAction::Partial {
        message.push_str(&format!("\nhint: {}", super::RESOLVE_HINT));
    }
    Ok(Recovery {
        id: record.id,
        op: record.op,
        action,
        message,
        unresolved: pass.unresolved,
        notes,
    })
}

/// The notes under a message, at most [`NOTES_SHOWN`] (the journal keeps them all).
fn push_notes(message: &mut String, notes: &[String]) {
    for n in notes.iter().take(NOTES_SHOWN) {
        message.push_str(&format!("\n  {n}"));
    }
    if notes.len() > NOTES_SHOWN {
        message.push_str(&format!(
            "\n  … and {} more (`git astedit recover --status`, `git astedit log`)",
            notes.len() - NOTES_SHOWN
        ));
    }
}

const NOTES_SHOWN: usize = 10;

fn left_alone_notes(paths: &[StalePath]) -> Vec<String> {
    paths
        .iter()
        .map(|p| format!("left alone: {}: {}", p.path, p.what))
        .collect()
}

fn journal_recovered(
    repo: &Repo,
    record: &Record,
    action: RecoveryAction,
    notes: Vec<String>,
) -> Result<(), Error> {
    let mut event = Event::new(repo, EventKind::Recovered, &record.id, record.commit);
    event.op = Some(record.op);
    event.action = Some(action);
    event.reason = Some(format!("interrupted {} (pid {})", record.op, record.pid));
    event.files = record.ops.iter().map(|o| o.path.clone()).collect();
    event.notes = notes;
    journal::append(repo, &event, record.commit, Vec::new())?;
    Ok(())
}

/// An interrupted run as `recover --status` shows it.
#[derive(Debug, Clone)]
pub struct RecordStatus {
    pub id: String,
    pub op: TxnOp,
    /// `prepared` (will be rolled back) or `committed` (will be rolled forward).
    pub phase: Phase,
    pub pid: u32,
    /// The process that ran it still holds the lock (it is not interrupted, only busy).
    pub running: bool,
    pub files: Vec<FileState>,
}

/// One path of an interrupted run.
#[derive(Debug, Clone)]
pub struct FileState {
    pub path: String,
    pub state: PathState,
    /// Why a path is left alone (`changed`, `refused`).
    pub what: Option<String>,
    /// The blob the run writes there (`None`: it removes the path).
    pub to_blob: Option<String>,
    /// The blob it replaces (`None`: the path is new).
    pub from_blob: Option<String>,
}

/// Where one path of an interrupted run stands, written as its lowercase name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum PathState {
    /// It holds what the run writes.
    Done,
    /// It holds what the run replaces: it will be written.
    Waiting,
    /// The same, in a run that will be rolled back.
    Untouched,
    /// It holds neither side: left alone.
    Changed,
    /// A folder on its way is a symlink or not a folder: left alone.
    Refused,
}

impl PathState {
    pub fn as_str(self) -> &'static str {
        match self {
            PathState::Done => "done",
            PathState::Waiting => "waiting",
            PathState::Untouched => "untouched",
            PathState::Changed => "changed",
            PathState::Refused => "refused",
        }
    }
}

impl std::fmt::Display for PathState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // `pad`, so that `{:<8}` lines up like a string would.
        f.pad(self.as_str())
    }
}

/// The interrupted run, if any, and where each of its paths stands. Writes nothing.
pub fn status(repo: &Repo) -> Result<Option<RecordStatus>, Error> {
    let Some(record) = record::read_record(repo)? else {
        return Ok(None);
    };
    let running = Lock::holder(repo).is_some_and(|h| h.pid == record.pid && !h.is_dead());
    let mut known = std::collections::HashSet::new();
    let mut files = Vec::with_capacity(record.ops.len());
    for op in &record.ops {
        let (state, what) = match record::classify(repo, &mut known, op, Direction::Forward, None)?
        {
            State::Done => (PathState::Done, None),
            // Before the point of no return nothing is written: it is rolled back.
            State::Ready(_) if record.phase == Phase::Prepared => (PathState::Untouched, None),
            State::Ready(_) => (PathState::Waiting, None),
            State::Conflict(w) => (PathState::Changed, Some(w)),
            State::Refused(w) => (PathState::Refused, Some(w)),
        };
        files.push(FileState {
            path: op.path.clone(),
            state,
            what,
            to_blob: op.to.map(|s| s.blob.to_string()),
            from_blob: op.from.map(|s| s.blob.to_string()),
        });
    }
    Ok(Some(RecordStatus {
        id: record.id,
        op: record.op,
        phase: record.phase,
        pid: record.pid,
        running,
        files,
    }))
}
