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
recovery. A hook can hold it from its check to the write it allowed ([`HookLock`]): the
agent's write then takes its turn with applies, as theirs take turns with each other.
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
    let lock = Lock::acquire_tree(repo, "record")?;
    let id = record_locked(repo, changes, meta, Vec::new())?;
    drop(lock);
    Ok(id)
}

/// [`record_applied`] with the lock held.
fn record_locked(
    repo: &Repo,
    changes: &ChangeSet,
    meta: &PreviewMeta,
    notes: Vec<String>,
) -> Result<String, Error> {
    refuse_while_unfinished(repo)?;
    let mut stager = store::Stager::new(repo);
    for c in &changes.changes {
        stager.add_borrowed(c)?;
    }
    let (files, objects, meta) = stager.into_parts(meta);
    // Never signed: a hardware key would ask for a touch on every edit an agent makes.
    let p_id = store::build_preview(repo, objects, &files, &meta, false, None)?;
    let id = store::short_id(p_id);
    let mut event = Event::new(repo, EventKind::Applied, &id, p_id);
    event.reason = meta.reason.clone();
    event.agent = meta.agent.clone();
    event.kind = Some(meta.kind);
    event.files = files.iter().map(|f| f.path.clone()).collect();
    event.notes = notes;
    let commit = journal::append(repo, &event, p_id, Vec::new())?;
    journal::sync(repo, commit, &[journal::JOURNAL_REF])?;
    Ok(id)
}

/// The work tree's lock alone, held while an operation reads the work tree to stage a
/// preview from it (`lane merge`): no agent's turn, apply or undo changes a file of
/// this tree meanwhile. Released when dropped.
pub struct TreeLock(#[allow(dead_code)] Lock);

impl TreeLock {
    pub fn take(repo: &Repo, op: &str) -> Result<TreeLock, Error> {
        Ok(TreeLock(Lock::acquire_tree(repo, op)?))
    }
}

/// The repository lock as an agent hook holds it: from its check before the agent's
/// own edit to the write that edit makes (kept as a turn in between, see
/// [`super::lock`]), then for the journal write after it.
pub struct HookLock(Lock);

impl HookLock {
    /// Takes the lock (waiting as [`super::set_lock_wait`] set), then finishes or
    /// rolls back what a killed writer left, as every writer does under the lock. A
    /// run that stays unfinished does not keep the hook from checking: it is `false`
    /// in the second field (the journal write will refuse then).
    pub fn take(repo: &Repo) -> Result<(HookLock, bool), Error> {
        let lock = Lock::acquire_tree(repo, "agent-hook")?;
        let clear = match refuse_while_unfinished(repo) {
            Ok(()) => true,
            Err(Error::RecoveryPending { .. }) => false,
            Err(e) => return Err(e),
        };
        Ok((HookLock(lock), clear))
    }

    /// The turn `session` was given for `path`, taken back if nobody broke it after
    /// its deadline (see [`super::lock`]); `None` when it is gone.
    pub fn take_back(repo: &Repo, session: &str, path: &str) -> Result<Option<HookLock>, Error> {
        Ok(super::lock::take_back_turn(repo, session, path, "agent-hook")?.map(HookLock))
    }

    /// Leaves the lock held past this process as `session`'s turn to write `path`,
    /// for `bound` at most.
    pub fn keep_as_turn(
        self,
        session: &str,
        path: &str,
        bound: std::time::Duration,
    ) -> Result<(), Error> {
        self.0.keep_as_turn(session, path, bound)
    }

    /// [`record_applied`] under this lock.
    pub fn record_applied(
        &self,
        repo: &Repo,
        changes: &ChangeSet,
        meta: &PreviewMeta,
    ) -> Result<String, Error> {
        record_locked(repo, changes, meta, Vec::new())
    }

    /// [`HookLock::record_applied`] with notes on the event (what was left out).
    pub fn record_applied_noted(
        &self,
        repo: &Repo,
        changes: &ChangeSet,
        meta: &PreviewMeta,
        notes: Vec<String>,
    ) -> Result<String, Error> {
        record_locked(repo, changes, meta, notes)
    }

    /// Journals a `head-moved` event: an agent's command moved HEAD to `head`,
    /// changing `files` (not an edit to undo).
    pub fn record_head_moved(
        &self,
        repo: &Repo,
        head: gix::ObjectId,
        files: &[String],
        reason: Option<String>,
        agent: Option<String>,
        notes: Vec<String>,
    ) -> Result<(), Error> {
        refuse_while_unfinished(repo)?;
        let mut event = Event::new(repo, EventKind::HeadMoved, &store::short_id(head), head);
        event.reason = reason;
        event.agent = agent;
        event.files = files.to_vec();
        event.notes = notes;
        let commit = journal::append(repo, &event, head, Vec::new())?;
        journal::sync(repo, commit, &[journal::JOURNAL_REF])
    }
}
