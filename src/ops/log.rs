//! `log`: the journal, newest first, or the whole line of one change.

use crate::repo::Repo;
use crate::report::EventRow;
use crate::report::LogReport;
use crate::report::Version;
use crate::Error;

/// Events shown when no count is given: enough to see what happened lately, and a
/// page that costs the same however long the journal is.
pub const DEFAULT_MAX_COUNT: usize = 200;

/// Which events to read.
#[derive(Debug, Clone)]
pub struct LogRequest {
    /// Only the events of this transaction's line (a unique id prefix, any case).
    pub id: Option<String>,
    /// Only the events of this agent's session (its spelling or a unique prefix, see
    /// [`crate::ops::session::resolve_session`]).
    pub session: Option<String>,
    /// At most this many events (0: no limit).
    pub max_count: usize,
}

pub fn run(repo: &Repo, req: &LogRequest) -> Result<LogReport, Error> {
    let prefix = req.id.as_deref().map(str::to_ascii_lowercase);
    let cap = match req.max_count {
        0 => usize::MAX,
        n => n,
    };
    let session = match &req.session {
        Some(s) => Some(crate::ops::session::resolve_session(repo, s)?),
        None => None,
    };
    let (events, capped) = match prefix.as_deref() {
        // The newest page only: read from the journal's end, never past the page.
        None if session.is_none() => crate::txn::newest(repo, cap)?,
        None => {
            let mut events = crate::txn::log(repo)?;
            events.retain(|e| e.agent == session);
            let capped = events.len() > cap;
            events.truncate(cap);
            (events, capped)
        }
        // With an id, the whole line of one change: the previews it was split from and
        // the parts it was split into, wherever in the journal their events are.
        Some(p) => {
            let all = crate::txn::log(repo)?;
            let related = crate::txn::lineage(&all, p);
            let mut events: Vec<_> = all
                .into_iter()
                .filter(|e| related.contains(&e.id))
                .filter(|e| session.is_none() || e.agent == session)
                .collect();
            let capped = events.len() > cap;
            events.truncate(cap);
            (events, capped)
        }
    };
    Ok(LogReport {
        schema_version: Version,
        events: events.iter().map(EventRow::of).collect(),
        capped,
        max_count: req.max_count,
    })
}
