/*!
Transactions kept in git: previews under `refs/astedit/<id>`, the journal, apply/undo
with stale checks, the repository lock and crash recovery (DESIGN §2–3).

Why it is built this way:

* A preview is two commits (P with the after-blobs, its parent B with the before-blobs)
  so that plain git can show, push and diff it, and so that apply never recomputes
  anything: what was stored is what gets written ([`store`]).
* The journal is a chain of commits on `refs/astedit-journal` (each with the
  transaction's P as second parent) rather than a reflog, because deleting a ref
  deletes its reflog and because a chain keeps everything reachable through
  `git gc --prune=now` ([`journal`]).
* Apply and undo are one machine ([`apply`]): lock, containment, stale check, a durable
  record under the git dir, temp files, renames. A crash leaves the record behind and
  [`recover`] (run before every command) finishes or rolls back from it. Both drive the
  files from the record with the same code ([`record`]), which re-checks every target
  before it writes: neither imports the other.
*/

mod apply;
mod commit;
mod discard;
mod external;
mod fsutil;
#[doc(hidden)]
pub mod fuzzing;
mod gc;
mod index;
mod journal;
mod lock;
mod notes;
mod objects;
mod os;
mod record;
mod recover;
mod reflocks;
pub mod refresh;
mod refs;
pub mod resolve;
pub mod review;
pub mod sign;
mod store;
pub mod trusted;

use crate::change::FileMode;
use crate::change::PreviewMeta;
use crate::error::Classify;
use crate::error::Exit;

pub use apply::apply;
pub use apply::apply_cut;
pub use apply::apply_selected;
pub use apply::split_cut;
pub use apply::undo;
pub use apply::UndoOptions;
pub use discard::discard;
pub use discard::discard_as;
pub use external::record_applied;
pub use external::HookLock;
pub use external::TreeLock;
pub use fsutil::FAULT_ENV;
pub use gc::gc;
pub use gc::parse_age;
pub use gc::Pruned;
pub use journal::lineage;
pub use journal::log;
pub use journal::newest;
pub use journal::newest_where;
pub use journal::Event;
pub use journal::EventKind;
pub use journal::RecoveryAction;
pub use journal::TxnOp;
pub use journal::JOURNAL_REF;
pub use lock::set_wait as set_lock_wait;
pub use lock::LOCK_FILE;
pub use lock::WAIT_ENV as LOCK_WAIT_ENV;
pub use record::Phase;
pub use record::RECORD_FILE;
pub use recover::abandon;
pub use recover::finish;
pub use recover::recover;
pub use recover::status;
pub use recover::FileState;
pub use recover::PathState;
pub use recover::RecordStatus;
/// A pending preview by unique id prefix, or the newest never-applied one when `id`
/// is `None` (the rules are [`resolve`]'s).
pub use resolve::pending as find;
pub use store::blob;
pub use store::has_blob;
pub use store::keep_blob;
pub use store::list;
pub use store::list_checked;
pub use store::mark_selected;
pub use store::read_preview;
pub use store::sites_record;
pub use store::stage;
pub use store::BadRef;
pub use store::Part;
pub use store::Split;
pub use store::Stager;
pub use store::REF_PREFIX;

pub use commit::changed_tree;
pub use commit::write_commit;
pub use commit::write_state_commit;
pub use index::agent_trailer;

/// Journals a `pr` event: transaction `preview` was pushed as a branch and its pull
/// request opened or found (`note` says which, and where). Names the agent that did it.
pub fn record_pr(
    repo: &crate::repo::Repo,
    preview: &Preview,
    agent: Option<&str>,
    note: String,
) -> Result<(), Error> {
    let mut event = Event::new(repo, EventKind::Pr, &preview.id, preview.commit);
    event.agent = agent.map(str::to_string);
    event.kind = Some(preview.meta.kind);
    event.files = preview.entries.iter().map(|e| e.path.clone()).collect();
    event.notes = vec![note];
    journal::append(repo, &event, preview.commit, Vec::new())?;
    Ok(())
}

/// What a ref must hold before [`set_ref`] moves it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RefWas {
    /// Anything, or nothing.
    Any,
    /// Nothing: the ref is created.
    Absent,
    /// This commit.
    At(gix::ObjectId),
}

/// Points `name` (a ref outside `refs/astedit`: a branch `pr` pushes, a campaign's
/// state) at `new` as one ref transaction of ours: the reflog names the user, else the
/// fallback identity (a CI runner has none), and a killed run's locks are cleared by
/// the next one ([`reflocks`]). `op` names it in the intent and the fault point
/// `refs-locked:<op>`. A ref that does not hold what `was` says is
/// [`Error::Concurrent`]; nothing moved then.
pub fn set_ref(
    repo: &crate::repo::Repo,
    name: &str,
    new: gix::ObjectId,
    was: RefWas,
    message: &str,
    op: &str,
) -> Result<(), Error> {
    use gix::refs::transaction::PreviousValue;
    let expected = match was {
        RefWas::Any => PreviousValue::Any,
        RefWas::Absent => PreviousValue::MustNotExist,
        RefWas::At(c) => PreviousValue::MustExistAndMatch(gix::refs::Target::Object(c)),
    };
    let edit = refs::update_edit(name, expected, new, message)?;
    match reflocks::transact(repo, vec![edit], op) {
        Err(Error::Git { source, .. }) if source.is_conflict() => {
            Err(Error::Concurrent(name.to_string()))
        }
        other => other,
    }
}

/// Apply's containment check for `path` under `root`, another checkout of the
/// repository (`verify`'s worktree): bad syntax, or a folder on the way that is a
/// symlink or not a folder, is refused (exit 4) before anything is written there.
/// `known_dirs` holds the folders already found plain.
pub fn check_contained_in(
    root: &std::path::Path,
    path: &str,
    known_dirs: &mut std::collections::HashSet<std::path::PathBuf>,
) -> Result<(), Error> {
    fsutil::check_contained_in(root, path, known_dirs)
}

/// [`check_contained_in`] for a folder a command is started in: each folder on the
/// way, itself included, must be a plain folder (or not exist yet).
pub fn check_folder_contained_in(
    root: &std::path::Path,
    folder: &str,
    known_dirs: &mut std::collections::HashSet<std::path::PathBuf>,
) -> Result<(), Error> {
    fsutil::check_folder_contained_in(root, folder, known_dirs)
}

/// Why `path` under `root` lies beyond a symlink (or a file) on its way, if it does:
/// git sees no file there, and a read or write would reach elsewhere (`run` copying
/// files in and out of its worktree).
pub fn beyond_link(
    root: &std::path::Path,
    path: &str,
    known_dirs: &mut std::collections::HashSet<std::path::PathBuf>,
) -> Result<Option<String>, Error> {
    fsutil::beyond_link(root, path, known_dirs)
}

/// Journals a `verified` event for `preview`: a command ran in a worktree of it, and
/// `notes` say how it ended (not decisive: the preview's state is unchanged).
pub fn record_verify(
    repo: &crate::repo::Repo,
    preview: &Preview,
    agent: Option<&str>,
    notes: Vec<String>,
) -> Result<(), Error> {
    let mut event = Event::new(repo, EventKind::Verified, &preview.id, preview.commit);
    event.agent = agent.map(str::to_string);
    event.kind = Some(preview.meta.kind);
    event.files = preview.entries.iter().map(|e| e.path.clone()).collect();
    event.notes = notes;
    journal::append(repo, &event, preview.commit, Vec::new())?;
    Ok(())
}

/// Clears what killed runs of ours left behind, before any command: the locks of a ref
/// transaction (completing it when its journal event had landed, see
/// [`reflocks`]) and an `index.lock` of ours when no run is left to recover (with a
/// run, [`recover`] clears it). Returns one note per thing cleared, for the user; the
/// journal gets them with its next event.
pub fn clear_stale(repo: &crate::repo::Repo) -> Result<Vec<String>, Error> {
    let mut notes = reflocks::clear_stale(repo)?;
    if index::stale_lock_of_ours(repo).is_some() && record::read_record(repo)?.is_none() {
        // Every holder of our index.lock holds the repository lock too: with it taken,
        // that holder is gone. A live holder makes this a no-op.
        if let Ok(_lock) = lock::Lock::acquire(repo, "recover") {
            if record::read_record(repo)?.is_none() {
                if let Some(pid) = index::stale_lock_of_ours(repo) {
                    if index::clear_stale_lock(repo)? {
                        let note = format!(
                            "index-lock-removed: the index.lock of git astedit pid {pid}, which is \
                             no longer running, was removed"
                        );
                        let _ = journal::add_pending_note(repo, &note);
                        notes.push(note);
                        // Killed after its `applied` event: an `apply --commit` also
                        // owes HEAD and the index.
                        if let Some(e) = killed_commit(repo, pid)? {
                            let made = e.made_commit.clone().unwrap_or_default();
                            let note = index::complete_commit(repo, &made, &e.files)
                                .unwrap_or_else(|e| {
                                    format!(
                                        "made-commit-not-published: {made} was not put on HEAD: {e}"
                                    )
                                });
                            let _ = journal::add_pending_note(repo, &note);
                            notes.push(note);
                        }
                    }
                }
            }
        }
    }
    Ok(notes)
}

/// The `applied` event of an `apply --commit` by `pid` among the newest events, if that
/// is the newest `applied` one (the run that died holding the index lock).
fn killed_commit(repo: &crate::repo::Repo, pid: u32) -> Result<Option<Event>, Error> {
    if pid == 0 {
        return Ok(None);
    }
    let (events, _) = journal::newest(repo, 64)?;
    let prefix = format!("{pid}-");
    Ok(events
        .into_iter()
        .find(|e| e.event == EventKind::Applied)
        .filter(|e| e.made_commit.is_some())
        .filter(|e| e.run.as_deref().is_some_and(|r| r.starts_with(&prefix))))
}

/// Locks that block writers and that nothing of ours can clear, for `recover --status`:
/// `(path, what)`.
pub fn blocking_locks(repo: &crate::repo::Repo) -> Vec<(String, String)> {
    let mut out = Vec::new();
    if let Some(lock) = index::lock_present(repo) {
        let what = match index::stale_lock_of_ours(repo) {
            Some(pid) => {
                format!("left by git astedit pid {pid}; the next git astedit command removes it")
            }
            None => format!(
                "not ours (another git process holds it, or a crashed one left it): if no git \
                 process is running, remove it: rm '{lock}'"
            ),
        };
        out.push((lock, what));
    }
    for (l, pid) in reflocks::dead_locks(repo) {
        out.push((
            l.display().to_string(),
            format!(
                "left by the ref update of git astedit pid {pid}, which is no longer running; \
                 the next git astedit command removes it (and completes that update if its \
                 journal event landed)"
            ),
        ));
    }
    for l in reflocks::unexplained_locks(repo) {
        out.push((
            l.display().to_string(),
            format!(
                "no git astedit run explains it: if no git process is running, remove it: rm '{}'",
                l.display()
            ),
        ));
    }
    out
}

/// Everything that can go wrong in a transaction, classified for the exit code.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("cannot {action}")]
    Git {
        action: String,
        #[source]
        source: Box<gix::Error>,
    },
    #[error("cannot {action} {path}")]
    Io {
        action: &'static str,
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("stored astedit data is damaged: {0}")]
    Corrupt(String),
    #[error("no pending preview")]
    NoPending,
    #[error("the only pending previews were applied and undone: {}", .0.join(", "))]
    OnlyUndone(Vec<String>),
    #[error("nothing to undo: no transaction applied in this work tree is in the journal")]
    NothingToUndo,
    #[error("'{0}' is not a preview id (expected hex digits)")]
    BadId(String),
    #[error("no pending preview matches '{0}'")]
    UnknownId(String),
    #[error("preview id '{prefix}' is ambiguous: {}", .candidates.join(", "))]
    AmbiguousId {
        prefix: String,
        candidates: Vec<String>,
    },
    #[error("preview {0} is already applied")]
    AlreadyApplied(String),
    #[error("preview {id} was {how}")]
    Gone { id: String, how: String },
    #[error("transaction {0} is not applied, so it cannot be undone")]
    NotApplied(String),
    #[error("invalid change set: {0}")]
    InvalidChange(String),
    #[error("{}", stale_message(.op, .id, .paths))]
    Stale {
        op: &'static str,
        id: String,
        paths: Vec<StalePath>,
    },
    #[error("refused to write '{path}': {why}")]
    Refused { path: String, why: String },
    #[error("the repository is locked by another git astedit ({holder}){}",
        if *.waited_ms > 0 { format!("; waited {:.1} s for it", *.waited_ms as f64 / 1000.0) } else { String::new() })]
    Locked {
        lock: String,
        holder: String,
        dead: bool,
        /// How long this run waited for the lock before giving up (0: it did not wait).
        waited_ms: u64,
        /// Whose it is cannot be judged from here (another host, an empty or unreadable
        /// lock file, no `/proc`): the user must look, and the hint says what to run.
        unjudged: Option<String>,
    },
    #[error("a ref is locked ({lock} exists){}", .holder.as_ref().map(|h| format!(": {h}")).unwrap_or_default())]
    RefLocked {
        lock: String,
        /// Who holds it, when an intent of ours names it.
        holder: Option<String>,
    },
    #[error("the git index is locked ({lock} exists); nothing was written")]
    IndexLocked { lock: String },
    #[error("refused to write '{path}': {why}")]
    Protected { path: String, why: String },
    #[error("{0} changed concurrently; nothing was written")]
    Concurrent(String),
    #[error("--commit would sweep in other changes of {}: {}", .paths.join(", "), .why)]
    OtherChanges { paths: Vec<String>, why: String },
    /// A preview of the staged content (`--cached`) would change files whose work-tree
    /// file holds other bytes than the index (an unstaged edit), where it could not
    /// apply: nothing is staged.
    #[error(
        "--cached: the work tree differs from the index in {} the preview would change: {}",
        crate::text::plural(.paths.len(), "file"),
        .paths.join(", ")
    )]
    Unstaged { paths: Vec<String> },
    #[error("invalid age '{0}' (use e.g. 30d, 12h, 45m, 10s, 2w or now)")]
    BadAge(String),
    #[error("{}", unfinished_message(.op, .id, .paths))]
    Unfinished {
        op: &'static str,
        id: String,
        paths: Vec<StalePath>,
    },
    #[error("an interrupted {op} of {id} is unfinished; this command waits until it is resolved")]
    RecoveryPending { op: &'static str, id: String },
    #[error("nothing to recover: no interrupted apply or undo")]
    NothingToRecover,
    /// Another work tree (the main one, or a lane) holds an interrupted run of the same
    /// preview: running it here too would apply (or undo) it twice.
    #[error("an interrupted {op} of {id} in another work tree ({worktree}) is unfinished; it is not run here too")]
    UnfinishedElsewhere {
        op: &'static str,
        id: String,
        /// That work tree's folder.
        worktree: String,
    },
    /// A partial apply split its preview, then the apply of the selected part failed:
    /// both parts are pending under their new ids. The message begins with the inner
    /// error's, so the error renderer does not repeat it as a cause
    /// ([`crate::error::Error::causes`]).
    #[error("{inner}\n(preview {parent} was split: the selected part is pending as {selected}, the remainder as {remainder})")]
    AfterSplit {
        parent: String,
        selected: String,
        remainder: String,
        #[source]
        inner: Box<Error>,
    },
    /// Signing was asked for (`astedit.signPreviews`, `--sign`) and git could not sign:
    /// nothing was staged, never an unsigned commit in its place.
    #[error("cannot sign {what}: {detail}; nothing was staged")]
    SigningFailed { what: String, detail: String },
}

/// How to get out of an unfinished run, for hints and messages.
pub const RESOLVE_HINT: &str = "`git astedit recover --status` shows each path; make a path \
     left alone hold the preview's before or after content and run `git astedit recover \
     --finish`, or run `git astedit recover --abandon` to put back what can be put back \
     and keep your edits";

/// One path that changed since a preview was staged (or since it was applied, for undo).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct StalePath {
    pub path: String,
    /// What is different, e.g. `modified`, `deleted`, `exists`, `mode changed`.
    pub what: String,
}

fn stale_message(op: &str, id: &str, paths: &[StalePath]) -> String {
    let mut s = format!(
        "cannot {op} {id}: {} path{} changed since the preview was {}; nothing was written",
        paths.len(),
        if paths.len() == 1 { "" } else { "s" },
        if op == "undo" { "applied" } else { "staged" },
    );
    for p in paths {
        s.push_str(&format!("\n  {}: {}", p.path, p.what));
    }
    s
}

fn unfinished_message(op: &str, id: &str, paths: &[StalePath]) -> String {
    let mut s = format!(
        "the {op} of {id} is unfinished: {} path{} left alone, the rest done",
        paths.len(),
        if paths.len() == 1 { " was" } else { "s were" },
    );
    for p in paths {
        s.push_str(&format!("\n  {}: {}", p.path, p.what));
    }
    s
}

impl Classify for Error {
    fn code(&self) -> &'static str {
        match self {
            Error::Git { .. } => "git",
            Error::Io { .. } => "io",
            Error::Corrupt(_) => "corrupt",
            Error::NoPending => "no-pending-preview",
            Error::OnlyUndone(_) => "only-undone-pending",
            Error::NothingToUndo => "nothing-to-undo",
            Error::BadId(_) => "bad-id",
            Error::UnknownId(_) => "unknown-id",
            Error::AmbiguousId { .. } => "ambiguous-id",
            Error::AlreadyApplied(_) => "already-applied",
            Error::Gone { .. } => "preview-gone",
            Error::NotApplied(_) => "not-applied",
            Error::InvalidChange(_) => "invalid-change",
            Error::Stale { .. } => "stale",
            Error::Refused { .. } => "refused",
            Error::Locked { dead: true, .. } => "stale-lock",
            Error::Locked { .. } => "locked",
            Error::IndexLocked { .. } => "locked",
            Error::RefLocked { .. } => "ref-locked",
            Error::Protected { .. } => "protected-path",
            Error::Concurrent(_) => "concurrent-update",
            Error::OtherChanges { .. } => "other-staged-changes",
            Error::Unstaged { .. } => "unstaged-changes",
            Error::BadAge(_) => "bad-age",
            Error::Unfinished { .. } => "unfinished",
            Error::RecoveryPending { .. } => "recovery-pending",
            Error::NothingToRecover => "nothing-to-recover",
            Error::UnfinishedElsewhere { .. } => "unfinished-elsewhere",
            Error::AfterSplit { inner, .. } => inner.code(),
            Error::SigningFailed { .. } => "signing-failed",
        }
    }
    fn exit(&self) -> Exit {
        match self {
            Error::AfterSplit { inner, .. } => inner.exit(),
            Error::Git { .. } | Error::Io { .. } | Error::Corrupt(_) => Exit::Internal,
            Error::NoPending | Error::NothingToUndo | Error::NothingToRecover => Exit::NothingFound,
            Error::BadId(_)
            | Error::OnlyUndone(_)
            | Error::UnknownId(_)
            | Error::AmbiguousId { .. }
            | Error::NotApplied(_)
            | Error::Gone { .. }
            | Error::InvalidChange(_)
            | Error::BadAge(_)
            | Error::SigningFailed { .. } => Exit::BadInput,
            // The work tree has moved on from the preview's before side: stale.
            Error::Stale { .. } | Error::AlreadyApplied(_) | Error::Unfinished { .. } => {
                Exit::Stale
            }
            Error::Refused { .. }
            | Error::Protected { .. }
            | Error::OtherChanges { .. }
            | Error::Unstaged { .. } => Exit::Refused,
            Error::Locked { .. }
            | Error::IndexLocked { .. }
            | Error::RefLocked { .. }
            | Error::Concurrent(_)
            | Error::RecoveryPending { .. }
            | Error::UnfinishedElsewhere { .. } => Exit::Locked,
        }
    }
    fn hint(&self) -> Option<String> {
        match self {
            Error::AfterSplit {
                inner, selected, ..
            } => Some(match inner.hint() {
                Some(h) => format!("{h}; then `git astedit apply {selected}`"),
                None => format!("`git astedit apply {selected}` applies the selected part"),
            }),
            Error::Locked {
                lock, dead: true, ..
            } => Some(format!(
                "that process is gone; if no git astedit is running, remove the lock: rm '{lock}'"
            )),
            Error::Locked {
                lock,
                unjudged: Some(why),
                ..
            } => Some(format!(
                "git astedit cannot tell whether its holder is still running ({why}); if no git \
                 astedit is running there, remove the lock: rm '{lock}'"
            )),
            Error::Locked { .. } => Some("wait for it to finish, then retry".into()),
            Error::RefLocked {
                holder: Some(h), ..
            } if h.contains("is updating it") => Some("wait for it to finish, then retry".into()),
            Error::RefLocked { lock, .. } => Some(format!(
                "no running git astedit holds it; if no git process (fetch, push, gc, \
                 update-ref) is running either, a crashed one left it behind: remove it with \
                 rm '{lock}' and retry"
            )),
            Error::IndexLocked { lock } => Some(format!(
                "another git process (a commit, an editor, an IDE) is using the index: wait for \
                 it to finish and retry; if no git process is running, a crashed one left \
                 the lock behind: remove it with rm '{lock}'"
            )),
            Error::Stale { op: "undo", .. } => Some(
                "the work tree no longer holds what was applied; undo refuses to overwrite it"
                    .into(),
            ),
            Error::Stale { id, .. } => Some(format!(
                "`git astedit refresh {id}` re-derives it on the current files (`apply \
                 --refresh` applies it too when the counts still agree), or discard it"
            )),
            Error::AmbiguousId { .. } => Some("type more hex digits of the id".into()),
            Error::BadId(_) => Some(
                "paths go after `--`, as in git: `git astedit show ID -- PATH` (or \
                 `apply ID -- PATH`)"
                    .into(),
            ),
            Error::NothingToUndo => Some(
                "another work tree's (a lane's) transactions are undone there, or here by id: \
                 `git astedit log --all-worktrees` lists them"
                    .into(),
            ),
            Error::OnlyUndone(ids) => Some(format!(
                "an undone preview is applied again only by name: `git astedit apply {}`",
                ids.first().map(String::as_str).unwrap_or("ID")
            )),
            Error::UnknownId(_) | Error::Gone { .. } => {
                Some("`git astedit list` shows pending previews, `git astedit log` the rest".into())
            }
            Error::Corrupt(what) if what.contains(RECORD_FILE) => Some(format!(
                "an interrupted apply left a record that cannot be read; inspect it, restore \
                 the files it names with `git astedit log`, then remove it ({what})"
            )),
            Error::AlreadyApplied(_) => {
                Some("`git astedit log` shows it; `git astedit undo` takes it back".into())
            }
            Error::OtherChanges { .. } => {
                Some("commit or unstage those changes first, or apply without --commit".into())
            }
            Error::Unstaged { .. } => Some(
                "stage those files as they are in the work tree (`git add`) or set their \
                 unstaged edits aside, then run it again; a file outside the sparse checkout, \
                 or one whose checkout differs from its blob by line-ending conversion only, \
                 cannot be rewritten this way: leave it out with a pathspec (`:!PATH`); or \
                 leave out --cached to work on the work tree"
                    .into(),
            ),
            Error::Unfinished { .. } | Error::RecoveryPending { .. } => Some(RESOLVE_HINT.into()),
            Error::UnfinishedElsewhere { worktree, .. } => Some(format!(
                "recover it there first: `git -C {} astedit recover --finish` (`--status` shows it)",
                crate::text::shell_word(worktree)
            )),
            Error::SigningFailed { .. } => Some(
                "check the key git signs with (`user.signingKey`, `gpg.format`, \
                 `gpg.program`; `git commit-tree -S` shows the same failure), or stage \
                 without signing: leave out --sign and set `astedit.signPreviews` false"
                    .into(),
            ),
            _ => None,
        }
    }
    fn details(&self) -> Option<serde_json::Value> {
        match self {
            Error::AfterSplit {
                parent,
                selected,
                remainder,
                inner,
            } => {
                let mut d = match inner.details() {
                    Some(serde_json::Value::Object(m)) => m,
                    _ => serde_json::Map::new(),
                };
                d.insert(
                    "split".into(),
                    serde_json::json!({"parent": parent, "selected": selected, "remainder": remainder}),
                );
                Some(serde_json::Value::Object(d))
            }
            Error::Stale { id, paths, .. } => Some(serde_json::json!({
                "id": id,
                "paths": paths
                    .iter()
                    .map(|p| serde_json::json!({"path": p.path, "what": p.what}))
                    .collect::<Vec<_>>(),
            })),
            Error::OnlyUndone(ids) => Some(serde_json::json!({"undone": ids})),
            Error::Unstaged { paths } => Some(serde_json::json!({ "paths": paths })),
            Error::AmbiguousId { candidates, .. } => {
                Some(serde_json::json!({"candidates": candidates}))
            }
            Error::Refused { path, why } | Error::Protected { path, why } => {
                Some(serde_json::json!({"path": path, "why": why}))
            }
            Error::IndexLocked { lock } => Some(serde_json::json!({"lock": lock})),
            Error::Locked {
                lock,
                holder,
                unjudged,
                dead,
                waited_ms,
            } => {
                let mut d =
                    serde_json::json!({"lock": lock, "holder": holder, "unjudged": unjudged});
                if !dead && unjudged.is_none() {
                    // A live holder lets go soon: when to try again, in seconds.
                    d["retry_after"] = serde_json::json!(lock::RETRY_AFTER_SECS);
                    d["waited_ms"] = serde_json::json!(waited_ms);
                }
                Some(d)
            }
            Error::RefLocked { lock, holder } => {
                Some(serde_json::json!({"lock": lock, "holder": holder}))
            }
            Error::Unfinished { op, id, paths } => Some(serde_json::json!({
                "op": op,
                "id": id,
                "paths": paths,
            })),
            Error::RecoveryPending { op, id } => Some(serde_json::json!({"op": op, "id": id})),
            Error::UnfinishedElsewhere { op, id, worktree } => {
                Some(serde_json::json!({"op": op, "id": id, "worktree": worktree}))
            }
            _ => None,
        }
    }
}

impl Error {
    pub fn git(action: impl Into<String>) -> impl FnOnce(gix::Error) -> Error {
        let action = action.into();
        move |source| Error::Git {
            action,
            source: Box::new(source),
        }
    }
    pub fn io(
        action: &'static str,
        path: impl AsRef<std::path::Path>,
    ) -> impl FnOnce(std::io::Error) -> Error {
        let path = path.as_ref().display().to_string();
        move |source| Error::Io {
            action,
            path,
            source,
        }
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
    /// The check the preview passed before this apply (`apply --verify`), for the
    /// `--commit` message's `Astedit-Verified` trailer.
    pub verified: Option<String>,
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
    /// Undo: the index entries of the touched paths were restored too (`undo --index`).
    pub index_restored: bool,
    /// Undo without `--index`: paths whose index entry still holds the applied content
    /// (staged by `apply --index`/`--commit`).
    pub index_left: Vec<String>,
    /// Undo of an `apply --commit`: the commit it made, which stays in history.
    pub commit_kept: Option<String>,
    /// A partial apply (`apply ID -- PATHSPEC`): how the preview was split.
    pub split: Option<SplitInfo>,
    /// Undo: the preview is pending again (not after an agent's own edit, which
    /// nobody staged).
    pub pending_again: bool,
}

/// How a partial apply split its preview: `selected` was applied (it is the id the
/// report names), `remainder` is pending.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SplitInfo {
    /// The preview that was split (no longer pending).
    pub parent: String,
    pub selected: String,
    pub remainder: String,
    /// The remainder's paths.
    pub remainder_files: Vec<String>,
}

/// What recovery did with an apply or undo interrupted by a crash.
#[derive(Debug, Clone)]
pub struct Recovery {
    pub id: String,
    pub op: TxnOp,
    pub action: RecoveryAction,
    pub message: String,
    /// Paths left alone (they hold neither side, or their folder is a symlink). When
    /// not empty, the record is still there and the run unfinished.
    pub unresolved: Vec<StalePath>,
    /// Temp files it could not reach, and the like.
    pub notes: Vec<String>,
}

impl Recovery {
    /// Whether the run is still unfinished (commands that write must wait).
    pub fn pending(&self) -> bool {
        !self.unresolved.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::Error;

    /// `AfterSplit` keeps its inner error as the source, and its message, which
    /// begins with the inner one's, is not followed by that message again as a cause.
    #[test]
    fn after_split_holds_its_inner_error_as_source_and_prints_it_once() {
        let err = crate::Error::from(Error::AfterSplit {
            parent: "p".into(),
            selected: "s".into(),
            remainder: "r".into(),
            inner: Box::new(Error::UnknownId("abc".into())),
        });
        let inner = Error::UnknownId("abc".into()).to_string();
        assert_eq!(
            err.to_string(),
            format!(
                "{inner}\n(preview p was split: the selected part is pending as s, the remainder as r)"
            )
        );
        assert!(err.causes().is_empty());
        assert_eq!(err.code(), "unknown-id");
        let direct = match err.downcast_ref::<Error>() {
            Some(e) => std::error::Error::source(e).map(|s| s.to_string()),
            None => None,
        };
        assert_eq!(direct, Some(inner));
    }
}
