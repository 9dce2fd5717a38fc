//! The repository handle: opened once, and each call opens the repository afresh and
//! runs the recovery every CLI command runs first, as the MCP server does per tool call
//! (another process may have staged, applied or crashed in between).

use std::path::Path;
use std::path::PathBuf;
use std::sync::Mutex;

use astedit_ops::ops;
use astedit_ops::repo::Repo;

use super::calls::Caller;
use super::edit::Edit;
use super::error::Error;
use super::settings::ApplyOptions;
use super::settings::Options;
use super::settings::Programs;
use super::types::Event;
use super::types::Preview;
use super::types::Resolved;
use super::types::Staged;

/// A git repository whose work tree the library edits through previews.
#[derive(Debug)]
pub struct Repository {
    workdir: PathBuf,
    options: Options,
    notes: Mutex<Vec<String>>,
}

impl Repository {
    /// Opens the repository containing `path` (a pathspec in an edit is relative to
    /// `path`), with [`Options::new`].
    pub fn open(path: impl AsRef<Path>) -> Result<Repository, Error> {
        Repository::open_with(path, Options::new())
    }

    /// Opens the repository containing `path`. An apply a crash interrupted is
    /// finished or rolled back first ([`Repository::take_notes`] says which); when it
    /// cannot be, the error is `recovery-pending` (`git astedit recover` tells more).
    pub fn open_with(path: impl AsRef<Path>, options: Options) -> Result<Repository, Error> {
        let workdir = std::path::absolute(path.as_ref()).map_err(|e| {
            Error::usage(format!("cannot resolve {}: {e}", path.as_ref().display()))
        })?;
        if let Some(bound) = options.lock_wait {
            ops::session::wait_for_lock(bound);
        }
        let repository = Repository {
            workdir,
            options,
            notes: Mutex::new(Vec::new()),
        };
        repository.repo(true)?;
        Ok(repository)
    }

    /// The work tree's top folder.
    pub fn workdir(&self) -> Result<PathBuf, Error> {
        Ok(self.repo(false)?.workdir)
    }

    /// What recovery did before the calls made since the last take (what a killed run
    /// left that was cleared, an interrupted apply finished or rolled back).
    pub fn take_notes(&self) -> Vec<String> {
        std::mem::take(&mut *self.notes.lock().unwrap_or_else(|e| e.into_inner()))
    }

    /// The repository, opened afresh after the recovery every command runs first;
    /// `writes` refuses while an interrupted run stays unfinished.
    pub(crate) fn repo(&self, writes: bool) -> Result<Repo, Error> {
        let (repo, notes) = ops::session::open(&self.workdir, writes)?;
        if !notes.is_empty() {
            let mut all = self.notes.lock().unwrap_or_else(|e| e.into_inner());
            all.extend(notes);
        }
        Ok(repo)
    }

    fn agent(&self) -> Option<String> {
        self.options.identity.as_ref().map(|i| i.0.clone())
    }

    /// Who calls, as the operations take it.
    fn caller(&self) -> Caller {
        Caller {
            agent: self.agent(),
            allow_run: self.options.programs == Programs::Allow,
        }
    }

    /// Stages `edit` as a pending preview; no work-tree file is touched. `id` is
    /// `None` when nothing would change.
    pub fn stage(&self, edit: &Edit) -> Result<Staged, Error> {
        if let Some(misuse) = &edit.misuse {
            return Err(Error::usage(misuse.clone()));
        }
        let repo = self.repo(true)?;
        super::calls::stage(&self.caller(), &repo, edit)
    }

    /// The unified diff of a pending preview (`id`: an id or unique prefix).
    pub fn diff(&self, id: &str) -> Result<String, Error> {
        let repo = self.repo(false)?;
        super::calls::diff(&repo, id)
    }

    /// The pending previews, oldest first.
    pub fn list(&self) -> Result<Vec<Preview>, Error> {
        let repo = self.repo(false)?;
        super::calls::list(&repo)
    }

    /// Applies a pending preview as one atomic checkout of its staged blobs, only if
    /// every touched file still has the content it had when the preview was staged
    /// (else the error is `stale` and nothing is written).
    pub fn apply(&self, id: &str, options: &ApplyOptions) -> Result<Resolved, Error> {
        let repo = self.repo(true)?;
        super::calls::apply(&self.caller(), &repo, id, options)
    }

    /// Undoes an applied preview from its journal entry: every touched file goes back
    /// to its content before the apply, only if it still holds what the apply wrote.
    pub fn undo(&self, id: &str, reason: Option<&str>) -> Result<Resolved, Error> {
        let repo = self.repo(true)?;
        let request = ops::undo::UndoRequest {
            id: Some(id.to_string()),
            reason: reason.map(str::to_string),
            agent: self.agent(),
            index: false,
        };
        super::calls::resolved(ops::undo::run(&repo, &request)?)
    }

    /// Drops a pending preview unapplied.
    pub fn discard(&self, id: &str, reason: Option<&str>) -> Result<Resolved, Error> {
        let repo = self.repo(true)?;
        let request = ops::discard::DiscardRequest {
            id: Some(id.to_string()),
            reason: reason.map(str::to_string),
            agent: self.agent(),
        };
        super::calls::resolved(ops::discard::run(&repo, &request)?)
    }

    /// The journal, newest first: at most `max` events (0: all), of this work tree.
    pub fn journal(&self, max: usize) -> Result<Vec<Event>, Error> {
        let repo = self.repo(false)?;
        super::calls::journal(&repo, max)
    }
}
