/*!
What happened outside any journal event (a stale lock broken, a killed ref transaction
cleared), queued durably for whichever event comes next, and the wall clock events
are timed by. Below the journal and the locks, so that both can queue notes.
*/

use super::Error;
use crate::repo::Repo;

/// Seconds since the epoch, from the wall clock (journal ages are wall-clock ages).
pub fn now_secs() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0)
}

/// Notes for the next journal event, one per line: something that happened outside any
/// event (a stale lock broken) is told by whichever event comes next.
const PENDING_NOTES: &str = "astedit-notes.pending";

pub fn pending_notes_path(repo: &Repo) -> std::path::PathBuf {
    repo.common_dir.join(PENDING_NOTES)
}

pub fn pending_notes(repo: &Repo) -> Vec<String> {
    std::fs::read_to_string(pending_notes_path(repo))
        .map(|s| {
            s.lines()
                .filter(|l| !l.is_empty())
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

/// Queues `note` for the next journal event (durably: the note must survive a crash
/// of the run that follows).
pub fn add_pending_note(repo: &Repo, note: &str) -> Result<(), Error> {
    use std::io::Write;
    let path = pending_notes_path(repo);
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .map_err(Error::io("open", &path))?;
    writeln!(f, "{}", note.replace('\n', " "))
        .and_then(|_| f.sync_all())
        .map_err(Error::io("write", &path))?;
    super::fsutil::sync_dir(&repo.common_dir)
}
