//! `undo` (and the server's `undo` tool): restores what an apply replaced; the preview
//! is pending again.

use crate::repo::Repo;
use crate::report::Action;
use crate::report::ResolveReport;
use crate::report::SessionUndoReport;
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

/// `undo --session S`: everything session `session` applied that is still applied,
/// newest first.
#[derive(Debug, Clone, Default)]
pub struct SessionUndoRequest {
    /// The session (its spelling or a unique prefix, see
    /// [`crate::ops::session::resolve_session`]).
    pub session: String,
    pub reason: Option<String>,
    /// Who asks (journalled with each undo).
    pub agent: Option<String>,
    pub index: bool,
}

/// Undoes every transaction a session applied that is still applied, newest first
/// (hook edits, shell commands, applied previews). Refused, with nothing undone,
/// where another session's later transaction, still applied, touched one of its
/// files: each such file is named with that session. A `head-moved` event is not an
/// edit and is left alone. An undo that fails (a file changed since outside the
/// journal) stops the run: the ones before it stay undone and the report says so.
pub fn run_session(repo: &Repo, request: &SessionUndoRequest) -> Result<SessionUndoReport, Error> {
    let session = crate::ops::session::resolve_session(repo, &request.session)?;
    let events = txn::log(repo)?;
    // The newest applied-or-undone event of each id says whether it is applied.
    let mut decided = std::collections::BTreeSet::new();
    let mut applied: Vec<&txn::Event> = Vec::new();
    for e in &events {
        if matches!(e.event, txn::EventKind::Applied | txn::EventKind::Undone)
            && decided.insert(e.id.clone())
            && e.event == txn::EventKind::Applied
        {
            applied.push(e);
        }
    }
    let mine: Vec<&txn::Event> = applied
        .iter()
        .copied()
        .filter(|e| e.agent.as_deref() == Some(session.as_str()))
        .collect();
    let mut blocked: Vec<BlockedFile> = Vec::new();
    for (i, later) in applied.iter().enumerate() {
        if later.agent.as_deref() == Some(session.as_str()) {
            continue;
        }
        // Transactions of the session older than this one, on the same files.
        for e in applied[i + 1..]
            .iter()
            .filter(|e| e.agent.as_deref() == Some(session.as_str()))
        {
            for f in e.files.iter().filter(|f| later.files.contains(f)) {
                if !blocked.iter().any(|b| b.path == *f) {
                    blocked.push(BlockedFile {
                        path: f.clone(),
                        id: later.id.clone(),
                        by: later.agent.clone().unwrap_or_else(|| later.who.clone()),
                    });
                }
            }
        }
    }
    if !blocked.is_empty() {
        return Err(UndoSessionError::Blocked { session, blocked }.into());
    }
    let options = txn::UndoOptions {
        reason: request
            .reason
            .clone()
            .or_else(|| Some(format!("undo of session {session}"))),
        agent: request.agent.clone(),
        index: request.index,
    };
    let mut undone = Vec::new();
    for e in &mine {
        let report = txn::undo(repo, Some(&e.id), &options)?;
        undone.push(crate::ops::apply::resolved(
            &report,
            Action::Undone,
            request.index,
            options.reason.clone(),
        ));
    }
    Ok(SessionUndoReport {
        schema_version: crate::report::Version,
        session,
        undone,
    })
}

/// A file `undo --session` cannot give back: a later transaction of another session,
/// still applied, changed it.
#[derive(Debug, Clone, serde::Serialize)]
pub struct BlockedFile {
    pub path: String,
    /// That transaction.
    pub id: String,
    /// Its session (or, without one, who made it).
    pub by: String,
}

/// Why `undo --session` refused.
#[derive(Debug, thiserror::Error)]
pub enum UndoSessionError {
    #[error("{}", blocked_message(.session, .blocked))]
    Blocked {
        session: String,
        blocked: Vec<BlockedFile>,
    },
}

fn blocked_message(session: &str, blocked: &[BlockedFile]) -> String {
    let mut m = format!(
        "nothing undone: a later edit of another session sits on top of {}'s in {}:",
        crate::text::escape_line(session),
        crate::text::plural(blocked.len(), "file")
    );
    for b in blocked {
        m.push_str(&format!(
            "\n  {}: {} by {}",
            b.path,
            b.id,
            crate::text::escape_line(&b.by)
        ));
    }
    m
}

impl crate::error::Classify for UndoSessionError {
    fn code(&self) -> &'static str {
        "session-undo-blocked"
    }
    fn exit(&self) -> crate::error::Exit {
        crate::error::Exit::Refused
    }
    fn hint(&self) -> Option<String> {
        Some(
            "undo the later transactions first (git astedit undo ID, or undo --session of \
             theirs), or leave this session's edits in place"
                .into(),
        )
    }
    fn details(&self) -> Option<serde_json::Value> {
        match self {
            UndoSessionError::Blocked { blocked, .. } => {
                Some(serde_json::json!({ "blocked": blocked }))
            }
        }
    }
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
