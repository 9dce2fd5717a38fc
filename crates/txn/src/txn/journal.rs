/*!
The journal: one ref, `refs/astedit-journal`, whose commits chain.

Each journal commit has the previous journal commit as first parent and the
transaction's preview commit P as last parent, so every preview the journal names
stays reachable through `git gc --prune=now` (a reflog could not do this: deleting a
ref deletes its reflog). The commit message is the event as JSON; the tree is empty.
The very first journal commit has only P as parent, which is how a walk knows it has
reached the start.

Appending is a compare-and-swap on the journal ref, retried when another process
appended first, and may carry other ref edits (e.g. deleting the pending ref) in the
same transaction so that "applied" and "no longer pending" land together.
*/

use gix::bstr::ByteSlice;
use gix::refs::transaction::PreviousValue;
use gix::refs::transaction::RefEdit;
use gix::refs::Target;
use gix::ObjectId;
use serde::Deserialize;
use serde::Serialize;

pub use super::notes::add_pending_note;
pub use super::notes::now_secs;
use super::notes::pending_notes;
use super::notes::pending_notes_path;
pub use super::refs::delete_edit;
pub use super::refs::tip;
pub use super::refs::update_edit;
pub use super::refs::JOURNAL_REF;
use super::Error;
use crate::repo::Repo;

/// What a journal event records. Stored as its kebab-case name, the same strings
/// older versions wrote, so old journals read unchanged.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum EventKind {
    #[default]
    Staged,
    Applied,
    Discarded,
    Undone,
    Recovered,
    Expired,
    /// A pending preview was cut in two by `apply ID -- PATHSPEC`: `children` names
    /// the part selected (then applied) and the remainder (pending).
    Split,
    /// A pending preview was re-derived on the current tree by `refresh`: `successor`
    /// names the new preview that replaces it.
    Refreshed,
    /// `pr` pushed a branch for a transaction and opened (or found) its pull request.
    /// Not decisive: the transaction's state is unchanged.
    Pr,
    /// `verify` (or `apply --verify`) ran a command in a worktree of the preview; the
    /// notes say how it ended. Not decisive.
    Verified,
    /// An agent's shell command moved HEAD (a commit, checkout, reset, pull): the
    /// commit is the new HEAD, `files` what changed in the work tree, the notes the
    /// move. Not an edit: nothing to undo.
    HeadMoved,
}

impl EventKind {
    pub fn as_str(self) -> &'static str {
        match self {
            EventKind::Staged => "staged",
            EventKind::Applied => "applied",
            EventKind::Discarded => "discarded",
            EventKind::Undone => "undone",
            EventKind::Recovered => "recovered",
            EventKind::Expired => "expired",
            EventKind::Split => "split",
            EventKind::Refreshed => "refreshed",
            EventKind::Pr => "pr",
            EventKind::Verified => "verified",
            EventKind::HeadMoved => "head-moved",
        }
    }
}

/// Which run an apply/undo record (and a `recovered` event) is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TxnOp {
    Apply,
    Undo,
}

impl TxnOp {
    pub fn as_str(self) -> &'static str {
        match self {
            TxnOp::Apply => "apply",
            TxnOp::Undo => "undo",
        }
    }
}

/// What recovery did with an interrupted run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RecoveryAction {
    /// Rolled forward to the end (the run had passed its point of no return).
    Completed,
    /// Rolled back (it had not): nothing of it is left in the work tree.
    RolledBack,
    /// Rolled forward as far as it safely could; some paths wait for the user.
    Partial,
    /// `recover --abandon`: what could be safely restored was, the record dropped.
    Abandoned,
}

impl RecoveryAction {
    pub fn as_str(self) -> &'static str {
        match self {
            RecoveryAction::Completed => "completed",
            RecoveryAction::RolledBack => "rolled-back",
            RecoveryAction::Partial => "partial",
            RecoveryAction::Abandoned => "abandoned",
        }
    }
}

macro_rules! str_enum_impls {
    ($($t:ty),*) => {$(
        impl std::fmt::Display for $t {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                // `pad`, so that `{:<10}` lines up like a string would.
                f.pad(self.as_str())
            }
        }
        impl PartialEq<str> for $t {
            fn eq(&self, other: &str) -> bool {
                self.as_str() == other
            }
        }
        impl PartialEq<&str> for $t {
            fn eq(&self, other: &&str) -> bool {
                self.as_str() == *other
            }
        }
    )*};
}
str_enum_impls!(EventKind, TxnOp, RecoveryAction);

/// One journal event, stored as the JSON message of a journal commit.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Event {
    pub event: EventKind,
    /// The preview id (short hex).
    pub id: String,
    /// The preview commit P (full hex).
    pub commit: String,
    /// Seconds since the epoch.
    pub time: i64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Repository paths touched.
    #[serde(default)]
    pub files: Vec<String>,
    /// The git identity, `Name <email>`.
    #[serde(default)]
    pub who: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    /// The preview's kind (`edit`, `patch`, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<crate::change::PreviewKind>,
    /// For `recovered`: the interrupted operation, `apply` or `undo`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub op: Option<TxnOp>,
    /// For `recovered`: `completed`, `rolled-back`, `partial` or `abandoned`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub action: Option<RecoveryAction>,
    /// The commit `apply --commit` made (on `applied` events).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub made_commit: Option<String>,
    /// A nonce naming one apply/undo run, so recovery can tell whether its event landed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run: Option<String>,
    /// Things the user should know that happened around this event: paths recovery
    /// left alone, temp files it could not reach, a stale lock that was broken.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// On `applied`/`undone`: the permission bits (octal) of the files the run removed,
    /// so that undoing it gives them back exactly.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub removed_modes: std::collections::BTreeMap<String, String>,
    /// On `split`: the previews that replaced this one, the selected part first, then
    /// the remainder (short ids).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub children: Vec<String>,
    /// On `split`: the pathspecs as typed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pathspecs: Vec<String>,
    /// On `refreshed`: the preview (short id) that replaced this one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub successor: Option<String>,
    /// The work tree the event was made in: absent for the main one, else the linked
    /// worktree's name ([`Repo::worktree_name`]; a lane's is the lane's name). What
    /// older versions wrote has none: the main tree's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worktree: Option<String>,
}

impl Event {
    /// The previews that replaced this one: a split's parts, or a refresh's successor.
    pub fn successors(&self) -> Vec<String> {
        self.children
            .iter()
            .cloned()
            .chain(self.successor.clone())
            .collect()
    }

    /// A new event of `kind` for preview `id` (commit `commit`), stamped now by `repo`'s
    /// identity, in `repo`'s work tree.
    pub fn new(repo: &Repo, event: EventKind, id: &str, commit: ObjectId) -> Event {
        let sig = repo.signature();
        Event {
            event,
            id: id.to_string(),
            commit: commit.to_string(),
            time: now_secs(),
            who: format!("{} <{}>", sig.name, sig.email),
            worktree: repo.worktree_name(),
            ..Event::default()
        }
    }
}

/// The ids of the line of one change, for `log ID`: the ids starting with `prefix`,
/// the previews they were split or refreshed from (up the chain) and the parts or
/// successors they became (down it). Siblings of a part are not in its line.
pub fn lineage(events: &[Event], prefix: &str) -> std::collections::BTreeSet<String> {
    let mut ids: std::collections::BTreeSet<String> = events
        .iter()
        .flat_map(|e| std::iter::once(e.id.clone()).chain(e.successors()))
        .filter(|id| id.starts_with(prefix))
        .collect();
    // Splits and refreshes: each links a preview to the ones that replaced it.
    let splits: Vec<(&Event, Vec<String>)> = events
        .iter()
        .filter(|e| matches!(e.event, EventKind::Split | EventKind::Refreshed))
        .map(|e| (e, e.successors()))
        .collect();
    // Up: a split whose parts include a known id adds its parent; down: a split of a
    // known id adds its parts. Kept apart so that one part does not pull in the other.
    let mut up = ids.clone();
    let mut down = ids.clone();
    loop {
        let before = (up.len(), down.len());
        for (s, children) in &splits {
            if children.iter().any(|c| up.contains(c)) {
                up.insert(s.id.clone());
            }
            if down.contains(&s.id) {
                down.extend(children.iter().cloned());
            }
        }
        if (up.len(), down.len()) == before {
            break;
        }
    }
    ids.extend(up);
    ids.extend(down);
    ids
}

/// A journal entry as read back: the transaction commit it links, and the event.
#[derive(Debug, Clone)]
pub struct Entry {
    pub txn_commit: ObjectId,
    pub event: Event,
}

/// The journal read from its newest end, one commit at a time: callers that need the
/// newest few events, or the newest event of one kind, stop there and never touch the
/// older ones, so their cost does not grow with the journal's length.
pub struct Walk<'r> {
    repo: &'r Repo,
    next: Option<ObjectId>,
}

impl<'r> Walk<'r> {
    /// From the journal's tip.
    pub fn new(repo: &'r Repo) -> Result<Walk<'r>, Error> {
        Ok(Walk::from(repo, tip(repo)?))
    }

    /// From journal commit `start` (None: an empty walk).
    pub fn from(repo: &'r Repo, start: Option<ObjectId>) -> Walk<'r> {
        Walk { repo, next: start }
    }

    fn entry(&mut self, id: ObjectId) -> Result<Entry, Error> {
        let commit = self
            .repo
            .git
            .find_commit(id)
            .map_err(Error::git(format!("read journal commit {id}")))?;
        let msg = commit
            .message_raw()
            .map_err(Error::git(format!("read journal commit {id}")))?;
        let event = parse_event(id, msg.trim())?;
        let mut parents = commit.parent_ids().map(|p| p.detach());
        // First parent: the previous journal commit; last: the transaction's P. The
        // first journal commit has P alone.
        let first = parents.next();
        let last = parents.last();
        let (previous, txn_commit) = match (first, last) {
            (Some(prev), Some(p)) => (Some(prev), p),
            (Some(p), None) => (None, p),
            (None, _) => return Err(Error::Corrupt(format!("journal commit {id} has no parent"))),
        };
        self.next = previous;
        Ok(Entry { txn_commit, event })
    }
}

impl Iterator for Walk<'_> {
    type Item = Result<Entry, Error>;

    fn next(&mut self) -> Option<Self::Item> {
        let id = self.next.take()?;
        // After an error the walk ends (`next` stays None).
        Some(self.entry(id))
    }
}

/// An event from the message of journal commit `id`.
fn parse_event(id: ObjectId, msg: &[u8]) -> Result<Event, Error> {
    serde_json::from_slice(msg).map_err(|e| Error::Corrupt(format!("journal commit {id}: {e}")))
}

/// Every journal entry, newest first.
pub fn read(repo: &Repo) -> Result<Vec<Entry>, Error> {
    Walk::new(repo)?.collect()
}

/// The newest journal entry for which `pred` holds, reading no further back than it.
pub fn find_newest(
    repo: &Repo,
    mut pred: impl FnMut(&Entry) -> bool,
) -> Result<Option<Entry>, Error> {
    for entry in Walk::new(repo)? {
        let entry = entry?;
        if pred(&entry) {
            return Ok(Some(entry));
        }
    }
    Ok(None)
}

/// The newest `n` events, newest first, and whether older ones exist. Reads `n + 1`
/// journal commits at most, however long the journal is.
pub fn newest(repo: &Repo, n: usize) -> Result<(Vec<Event>, bool), Error> {
    newest_where(repo, n, |_| true)
}

/// The newest `n` events for which `pred` holds, newest first, and whether older ones
/// may exist (an older journal commit, read or not). Reads no further back than the
/// `n`-th.
pub fn newest_where(
    repo: &Repo,
    n: usize,
    mut pred: impl FnMut(&Event) -> bool,
) -> Result<(Vec<Event>, bool), Error> {
    let mut walk = Walk::new(repo)?;
    let mut events = Vec::new();
    while events.len() < n {
        match walk.next() {
            Some(entry) => {
                let event = entry?.event;
                if pred(&event) {
                    events.push(event);
                }
            }
            None => return Ok((events, false)),
        }
    }
    // Whether there is an older commit, without reading it.
    Ok((events, walk.next.is_some()))
}

/// The journal, newest first (the public face of [`read`]).
pub fn log(repo: &Repo) -> Result<Vec<Event>, Error> {
    Ok(read(repo)?.into_iter().map(|e| e.event).collect())
}

/// Writes a journal commit on top of `parent` (not moving any ref).
pub fn write_commit(
    repo: &Repo,
    parent: Option<ObjectId>,
    txn_commit: ObjectId,
    event: &Event,
) -> Result<ObjectId, Error> {
    let empty_tree = super::commit::empty_tree(repo)?;
    let message = serde_json::to_string(event)
        .map_err(|e| Error::Corrupt(format!("cannot encode a journal event: {e}")))?;
    let parents = parent.into_iter().chain([txn_commit]);
    super::commit::write(
        repo,
        empty_tree,
        parents,
        format!("{message}\n"),
        "a journal commit",
    )
}

/// Appends `event` (linking `txn_commit`) and applies `extra` ref edits in the same
/// ref transaction. Retries when only the journal moved underneath; a conflict on an
/// `extra` edit is [`Error::Concurrent`].
pub fn append(
    repo: &Repo,
    event: &Event,
    txn_commit: ObjectId,
    extra: Vec<RefEdit>,
) -> Result<ObjectId, Error> {
    let pending = pending_notes(repo);
    let with_notes;
    let event = if pending.is_empty() {
        event
    } else {
        let mut e = event.clone();
        e.notes.extend(pending.iter().cloned());
        with_notes = e;
        &with_notes
    };
    for _ in 0..64 {
        let parent = tip(repo)?;
        let new = write_commit(repo, parent, txn_commit, event)?;
        let mut edits = vec![update_edit(
            JOURNAL_REF,
            match parent {
                Some(p) => PreviousValue::MustExistAndMatch(Target::Object(p)),
                None => PreviousValue::MustNotExist,
            },
            new,
            &format!("astedit: {} {}", event.event, event.id),
        )?];
        edits.extend(extra.iter().cloned());
        match commit_edits(repo, edits) {
            Ok(()) => {
                if !pending.is_empty() {
                    // Carried by this event now. A concurrent append may carry them too.
                    let _ = std::fs::remove_file(pending_notes_path(repo));
                }
                return Ok(new);
            }
            Err(Error::Git { source, .. }) if source.is_conflict() => {
                if tip(repo)? == parent {
                    // The journal did not move, so one of the other edits failed its check.
                    return Err(Error::Concurrent(
                        extra
                            .iter()
                            .map(|e| e.name.as_bstr().to_string())
                            .collect::<Vec<_>>()
                            .join(", "),
                    ));
                }
            }
            Err(e) => return Err(e),
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    Err(Error::Concurrent(JOURNAL_REF.to_string()))
}

/// Makes a journal append durable: the new commit's loose object file and the loose
/// files (or their removal) of `refs`, each with its folder. Packed objects and refs
/// were fsynced by git when it packed them.
pub fn sync(repo: &Repo, commit: ObjectId, refs: &[&str]) -> Result<(), Error> {
    let hex = commit.to_string();
    let object = repo
        .common_dir
        .join("objects")
        .join(&hex[..2])
        .join(&hex[2..]);
    let mut dirs = std::collections::BTreeSet::new();
    if let Ok(f) = std::fs::File::open(&object) {
        f.sync_all().map_err(Error::io("fsync", &object))?;
    }
    if let Some(d) = object.parent() {
        dirs.insert(d.to_path_buf());
    }
    for r in refs {
        let path = repo.common_dir.join(r);
        if let Ok(f) = std::fs::File::open(&path) {
            f.sync_all().map_err(Error::io("fsync", &path))?;
        }
        if let Some(d) = path.parent() {
            dirs.insert(d.to_path_buf());
        }
    }
    for d in dirs {
        super::fsutil::sync_dir(&d)?;
    }
    Ok(())
}

/// Replaces the journal tip `old` by `new` (gc's rewrite), or deletes it when `new` is None.
pub fn replace(
    repo: &Repo,
    old: ObjectId,
    new: Option<ObjectId>,
    extra: Vec<RefEdit>,
) -> Result<(), Error> {
    let expected = PreviousValue::MustExistAndMatch(Target::Object(old));
    let mut edits = vec![match new {
        Some(n) => update_edit(JOURNAL_REF, expected, n, "astedit: gc")?,
        None => delete_edit(JOURNAL_REF, expected)?,
    }];
    edits.extend(extra);
    match commit_edits(repo, edits) {
        Err(Error::Git { source, .. }) if source.is_conflict() => {
            Err(Error::Concurrent(JOURNAL_REF.to_string()))
        }
        other => other,
    }
}

/// Runs one ref transaction with the repository's identity for any reflog, inside the
/// records that let a killed one be cleared and completed ([`super::reflocks`]).
pub fn commit_edits(repo: &Repo, edits: Vec<RefEdit>) -> Result<(), Error> {
    commit_edits_as(repo, edits, "journal")
}

/// [`commit_edits`] naming what it is for (`op`: in the intent, and the fault point
/// `refs-locked:<op>`).
pub fn commit_edits_as(repo: &Repo, edits: Vec<RefEdit>, op: &str) -> Result<(), Error> {
    super::reflocks::transact(repo, edits, op)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_round_trip_and_old_ones_parse() {
        let e = Event {
            event: EventKind::Applied,
            id: "0123456789ab".into(),
            commit: "0123456789abcdef0123456789abcdef01234567".into(),
            time: 1,
            reason: Some("why".into()),
            files: vec!["a".into()],
            who: "A <a@b>".into(),
            run: Some("1-2".into()),
            ..Event::default()
        };
        let json = serde_json::to_string(&e).expect("encode");
        assert!(
            !json.contains("agent"),
            "absent options are left out: {json}"
        );
        assert_eq!(serde_json::from_str::<Event>(&json).expect("decode"), e);
        let minimal: Event =
            serde_json::from_str(r#"{"event":"staged","id":"ab","commit":"cd","time":5}"#)
                .expect("minimal event");
        assert_eq!(minimal.files, Vec::<String>::new());
        // Every string older versions wrote still reads, as the same string.
        for kind in [
            "staged",
            "applied",
            "discarded",
            "undone",
            "recovered",
            "expired",
        ] {
            let json = format!(r#"{{"event":"{kind}","id":"ab","commit":"cd","time":5}}"#);
            let e: Event = serde_json::from_str(&json).expect("old event");
            assert_eq!(e.event, kind);
            assert_eq!(
                serde_json::to_string(&e).expect("encode"),
                json.replace('}', r#","files":[],"who":""}"#)
            );
        }
        let old: Event = serde_json::from_str(
            r#"{"event":"recovered","id":"ab","commit":"cd","time":5,"op":"undo","action":"rolled-back"}"#,
        )
        .expect("old recovered event");
        assert_eq!(old.op, Some(TxnOp::Undo));
        assert_eq!(old.action, Some(RecoveryAction::RolledBack));
        assert_eq!(format!("{:<8}|", EventKind::Undone), "undone  |");
    }

    /// A repository with a journal of `n` events (`staged` for id `e0`, `e1`, …,
    /// oldest first), each linking its own commit; returns the repo and the journal
    /// commits, oldest first.
    fn journal_of(n: usize) -> (tempfile::TempDir, Repo, Vec<ObjectId>) {
        let dir = tempfile::tempdir().expect("tempdir");
        let status = std::process::Command::new("git")
            .args(["init", "-q"])
            .current_dir(dir.path())
            .status()
            .expect("git init");
        assert!(status.success());
        let repo = Repo::discover_from(dir.path()).expect("open");
        let mut chain = Vec::new();
        for i in 0..n {
            let txn = plain_commit(&repo, &format!("preview {i}"));
            let event = Event {
                id: format!("e{i}"),
                commit: txn.to_string(),
                time: i as i64,
                ..Event::default()
            };
            chain.push(write_commit(&repo, chain.last().copied(), txn, &event).expect("write"));
        }
        if let Some(tip) = chain.last() {
            set_tip(&repo, *tip);
        }
        (dir, repo, chain)
    }

    fn plain_commit(repo: &Repo, message: &str) -> ObjectId {
        commit_with(repo, Vec::new(), message)
    }

    fn commit_with(repo: &Repo, parents: Vec<ObjectId>, message: &str) -> ObjectId {
        let tree = crate::txn::commit::empty_tree(repo).expect("tree");
        crate::txn::commit::write(repo, tree, parents, message.into(), "a commit").expect("commit")
    }

    fn set_tip(repo: &Repo, tip: ObjectId) {
        let edit = update_edit(JOURNAL_REF, PreviousValue::Any, tip, "test").expect("edit");
        commit_edits(repo, vec![edit]).expect("set the journal ref");
    }

    fn ids(events: &[Event]) -> Vec<&str> {
        events.iter().map(|e| e.id.as_str()).collect()
    }

    #[test]
    fn the_walk_reads_newest_first_to_the_first_commit() {
        let (_dir, repo, chain) = journal_of(5);
        let all = read(&repo).expect("read");
        assert_eq!(
            all.iter().map(|e| e.event.id.as_str()).collect::<Vec<_>>(),
            ["e4", "e3", "e2", "e1", "e0"]
        );
        // Each entry links its own transaction commit (the last parent).
        for (entry, journal_commit) in all.iter().zip(chain.iter().rev()) {
            let c = repo.git.find_commit(*journal_commit).expect("commit");
            let last = c.parent_ids().last().expect("parent").detach();
            assert_eq!(entry.txn_commit, last);
            assert_eq!(entry.event.commit, last.to_string());
        }
        let (none, more) = newest(&repo, 10).expect("newest");
        assert_eq!((none.len(), more), (5, false));
        let (_empty_dir, empty, _) = journal_of(0);
        assert!(read(&empty).expect("empty journal").is_empty());
        assert_eq!(newest(&empty, 3).expect("newest").0.len(), 0);
    }

    #[test]
    fn a_page_never_reads_past_itself() {
        let (_dir, repo, chain) = journal_of(6);
        // Event e1 torn: its message is a JSON text cut short, as a half-written line
        // of a text journal would be. Events e2…e5 are rewritten on top of it.
        let txn = plain_commit(&repo, "p");
        let torn = commit_with(
            &repo,
            vec![chain[0], txn],
            r#"{"event":"staged","id":"e1","com"#,
        );
        let mut parent = torn;
        for i in 2..6 {
            let event = Event {
                id: format!("e{i}"),
                time: i,
                ..Event::default()
            };
            parent = write_commit(&repo, Some(parent), txn, &event).expect("write");
        }
        set_tip(&repo, parent);
        let (page, more) = newest(&repo, 4).expect("the newest four stop above the torn one");
        assert_eq!((ids(&page), more), (vec!["e5", "e4", "e3", "e2"], true));
        let found = find_newest(&repo, |e| e.event.id == "e3").expect("found above it");
        assert_eq!(found.map(|e| e.event.id), Some("e3".to_string()));
        // Reading further names the torn commit.
        match newest(&repo, 5) {
            Err(Error::Corrupt(msg)) => assert!(msg.contains(&torn.to_string()), "{msg}"),
            other => panic!("expected a corrupt journal error, got {other:?}"),
        }
        assert!(matches!(read(&repo), Err(Error::Corrupt(_))));
        assert!(matches!(
            find_newest(&repo, |e| e.event.id == "e0"),
            Err(Error::Corrupt(_))
        ));
    }

    #[test]
    fn a_torn_newest_event_is_a_clear_error_and_the_walk_ends() {
        let (_dir, repo, chain) = journal_of(2);
        let txn = plain_commit(&repo, "p");
        let torn = commit_with(&repo, vec![chain[1], txn], "{\"event\":\"appl");
        set_tip(&repo, torn);
        let mut walk = Walk::new(&repo).expect("walk");
        assert!(matches!(walk.next(), Some(Err(Error::Corrupt(_)))));
        assert!(walk.next().is_none(), "no guessing past a broken link");
    }

    #[test]
    fn a_first_commit_with_one_parent_and_merges_with_more_read_as_before() {
        // Older journals: the first commit has P as its only parent; the walk takes the
        // first parent as the previous event and the last as P whatever their count.
        let (_dir, repo, chain) = journal_of(1);
        let (a, b) = (plain_commit(&repo, "a"), plain_commit(&repo, "b"));
        let event = Event {
            id: "three".into(),
            ..Event::default()
        };
        let message = format!("{}\n", serde_json::to_string(&event).expect("encode"));
        let three = commit_with(&repo, vec![chain[0], a, b], &message);
        set_tip(&repo, three);
        let all = read(&repo).expect("read");
        assert_eq!(all.len(), 2);
        assert_eq!(all[0].txn_commit, b);
        assert_eq!(all[1].event.id, "e0");
    }

    #[test]
    fn lineage_follows_splits_up_and_down_but_not_to_siblings() {
        let ev = |kind: EventKind, id: &str, children: &[&str]| Event {
            event: kind,
            id: id.into(),
            children: children.iter().map(|c| c.to_string()).collect(),
            ..Event::default()
        };
        let events = vec![
            ev(EventKind::Applied, "bbb", &[]),
            ev(EventKind::Split, "ccc", &["ddd", "eee"]),
            ev(EventKind::Split, "aaa", &["bbb", "ccc"]),
            ev(EventKind::Staged, "aaa", &[]),
            ev(EventKind::Staged, "fff", &[]),
        ];
        let ids = |p: &str| lineage(&events, p).into_iter().collect::<Vec<_>>();
        assert_eq!(ids("bb"), ["aaa", "bbb"]);
        assert_eq!(ids("ddd"), ["aaa", "ccc", "ddd"]);
        assert_eq!(ids("a"), ["aaa", "bbb", "ccc", "ddd", "eee"]);
        assert_eq!(ids("f"), ["fff"]);
        // A refresh links a preview to its successor, up and down.
        let mut refreshed = ev(EventKind::Refreshed, "999", &[]);
        refreshed.successor = Some("aaa".into());
        let mut with_refresh = events.clone();
        with_refresh.push(refreshed);
        let line = |p: &str| lineage(&with_refresh, p).into_iter().collect::<Vec<_>>();
        assert_eq!(line("999"), ["999", "aaa", "bbb", "ccc", "ddd", "eee"]);
        assert_eq!(line("ddd"), ["999", "aaa", "ccc", "ddd"]);
        let split = ev(EventKind::Split, "aaa", &["bbb", "ccc"]);
        let json = serde_json::to_string(&split).expect("encode");
        assert!(
            json.contains(r#""event":"split""#) && json.contains(r#""children":["bbb","ccc"]"#),
            "{json}"
        );
    }
}
