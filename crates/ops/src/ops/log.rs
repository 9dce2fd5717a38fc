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
    /// Each change's diff (`-p`); per-file line counts and the tool come with it, and
    /// with `session`.
    pub patch: bool,
    /// Without an id or a session: the events of every work tree, not only those made
    /// in the one the command runs in (the main tree, or a lane).
    pub all_worktrees: bool,
}

/// Lines of diff a `log --patch` event shows at most.
const MAX_DIFF_LINES: usize = 2000;

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
        // The newest page only: read from the journal's end, never past the page. Of
        // this work tree alone unless asked, as an id-less `undo` picks from it.
        None if session.is_none() && req.all_worktrees => crate::txn::newest(repo, cap)?,
        None if session.is_none() => {
            let here = repo.worktree_name();
            crate::txn::newest_where(repo, cap, |e| e.worktree == here)?
        }
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
    let detail = req.patch || session.is_some();
    let rows = events
        .iter()
        .map(|e| {
            let mut row = EventRow::of(e);
            if detail {
                detail_of(repo, e, &mut row, req.patch);
            }
            row
        })
        .collect();
    Ok(LogReport {
        schema_version: Version,
        events: rows,
        capped,
        max_count: req.max_count,
    })
}

/// What an event's change was: the tool, each file's lines added and removed, and (with
/// `patch`) the diff. Left empty where the preview cannot be read (pruned by `gc`) or
/// the event is not a change (`head-moved`, `pr`, `verified`).
fn detail_of(repo: &Repo, e: &crate::txn::Event, row: &mut EventRow, patch: bool) {
    use crate::txn::EventKind;
    if !matches!(
        e.event,
        EventKind::Staged | EventKind::Applied | EventKind::Undone
    ) {
        return;
    }
    let Ok(commit) = gix::ObjectId::from_hex(e.commit.as_bytes()) else {
        return;
    };
    let Ok(preview) = crate::txn::read_preview(repo, commit) else {
        return;
    };
    row.tool = preview.meta.details["hook"]["tool"]
        .as_str()
        .map(str::to_string)
        .or_else(|| Some(preview.meta.kind.to_string()));
    let Ok(loaded) = crate::ops::preview::LoadedPreview::load(repo, preview) else {
        return;
    };
    row.changes = loaded.shown_files();
    if patch {
        let (text, _) = crate::diff::render_diffs_counted(&loaded.files(), false, MAX_DIFF_LINES);
        row.diff = Some(text);
    }
}
