/*!
Transactions kept in git: previews under `refs/astedit/<id>`, the journal, apply/undo
with stale checks, the repository lock and crash recovery (DESIGN §2–3).

STUB: the signatures below are the contract the CLI codes against; bodies to come.
*/

use crate::change::ChangeSet;
use crate::change::FileMode;
use crate::change::PreviewMeta;
use crate::error::Classify;
use crate::error::Exit;
use crate::repo::Repo;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("not implemented yet")]
    NotImplemented,
}

impl Classify for Error {
    fn code(&self) -> &'static str {
        "internal"
    }
    fn exit(&self) -> Exit {
        Exit::Internal
    }
}

/// One path of a stored preview: blob ids and modes before and after.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredEntry {
    pub path: String,
    pub before: Option<(gix::ObjectId, FileMode)>,
    pub after: Option<(gix::ObjectId, FileMode)>,
}

/// A preview as stored in git.
#[derive(Debug, Clone)]
pub struct Preview {
    /// Short hex id (a prefix of the preview commit's id).
    pub id: String,
    pub commit: gix::ObjectId,
    /// Seconds since the epoch when it was staged.
    pub time: i64,
    pub meta: PreviewMeta,
    pub entries: Vec<StoredEntry>,
}

/// Stores `changes` as a new pending preview and records a `staged` journal event.
pub fn stage(_repo: &Repo, _changes: &ChangeSet, _meta: &PreviewMeta) -> Result<Preview, Error> {
    Err(Error::NotImplemented)
}

/// Pending previews, newest first.
pub fn list(_repo: &Repo) -> Result<Vec<Preview>, Error> {
    Err(Error::NotImplemented)
}

/// A pending preview by unique id prefix, or the newest when `id` is `None`.
pub fn find(_repo: &Repo, _id: Option<&str>) -> Result<Preview, Error> {
    Err(Error::NotImplemented)
}

/// The bytes of a stored blob.
pub fn blob(_repo: &Repo, _id: gix::ObjectId) -> Result<Vec<u8>, Error> {
    Err(Error::NotImplemented)
}

/// Drops a pending preview and records a `discarded` event.
pub fn discard(_repo: &Repo, _id: Option<&str>, _reason: Option<&str>) -> Result<Preview, Error> {
    Err(Error::NotImplemented)
}

/// How to apply a preview.
#[derive(Debug, Clone, Default)]
pub struct ApplyOptions {
    pub reason: Option<String>,
    /// Also update the index entries of the touched paths.
    pub index: bool,
    /// Make a commit on HEAD holding exactly the preview's changes (with this message).
    pub commit: Option<Option<String>>,
    /// The agent acting (MCP client name/version), recorded in the journal.
    pub agent: Option<String>,
}

/// What an apply or undo did.
#[derive(Debug, Clone, Default)]
pub struct ApplyReport {
    pub id: String,
    /// Paths written (created or replaced), repository-relative.
    pub written: Vec<String>,
    /// Paths deleted.
    pub deleted: Vec<String>,
    /// The commit made by `--commit`.
    pub commit: Option<String>,
}

/// Applies a pending preview (the newest when `id` is `None`).
pub fn apply(_repo: &Repo, _id: Option<&str>, _opts: &ApplyOptions) -> Result<ApplyReport, Error> {
    Err(Error::NotImplemented)
}

/// What recovery did with an apply or undo interrupted by a crash.
#[derive(Debug, Clone)]
pub struct Recovery {
    pub id: String,
    /// `completed` or `rolled-back`.
    pub action: String,
    pub message: String,
}

/// Finishes or rolls back an interrupted apply/undo; every command calls this first.
pub fn recover(_repo: &Repo) -> Result<Option<Recovery>, Error> {
    Ok(None)
}
