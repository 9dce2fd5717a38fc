//! `undo` (and the server's `undo` tool): restores what an apply replaced; the preview
//! is pending again.

use crate::repo::Repo;
use crate::report::Action;
use crate::report::ResolveReport;
use crate::txn;
use crate::Error;

/// An undo of an applied transaction.
#[derive(Debug, Clone, Default)]
pub struct UndoRequest {
    /// The transaction's id or unique prefix; the newest applied one when `None`.
    pub id: Option<String>,
    /// Why, recorded in the journal.
    pub reason: Option<String>,
    /// The MCP client (`name/version`) asking, journalled with the event.
    pub agent: Option<String>,
    /// Also restore the index entries of the touched paths.
    pub index: bool,
}

pub fn run(repo: &Repo, request: &UndoRequest) -> Result<ResolveReport, Error> {
    let options = txn::UndoOptions {
        reason: request.reason.clone(),
        agent: request.agent.clone(),
        index: request.index,
    };
    let report = txn::undo(repo, request.id.as_deref(), &options)?;
    Ok(crate::ops::apply::resolved(
        &report,
        Action::Undone,
        request.index,
        request.reason.clone(),
    ))
}
