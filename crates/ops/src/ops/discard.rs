//! `discard` (and `resolve discard`, the server's `resolve` with `action: "discard"`):
//! drops a pending preview, recording why in the journal.

use crate::repo::Repo;
use crate::report::Action;
use crate::report::PreviewState;
use crate::report::ResolveReport;
use crate::report::Version;
use crate::txn;
use crate::Error;

/// A discard of a pending preview.
#[derive(Debug, Clone, Default)]
pub struct DiscardRequest {
    /// A pending preview's id or unique prefix; the newest pending one when `None`.
    pub id: Option<String>,
    pub reason: Option<String>,
    /// The MCP client (`name/version`) asking, journalled with the event.
    pub agent: Option<String>,
}

/// Drops a pending preview; the report's `summary` is the preview's (for the text).
pub fn run(repo: &Repo, request: &DiscardRequest) -> Result<ResolveReport, Error> {
    let preview = txn::discard_as(
        repo,
        request.id.as_deref(),
        request.reason.as_deref(),
        request.agent.as_deref(),
    )?;
    let files: Vec<String> = preview.entries.iter().map(|e| e.path.clone()).collect();
    Ok(ResolveReport {
        schema_version: Version,
        id: preview.id,
        action: Action::Discarded,
        state: PreviewState::Discarded,
        written: Vec::new(),
        deleted: Vec::new(),
        file_count: files.len(),
        files,
        index: false,
        commit: None,
        reason: request.reason.clone(),
        index_restored: false,
        index_left: Vec::new(),
        commit_kept: None,
        split: None,
        review: None,
        refreshed: None,
        verified: None,
        summary: preview.meta.summary,
    })
}
