//! Crash recovery (in progress).
use super::Error;
use super::Recovery;
use crate::repo::Repo;

pub const RECORD_FILE: &str = "astedit-applying.json";

/// Finishes or rolls back an interrupted apply/undo; every command calls this first.
pub fn recover(_repo: &Repo) -> Result<Option<Recovery>, Error> {
    Ok(None)
}
