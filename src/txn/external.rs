/*!
Edits made outside git-astedit, journalled after the fact: a coding agent's own Edit or
Write tool, seen by its harness's hooks (`git astedit agent-hook`). The files already
hold the new content; what is missing is the record. So a preview is built over the
change (before: what the file held when the agent's tool started; after: what it holds
now) and journalled at once as `applied`, with the agent named, without moving a file.
From there it is like any applied transaction: `log` shows it, `undo` takes it back
(stale-checked like every undo), `pr` can push it.

The repository lock is taken for the journal write, so a recorded edit never lands in
the middle of an apply, and none is recorded while an interrupted run waits for
recovery.
*/

use super::apply::refuse_while_unfinished;
use super::journal;
use super::journal::Event;
use super::journal::EventKind;
use super::lock::Lock;
use super::store;
use super::Error;
use crate::change::ChangeSet;
use crate::change::PreviewMeta;
use crate::repo::Repo;

/// Journals `changes`, already made in the work tree, as an applied transaction
/// described by `meta` (whose `agent` and `reason` go into the event). Returns its id.
pub fn record_applied(
    repo: &Repo,
    changes: &ChangeSet,
    meta: &PreviewMeta,
) -> Result<String, Error> {
    let lock = Lock::acquire(repo, "record")?;
    refuse_while_unfinished(repo)?;
    let mut stager = store::Stager::new(repo);
    for c in &changes.changes {
        stager.add_borrowed(c)?;
    }
    let (files, objects, meta) = stager.into_parts(meta);
    let p_id = store::build_preview(repo, objects, &files, &meta)?;
    let id = store::short_id(p_id);
    let mut event = Event::new(repo, EventKind::Applied, &id, p_id);
    event.reason = meta.reason.clone();
    event.agent = meta.agent.clone();
    event.kind = Some(meta.kind);
    event.files = files.iter().map(|f| f.path.clone()).collect();
    let commit = journal::append(repo, &event, p_id, Vec::new())?;
    journal::sync(repo, commit, &[journal::JOURNAL_REF])?;
    drop(lock);
    Ok(id)
}
