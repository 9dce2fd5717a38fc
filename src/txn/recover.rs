/*!
Crash recovery, run before every command ([`recover`]).

An apply or undo that died leaves its record, `<git_dir>/astedit-applying.json`
(per work tree: it describes this work tree's files). Its phase decides:
`prepared` (the commit point was not reached, no target was touched) rolls back by
removing temp files and the folders the run created; `committed` rolls forward by
finishing the renames and deletions, writing whatever temp is missing from the
object database. Either way a `recovered` event is journalled.

The dead run's lock is taken over only when its holder is certainly gone and is the
process that wrote the record; a live holder is left alone (it will finish itself).
*/

use super::apply;
use super::apply::Record;
use super::journal;
use super::journal::Event;
use super::lock::Lock;
use super::Error;
use super::Recovery;
use crate::repo::Repo;

/// The record of an apply/undo in progress, inside the work tree's git dir.
pub const RECORD_FILE: &str = "astedit-applying.json";

fn read_record(repo: &Repo) -> Result<Option<Record>, Error> {
    let path = apply::record_path(repo);
    let bytes = match std::fs::read(&path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(Error::io("read", &path)(e)),
    };
    serde_json::from_slice(&bytes)
        .map(Some)
        .map_err(|e| Error::Corrupt(format!("{}: {e}", path.display())))
}

/// Finishes or rolls back an interrupted apply/undo; every command calls this first.
pub fn recover(repo: &Repo) -> Result<Option<Recovery>, Error> {
    let Some(record) = read_record(repo)? else {
        return Ok(None);
    };
    let _lock = match Lock::acquire(repo, "recover") {
        Ok(lock) => lock,
        Err(err @ Error::Locked { .. }) => match Lock::holder(repo) {
            Some(h) if h.is_dead() && h.pid == record.pid => Lock::take_over(repo, &h, "recover")?,
            Some(h) if h.is_dead() => return Err(err),
            // A live holder is running (or just created the lock): not ours to touch.
            _ => return Ok(None),
        },
        Err(e) => return Err(e),
    };
    // The owner may have finished between our read and our lock.
    let Some(record) = read_record(repo)? else {
        return Ok(None);
    };
    let action = if record.phase == "committed" {
        apply::finish(repo, &record)?;
        "completed"
    } else {
        apply::rollback(repo, &record)?;
        "rolled-back"
    };
    let mut event = Event::new(repo, "recovered", &record.id, record.commit);
    event.op = Some(record.op.clone());
    event.action = Some(action.to_string());
    event.reason = Some(format!("interrupted {} (pid {})", record.op, record.pid));
    event.files = record.ops.iter().map(|o| o.path.clone()).collect();
    event.run = None;
    journal::append(repo, &event, record.commit, Vec::new())?;
    let message = if action == "completed" {
        format!(
            "an interrupted {} of {} was completed ({} paths); see `git astedit log`",
            record.op,
            record.id,
            record.ops.len()
        )
    } else {
        format!(
            "an interrupted {} of {} was rolled back; the work tree is as it was before it",
            record.op, record.id
        )
    };
    Ok(Some(Recovery {
        id: record.id,
        action: action.to_string(),
        message,
    }))
}
