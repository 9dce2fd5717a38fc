/*!
Shell commands an agent runs (Claude Code's `Bash`, Codex's shell tools and its
`apply_patch`), journalled like its own edits.

A command may run for minutes (a build, a test suite), so no lock is held across it.
Before it runs ([`before`]) the work tree's state is recorded: every file git sees
(tracked, and untracked but not ignored) by its stat data and blob id. Ids come cheap:
a tracked file whose stat data still match the index has the index's id (the blob is
in the object database already), and any other file whose stat data match the last
snapshot has that snapshot's id (its blob was kept then); only the rest is read,
hashed and kept. Where Watchman watches the work tree, a record is the last one with
the paths Watchman saw change since it looked at again, instead ([`watch`]). After it ([`after`]) the tree is recorded again the same way, and
what differs is the command's window: its change. From it are taken out the paths
that transactions journalled in that window touched (another session's edit, an
apply, the agent's own `git astedit` calls): where those transactions explain the
path's whole change (the first started from what the window saw, the last left what
the file holds), the change is theirs and the path is left out silently; otherwise
both wrote it and the path is left out *and reported* — to this
session in the hook's answer, to the other session at its next hook call, and in the
journal's note — never attributed to either. The rest is journalled as one applied
transaction of kind `hook` (tool `Bash` or `apply_patch`), which `undo` takes back.

A command that moved HEAD (a commit, a checkout, a reset, a pull) is journalled as a
`head-moved` event naming the old and new HEAD and the files that changed, which is
not an edit `undo` takes back: git has the history of that.
*/

use std::collections::BTreeMap;
use std::io::Write as _;
use std::path::Path;
use std::path::PathBuf;

use gix::ObjectId;
use rayon::prelude::*;
use serde::Deserialize;
use serde::Serialize;

use super::agent_name;
use super::event_mark;
use super::io;
use super::session_dir;
use super::AgentHookError;
use super::HookEvent;
use super::Outcome;
use crate::change::ChangeSet;
use crate::change::FileChange;
use crate::change::FileContent;
use crate::change::FileMeta;
use crate::change::FileMode;
use crate::change::PreviewKind;
use crate::change::PreviewMeta;
use crate::repo::Repo;
use crate::txn;
use crate::Error;

mod watch;

/// The environment variable the hook gives a session's shell commands (through the
/// harness's `updatedInput`): a `git astedit` command run there journals under it.
pub const SESSION_ENV: &str = "GIT_ASTEDIT_SESSION";

/// Files larger than this are not recorded (nor journalled) by a shell window.
const MAX_FILE: u64 = 64 * 1024 * 1024;

/// What a file's stat data say, as far as telling a change goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stat {
    mtime: (i64, i64),
    ctime: (i64, i64),
    ino: u64,
    size: u64,
    mode: u32,
}

impl Stat {
    fn of(m: &std::fs::Metadata) -> Stat {
        use std::os::unix::fs::MetadataExt as _;
        Stat {
            mtime: (m.mtime(), m.mtime_nsec()),
            ctime: (m.ctime(), m.ctime_nsec()),
            ino: m.ino(),
            size: m.size(),
            mode: m.mode(),
        }
    }

    fn exec(&self) -> bool {
        self.mode & 0o111 != 0
    }
}

/// One file as a snapshot saw it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Seen {
    stat: Stat,
    id: ObjectId,
    /// It matched the index (its state is the index entry's; not written out).
    clean: bool,
}

impl Seen {
    /// What tells a change: the content and the executable bit.
    fn state(&self) -> (ObjectId, bool) {
        (self.id, self.stat.exec())
    }

    /// A file as a journalled transaction left it.
    fn journalled((id, mode): (ObjectId, FileMode)) -> Seen {
        Seen::unstatted(id, mode == FileMode::Executable)
    }

    /// A file known by its id and mode alone (no stat data: never taken for one on
    /// disk).
    fn unstatted(id: ObjectId, exec: bool) -> Seen {
        let stat = Stat {
            mtime: (0, 0),
            ctime: (0, 0),
            ino: 0,
            size: 0,
            mode: if exec { 0o100755 } else { 0o100644 },
        };
        let clean = false;
        Seen { stat, id, clean }
    }
}

/// The files of the work tree git sees, by repository path.
type Tree = BTreeMap<String, Seen>;

/// What [`before`] left for [`after`] (beside the snapshot itself).
#[derive(Debug, Serialize, Deserialize)]
struct Window {
    /// HEAD as `NAME@ID` (or the id alone when detached).
    head: Option<String>,
    /// The journal's newest event then ([`event_mark`]).
    journal_at: Option<String>,
    /// The command (or patch) the tool ran.
    command: String,
    /// How the record before it was taken.
    #[serde(default)]
    monitor: Option<watch::Monitor>,
}

/// Records the work tree's state before a shell command of `ev`'s session (see the
/// module docs). The answer carries the command with [`SESSION_ENV`] set, for the
/// harness's `updatedInput`.
pub(super) fn before(repo: &Repo, ev: &HookEvent) -> Result<Outcome, Error> {
    let (snap, meta) = window_files(repo, ev);
    let prev = read_prev(&tree_cache(repo));
    let record = take(repo, &prev, &snap)?;
    let _ = share_as_cache(repo, &snap);
    let window = Window {
        head: head(repo),
        journal_at: txn::newest(repo, 1)?.0.first().map(event_mark),
        command: ev.command.clone().unwrap_or_default(),
        monitor: Some(record),
    };
    let body = serde_json::to_vec(&window).map_err(|e| AgentHookError::BadEvent(e.to_string()))?;
    std::fs::write(&meta, body).map_err(io("write", &meta))?;
    Ok(Outcome {
        command: ev
            .command
            .as_deref()
            .map(|c| with_session(c, &agent_name(ev))),
        ..Outcome::default()
    })
}

/// `command` run with [`SESSION_ENV`] set to `session` (quoted for `sh`).
pub fn with_session(command: &str, session: &str) -> String {
    format!(
        "export {SESSION_ENV}='{}'\n{command}",
        session.replace('\'', r"'\''")
    )
}

/// Journals what a shell command of `ev`'s session changed (see the module docs).
pub(super) fn after(repo: &Repo, ev: &HookEvent) -> Result<Outcome, Error> {
    let (snap, meta) = window_files(repo, ev);
    let window: Option<Window> = std::fs::read(&meta)
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok());
    let (Some(window), Some(before)) = (window, read_full(repo, &snap)) else {
        // No record of the state before (the hook was installed meanwhile, or the
        // before-event never came): nothing to compare with.
        return Ok(Outcome::default());
    };
    let prev = read_prev(&snap);
    let stem = snap.file_stem().unwrap_or_default().to_string_lossy();
    let snap_now = snap.with_file_name(format!("{stem}-after.snap"));
    let record = take(repo, &prev, &snap_now)?;
    let now = read_full(repo, &snap_now)
        .ok_or_else(|| AgentHookError::BadEvent(format!("cannot read {}", snap_now.display())))?;
    for f in [&meta, &snap, &snap.with_extension("index")] {
        let _ = std::fs::remove_file(f);
    }
    let changed = changed_paths(&before, &now);
    let head_now = head(repo);
    let monitors = [window.monitor, Some(record)];
    let result = if head_now != window.head {
        journal_head_move(repo, ev, &window, head_now, &changed)
    } else if changed.is_empty() {
        Ok(Outcome::default())
    } else {
        journal_window(repo, ev, &window, &before, &now, changed, monitors)
    };
    let _ = share_as_cache(repo, &snap_now);
    let _ = std::fs::remove_file(&snap_now);
    let _ = std::fs::remove_file(snap_now.with_extension("index"));
    result
}

/// The paths whose content differs between two snapshots (present in one only, or
/// with other ids or executable bits).
fn changed_paths(before: &Tree, now: &Tree) -> Vec<String> {
    let mut paths: Vec<String> = before
        .iter()
        .filter(|(p, b)| {
            now.get(*p)
                .is_none_or(|n| n.id != b.id || n.stat.exec() != b.stat.exec())
        })
        .map(|(p, _)| p.clone())
        .collect();
    paths.extend(now.keys().filter(|p| !before.contains_key(*p)).cloned());
    paths.sort();
    paths
}

/// The journalled transactions of the window on a path, newest first: who, and what
/// the path held before and after each.
type Theirs = BTreeMap<String, Vec<Touch>>;

/// One journalled transaction's change of a path: who, and what the path held before
/// and after it (blob id and mode; `None`: no file).
struct Touch {
    who: String,
    before: Option<(ObjectId, FileMode)>,
    after: Option<(ObjectId, FileMode)>,
}

/// The paths transactions journalled in this work tree since `since` touched, each
/// with who and what they left there (newest first). Another work tree's (a lane's)
/// wrote other files than the command saw, however alike their paths.
fn journalled_since(repo: &Repo, since: Option<&str>) -> Result<Theirs, Error> {
    let mut theirs = Theirs::new();
    let here = repo.worktree_name();
    for e in txn::newest(repo, 500)?.0 {
        if since == Some(event_mark(&e).as_str()) {
            break;
        }
        if e.worktree != here {
            continue;
        }
        let undone = match e.event {
            txn::EventKind::Applied => false,
            txn::EventKind::Undone => true,
            _ => continue,
        };
        let Ok(commit) = ObjectId::from_hex(e.commit.as_bytes()) else {
            continue;
        };
        let Ok(preview) = txn::read_preview(repo, commit) else {
            continue;
        };
        let who = e.agent.clone().unwrap_or_else(|| e.who.clone());
        for entry in preview.entries {
            let (from, to) = if undone {
                (entry.after, entry.before)
            } else {
                (entry.before, entry.after)
            };
            theirs.entry(entry.path).or_default().push(Touch {
                who: who.clone(),
                before: from,
                after: to,
            });
        }
    }
    Ok(theirs)
}

/// The paths a window may have to journal: those whose content changed, and those a
/// transaction of the window left other than they are now (the session's own `git
/// astedit` created a file the command then deleted: the content is as before, the
/// journal's last word on it is not).
fn window_paths(changed: Vec<String>, theirs: &Theirs, now: &Tree) -> Vec<String> {
    let mut paths = changed;
    paths.extend(
        theirs
            .iter()
            .filter(|(p, by)| now.get(*p).map(Seen::state) != by[0].after.map(touched))
            .map(|(p, _)| p.clone()),
    );
    paths.sort();
    paths.dedup();
    paths
}

/// A journalled side as a snapshot's [`Seen::state`].
fn touched((id, mode): (ObjectId, FileMode)) -> (ObjectId, bool) {
    (id, mode == FileMode::Executable)
}

/// Journals the window's change less what others journalled in it.
fn journal_window(
    repo: &Repo,
    ev: &HookEvent,
    window: &Window,
    before: &Tree,
    now: &Tree,
    changed: Vec<String>,
    monitors: [Option<watch::Monitor>; 2],
) -> Result<Outcome, Error> {
    let me = agent_name(ev);
    let (lock, _) = txn::HookLock::take(repo)?;
    let theirs = journalled_since(repo, window.journal_at.as_deref())?;
    let mut both: Vec<(String, String)> = Vec::new();
    let mut earlier: Vec<String> = Vec::new();
    let mut changes = Vec::new();
    for path in window_paths(changed, &theirs, now) {
        let mut from = before.get(&path).copied();
        if let Some(by) = theirs.get(&path) {
            let (newest, oldest) = (&by[0], &by[by.len() - 1]);
            let holds = now.get(&path).map(Seen::state);
            let started = from.map(|s| s.state()) == oldest.before.map(touched);
            // Their transactions explain the whole change: theirs alone.
            if started && holds == newest.after.map(touched) {
                continue;
            }
            let other = by.iter().find(|t| t.who != me);
            match other {
                // Another session wrote it too: reported, attributed to nobody.
                Some(t) => {
                    both.push((path, t.who.clone()));
                    continue;
                }
                // This session's own `git astedit` in the command: the command's part
                // is what came after it, from what that left (a file it created, too).
                None => {
                    if !started {
                        earlier.push(path.clone());
                    }
                    from = newest.after.map(Seen::journalled);
                }
            }
        }
        if let Some(c) = file_change(repo, &path, from.as_ref(), now.get(&path))? {
            changes.push(c);
        }
    }
    let mut out = Outcome::default();
    let mut notes: Vec<String> = both
        .iter()
        .map(|(path, who)| {
            format!("{path}: changed both by a shell command of {me} and by {who} meanwhile; left out of this transaction")
        })
        .collect();
    notes.extend(earlier.iter().map(|path| {
        format!("{path}: the command also changed it before its git astedit call; that part is not journalled")
    }));
    if !both.is_empty() {
        out.warn = Some(format!(
            "While this command ran, another session also wrote {}: {}. Those files hold \
             both changes mixed; they are not journalled as this command's. Read them \
             again and check them.",
            crate::text::plural(both.len(), "file"),
            both.iter()
                .map(|(p, who)| format!("{p} (by {who})"))
                .collect::<Vec<_>>()
                .join(", ")
        ));
        for (path, who) in &both {
            let _ = super::notify(
                repo,
                who,
                &format!(
                    "{path} was also changed by a shell command of {me} right after your edit; \
                     read it again before you edit it."
                ),
            );
        }
    }
    if changes.is_empty() {
        return Ok(out);
    }
    let tool = ev.tool_name.clone();
    let first_line = window.command.lines().next().unwrap_or("").to_string();
    let files: Vec<FileMeta> = changes
        .iter()
        .map(|c: &FileChange| FileMeta {
            path: c.path.clone(),
            count: 1,
            flags: Vec::new(),
        })
        .collect();
    let meta = PreviewMeta {
        kind: PreviewKind::Hook,
        summary: format!(
            "{tool} changed {} ({first_line}) by {me}",
            crate::text::plural(changes.len(), "file")
        ),
        reason: Some(format!("{tool} by {me}: {first_line}")),
        replacements: changes.len(),
        files,
        agent: Some(me.clone()),
        details: serde_json::json!({"hook": {"harness": ev.harness.name(), "session": ev.session,
                                             "tool": tool, "command": window.command,
                                             "record": {"before": monitors[0], "after": monitors[1]}}}),
        ..PreviewMeta::default()
    };
    let set = ChangeSet { changes };
    out.journalled = Some(lock.record_applied_noted(repo, &set, &meta, notes)?);
    Ok(out)
}

/// The change of `path` from `before` to `now`, with both contents; `None` when a
/// side's blob is not in the object database (nothing can be undone then).
fn file_change(
    repo: &Repo,
    path: &str,
    before: Option<&Seen>,
    now: Option<&Seen>,
) -> Result<Option<FileChange>, Error> {
    let content = |s: Option<&Seen>| -> Result<Option<Option<FileContent>>, Error> {
        let Some(s) = s else { return Ok(Some(None)) };
        if !txn::has_blob(repo, s.id) {
            return Ok(None);
        }
        let mode = if s.stat.exec() {
            FileMode::Executable
        } else {
            FileMode::Regular
        };
        Ok(Some(Some(FileContent {
            bytes: txn::blob(repo, s.id)?,
            mode,
        })))
    };
    let (Some(before), Some(after)) = (content(before)?, content(now)?) else {
        return Ok(None);
    };
    Ok(Some(FileChange {
        path: path.to_string(),
        before,
        after,
    }))
}

/// Journals a command that moved HEAD: not an edit, so not undone as one.
fn journal_head_move(
    repo: &Repo,
    ev: &HookEvent,
    window: &Window,
    head_now: Option<String>,
    changed: &[String],
) -> Result<Outcome, Error> {
    let me = agent_name(ev);
    let (lock, _) = txn::HookLock::take(repo)?;
    let from = window.head.clone().unwrap_or_else(|| "nothing".into());
    let to = head_now.clone().unwrap_or_else(|| "nothing".into());
    let Some(id) = head_now
        .as_deref()
        .and_then(|h| h.rsplit('@').next())
        .and_then(|h| ObjectId::from_hex(h.as_bytes()).ok())
    else {
        return Ok(Outcome::default());
    };
    let first_line = window.command.lines().next().unwrap_or("");
    lock.record_head_moved(
        repo,
        id,
        changed,
        Some(format!("{} by {me}: {first_line}", ev.tool_name)),
        Some(me.clone()),
        vec![format!("HEAD {from} -> {to}")],
    )?;
    Ok(Outcome {
        warn: Some(format!(
            "This command moved HEAD ({from} -> {to}); it is journalled as such, and the \
             files it changed ({}) are not an edit git astedit undo takes back.",
            changed.len()
        )),
        ..Outcome::default()
    })
}

/// HEAD as `NAME@ID`, or `ID` when detached; `None` on an unborn branch.
fn head(repo: &Repo) -> Option<String> {
    let id = repo.git.head_id().ok()?.detach();
    Some(match repo.git.head_name().ok().flatten() {
        Some(name) => format!("{}@{id}", name.as_bstr()),
        None => id.to_string(),
    })
}

/// Records the work tree's files now in `snap` (and the index they go with beside it,
/// `snap` with the extension `index`), from `prev` and what Watchman saw change since
/// it where that can be told ([`watch`]), else by a look at every file ([`look`]).
fn take(repo: &Repo, prev: &watch::Prev, snap: &Path) -> Result<watch::Monitor, Error> {
    // The index first, so that the record goes with the index it read (a link: git
    // replaces the index by a rename, so this one keeps what it held).
    let index = snap.with_extension("index");
    let _ = std::fs::remove_file(&index);
    let linked = std::fs::hard_link(repo.git.index_path(), &index).is_ok()
        || std::fs::copy(repo.git.index_path(), &index).is_ok();
    if linked {
        if let Some(fresh) = watch::take_since(repo, prev, &index) {
            for bytes in &fresh.read {
                // Kept, so that an undo can put it back.
                txn::keep_blob(repo, bytes)?;
            }
            let absent: Vec<String> = fresh.absent.into_iter().collect();
            write_tree(snap, Some(&fresh.mark), &fresh.files, &absent)?;
            return Ok(watch::Monitor::Watchman);
        }
    }
    // Watchman's clock before any file is looked at: what changes during the look is
    // in its answer to the next record.
    let clock = (linked && watch::enabled(repo))
        .then(|| watch::clock(&repo.workdir))
        .flatten();
    let loaded = match linked.then(|| watch::open_index(&index, repo.git.object_hash())) {
        Some(Some(file)) => file,
        _ => {
            let _ = std::fs::remove_file(&index);
            let shared = repo
                .git
                .index_or_empty()
                .map_err(|e| AgentHookError::BadEvent(format!("cannot read the index: {e}")))?;
            let file: &gix::index::File = &shared;
            file.clone()
        }
    };
    let (tree, absent) = look(repo, &loaded, &prev.files)?;
    let mark = clock.filter(|_| linked).map(|clock| watch::Mark {
        clock,
        index_sum: watch::index_sum(&index, repo.git.object_hash()),
        entries: watch::entries_digest(&loaded),
        excludes: watch::excludes_stamp(repo),
    });
    write_tree(snap, mark.as_ref(), &tree, &absent)?;
    Ok(watch::Monitor::Stat)
}

/// The work tree's files now, each looked at (see the module docs): ids from the
/// index or `cache` where the stat data say unchanged, else read, hashed and kept;
/// and the index's paths that are not (missing, or no longer regular files).
fn look(
    repo: &Repo,
    index: &gix::index::State,
    cache: &Tree,
) -> Result<(Tree, Vec<String>), Error> {
    let trust = crate::cache::IndexTrust::new(&repo.git, index);
    let mut paths: Vec<(String, Option<crate::cache::IndexStat>)> = index
        .entries()
        .iter()
        .filter(|e| e.stage_raw() == 0)
        .filter_map(|e| {
            let path = std::str::from_utf8(e.path(index)).ok()?.to_string();
            Some((path, trust.entry(e)))
        })
        .collect();
    paths.extend(untracked(repo, index)?.into_iter().map(|p| (p, None)));
    let (workdir, kind) = (repo.workdir.as_path(), repo.git.object_hash());
    let seen: Vec<Found> = paths
        .into_par_iter()
        .filter_map(|(path, tracked)| seen_now(workdir, kind, path, tracked.as_ref(), cache))
        .collect();
    let mut tree = Tree::new();
    for (path, seen, bytes) in seen {
        if let Some(bytes) = bytes {
            // Kept, so that an undo can put it back.
            txn::keep_blob(repo, &bytes)?;
        }
        tree.insert(path, seen);
    }
    let absent = index
        .entries()
        .iter()
        .filter_map(|e| std::str::from_utf8(e.path(index)).ok())
        .filter(|p| !tree.contains_key(*p))
        .map(str::to_string)
        .collect();
    Ok((tree, absent))
}

/// The files as a record saw them: the entries of the index linked beside it, with
/// what did not match it over them. `None` without a record.
fn read_full(repo: &Repo, snap: &Path) -> Option<Tree> {
    let text = std::fs::read_to_string(snap).ok()?;
    let mut tree = Tree::new();
    if let Some(index) = watch::open_index(&snap.with_extension("index"), repo.git.object_hash()) {
        for e in index.entries().iter().filter(|e| e.stage_raw() == 0) {
            let Ok(path) = std::str::from_utf8(e.path(&index)) else {
                continue;
            };
            let exec = e.mode == gix::index::entry::Mode::FILE_EXECUTABLE;
            let clean = true;
            let seen = Seen::unstatted(e.id, exec);
            tree.insert(path.to_string(), Seen { clean, ..seen });
        }
    }
    for (path, seen) in parse_tree(&text) {
        match seen {
            Some(seen) => tree.insert(path, seen),
            None => tree.remove(&path),
        };
    }
    Some(tree)
}

/// A file found: its path, what it is, and its bytes when they were read (to keep).
type Found = (String, Seen, Option<Vec<u8>>);

/// One file now: `None` when it is missing, not a regular file, or too large.
fn seen_now(
    workdir: &Path,
    kind: gix::hash::Kind,
    path: String,
    tracked: Option<&crate::cache::IndexStat>,
    cache: &Tree,
) -> Option<Found> {
    let abs = workdir.join(&path);
    let meta = std::fs::symlink_metadata(&abs).ok()?;
    if !meta.file_type().is_file() || meta.len() > MAX_FILE {
        return None;
    }
    let stat = Stat::of(&meta);
    if let Some(id) = tracked.and_then(|t| t.id_if_unchanged(&meta)) {
        let clean = true;
        return Some((path, Seen { stat, id, clean }, None));
    }
    if let Some(c) = cache.get(&path).filter(|c| c.stat == stat) {
        let clean = false;
        return Some((path, Seen { clean, ..*c }, None));
    }
    let bytes = std::fs::read(&abs).ok()?;
    let id = crate::cache::blob_id(kind, &bytes)?;
    let clean = false;
    Some((path, Seen { stat, id, clean }, Some(bytes)))
}

/// The untracked files git does not ignore.
fn untracked(repo: &Repo, index: &gix::index::State) -> Result<Vec<String>, Error> {
    let opts = repo
        .git
        .dirwalk_options()
        .map_err(|e| AgentHookError::BadEvent(format!("cannot walk the work tree: {e}")))?
        .emit_tracked(false)
        .emit_untracked(gix::dir::walk::EmissionMode::Matching);
    let interrupt = std::sync::atomic::AtomicBool::new(false);
    let mut collect = gix::dir::walk::delegate::Collect::default();
    repo.git
        .dirwalk(
            index,
            std::iter::empty::<gix::bstr::BString>(),
            &interrupt,
            opts,
            &mut collect,
        )
        .map_err(|e| AgentHookError::BadEvent(format!("cannot walk the work tree: {e}")))?;
    Ok(collect
        .unorded_entries
        .into_iter()
        .filter(|(e, _)| e.status == gix::dir::entry::Status::Untracked)
        .filter(|(e, _)| e.disk_kind == Some(gix::dir::entry::Kind::File))
        .filter_map(|(e, _)| {
            std::str::from_utf8(e.rela_path.as_ref())
                .ok()
                .map(str::to_string)
        })
        .collect())
}

/// The window's files for `ev`: the snapshot and its meta (keyed by the tool call's
/// id, so parallel commands of one session keep apart).
fn window_files(repo: &Repo, ev: &HookEvent) -> (PathBuf, PathBuf) {
    let dir = session_dir(repo, ev);
    let _ = std::fs::create_dir_all(&dir);
    let key = super::digest(ev.tool_use_id.as_deref().unwrap_or("shell"));
    (
        dir.join(format!("shell-{key}.snap")),
        dir.join(format!("shell-{key}.json")),
    )
}

/// The last snapshot any window wrote: the ids of files unchanged since.
fn tree_cache(repo: &Repo) -> PathBuf {
    repo.git_dir.join("astedit-agents").join("tree.snap")
}

/// Makes `snap` the shared cache (a hard link renamed into place).
fn share_as_cache(repo: &Repo, snap: &Path) -> std::io::Result<()> {
    let cache = tree_cache(repo);
    let temp = cache.with_extension(format!("tmp{}", std::process::id()));
    let _ = std::fs::remove_file(&temp);
    std::fs::hard_link(snap, &temp).or_else(|_| std::fs::copy(snap, &temp).map(|_| ()))?;
    std::fs::rename(&temp, &cache)
}

/// Writes a snapshot's files that did not match the index, one line each: `ID MTIME
/// MTIME_NS CTIME CTIME_NS INO SIZE MODE PATH`, and the index's paths that were not
/// there as `- PATH` (paths with a newline are not recorded), after its Watchman mark
/// if it has one, to a temp file renamed over `file`.
fn write_tree(
    file: &Path,
    mark: Option<&watch::Mark>,
    tree: &Tree,
    absent: &[String],
) -> Result<(), Error> {
    let temp = file.with_extension(format!("tmp{}", std::process::id()));
    let f = std::fs::File::create(&temp).map_err(io("create", &temp))?;
    let mut out = std::io::BufWriter::new(f);
    let mut put = |line: String| out.write_all(line.as_bytes());
    if let Some(mark) = mark {
        put(mark.line()).map_err(io("write", &temp))?;
    }
    for (path, s) in tree.iter().filter(|(p, s)| !s.clean && !p.contains('\n')) {
        let t = &s.stat;
        put(format!(
            "{} {} {} {} {} {} {} {} {path}\n",
            s.id, t.mtime.0, t.mtime.1, t.ctime.0, t.ctime.1, t.ino, t.size, t.mode
        ))
        .map_err(io("write", &temp))?;
    }
    for path in absent.iter().filter(|p| !p.contains('\n')) {
        put(format!("- {path}\n")).map_err(io("write", &temp))?;
    }
    out.flush().map_err(io("write", &temp))?;
    drop(out);
    std::fs::rename(&temp, file).map_err(io("rename", &temp))
}

/// The last record a [`write_tree`] wrote in `file` (an empty one when there is none).
fn read_prev(file: &Path) -> watch::Prev {
    let text = std::fs::read_to_string(file).unwrap_or_default();
    let mut prev = watch::Prev {
        files: Tree::new(),
        absent: std::collections::BTreeSet::new(),
        mark: watch::Mark::of(&text),
    };
    for (path, seen) in parse_tree(&text) {
        match seen {
            Some(seen) => {
                prev.files.insert(path, seen);
            }
            None => {
                prev.absent.insert(path);
            }
        }
    }
    prev
}

/// A snapshot's lines: each file, or `None` for a path that was absent. A damaged line
/// is left out (that file is read again).
fn parse_tree(text: &str) -> Vec<(String, Option<Seen>)> {
    let mut files = Vec::new();
    for line in text.lines() {
        if let Some(path) = line.strip_prefix("- ") {
            files.push((path.to_string(), None));
            continue;
        }
        let f: Vec<&str> = line.splitn(9, ' ').collect();
        let [id, n @ .., path] = f.as_slice() else {
            continue;
        };
        let Ok(id) = ObjectId::from_hex(id.as_bytes()) else {
            continue;
        };
        let n: Vec<i64> = n.iter().filter_map(|x| x.parse().ok()).collect();
        let [ms, mn, cs, cn, ino, size, mode] = n.as_slice() else {
            continue;
        };
        let stat = Stat {
            mtime: (*ms, *mn),
            ctime: (*cs, *cn),
            ino: *ino as u64,
            size: *size as u64,
            mode: *mode as u32,
        };
        let clean = false;
        files.push((path.to_string(), Some(Seen { stat, id, clean })));
    }
    files
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_session_is_quoted_for_the_shell() {
        assert_eq!(
            with_session("sed -i s/a/b/ x", "claude-code/session:it's"),
            "export GIT_ASTEDIT_SESSION='claude-code/session:it'\\''s'\nsed -i s/a/b/ x"
        );
    }
}
