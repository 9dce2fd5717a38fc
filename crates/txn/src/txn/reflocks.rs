/*!
The locks of our own ref transactions, and what is left of one that was killed.

A gix ref transaction takes a `<ref>.lock` per ref (and `packed-refs.lock` while
refs are packed, for a deletion or to read an updated ref's old value), then commits the updates one by one, then the
deletions. A process killed in there leaves those lock files, which block every later
update of the same refs (and every journal append, for `refs/astedit-journal.lock`),
and it may leave the transaction half done: the journal already names the event, the
successor of a refresh already exists, and the old preview's ref is still there.

So every transaction of ours ([`transact`]) runs inside two records of its own:

* the **gate**, `<common_dir>/astedit-refs.gate`: a file that is never removed, of
  which every transaction holds a shared `flock` from before its first lock to after
  its last. The kernel drops it when the process dies. Whoever holds it exclusively
  knows that no live git astedit is inside a ref transaction;
* an **intent**, `<common_dir>/astedit-refs/<pid>-<n>.json`, written before the
  transaction and removed after it: who (pid, host, boot, start time), the lock files
  it takes and the edits it makes. A leftover intent names the locks that are ours.

[`clear_stale`] (run before every command, and again when a transaction meets a lock)
looks for intents whose process is provably gone (as for the repository lock: same
host, and another boot, or no such process, or a pid reused by a later process). When
there is one, it takes the gate exclusively (without waiting: a live transaction means
"not now"), which also makes it the only breaker, and for each dead intent:

1. removes the lock files it names that still look like its own: a ref lock that is
   empty or holds the very value the intent writes there, `packed-refs.lock` only
   when it is older than [`PACKED_AGE`] (git's own `pack-refs` takes that lock too);
2. completes the transaction when its decisive edit, the journal's, had landed (the
   journal tip's chain holds the new journal commit): the other updates and deletions
   are done now, each only if the ref still holds what the intent expected. When the
   journal had not moved, nothing else had either (gix commits the updates in order,
   the journal first, and the deletions after all updates), so nothing is left to undo;
3. queues a note for the journal's next event and removes the intent.

A lock that no intent names (left by git itself, by an older git astedit, or a power
loss) is never removed automatically: the error names it and the command to run.
*/

use std::io::Write;
use std::path::Path;
use std::path::PathBuf;

use gix::refs::transaction::Change;
use gix::refs::transaction::PreviousValue;
use gix::refs::transaction::RefEdit;
use gix::refs::Target;
use gix::ObjectId;
use serde::Deserialize;
use serde::Serialize;

use super::lock::Holder;
use super::notes;
use super::refs;
use super::Error;
use crate::repo::Repo;

const GATE: &str = "astedit-refs.gate";
const INTENTS: &str = "astedit-refs";

/// How long a transaction waits for a breaker holding the gate.
const GATE_WAIT: std::time::Duration = std::time::Duration::from_secs(5);

/// How old a `packed-refs.lock` named by a dead intent must be before it is removed.
const PACKED_AGE: std::time::Duration = std::time::Duration::from_secs(2);

/// One edit of a transaction, as an intent records it.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct IntentEdit {
    name: String,
    /// The new value; `None`: the ref is deleted.
    #[serde(default)]
    new: Option<String>,
    /// What it must hold before; `None`: must not exist (or anything, for HEAD).
    #[serde(default)]
    expected: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct Intent {
    holder: Holder,
    /// Absolute paths of the lock files this transaction takes.
    locks: Vec<String>,
    edits: Vec<IntentEdit>,
}

/// Runs `edits` as one ref transaction inside the gate and an intent (module docs).
/// A lock held by someone else is [`Error::RefLocked`], once stale locks were cleared.
pub fn transact(repo: &Repo, edits: Vec<RefEdit>, op: &str) -> Result<(), Error> {
    match transact_once(repo, edits.clone(), op) {
        Err(Error::Git { source, .. }) if !source.is_conflict() && held(repo, &edits).is_some() => {
            // A lock is in the way: when it is a dead transaction's, clear it and retry.
            if !clear_stale(repo)?.is_empty() {
                if let Err(e) = transact_once(repo, edits.clone(), op) {
                    return Err(locked_or(repo, &edits, e));
                }
                return Ok(());
            }
            let lock = held(repo, &edits).unwrap_or_default();
            Err(ref_locked(repo, lock))
        }
        other => other,
    }
}

fn locked_or(repo: &Repo, edits: &[RefEdit], e: Error) -> Error {
    match (&e, held(repo, edits)) {
        (Error::Git { source, .. }, Some(lock)) if !source.is_conflict() => ref_locked(repo, lock),
        _ => e,
    }
}

fn transact_once(repo: &Repo, edits: Vec<RefEdit>, op: &str) -> Result<(), Error> {
    let _gate = Gate::shared(repo)?;
    let intent = IntentFile::write(repo, &edits, op)?;
    let sig = repo.signature();
    let mut buf = gix::date::parse::TimeBuf::default();
    let fail =
        gix::lock::acquire::Fail::AfterDurationWithBackoff(std::time::Duration::from_millis(100));
    let packed_fail =
        gix::lock::acquire::Fail::AfterDurationWithBackoff(std::time::Duration::from_secs(1));
    let prepared = repo
        .git
        .refs
        .transaction()
        .prepare(edits, fail, packed_fail)
        .map_err(Error::git("update refs"))?;
    // Every lock is taken, nothing is committed yet.
    super::fsutil::fault("refs-locked");
    super::fsutil::fault(&format!("refs-locked:{op}"));
    prepared
        .commit(Some(sig.to_ref(&mut buf)))
        .map_err(Error::git("update refs"))?;
    intent.remove();
    Ok(())
}

/// The first lock file of `edits` that exists (someone holds it), if any.
fn held(repo: &Repo, edits: &[RefEdit]) -> Option<PathBuf> {
    lock_paths(repo, edits).into_iter().find(|p| p.exists())
}

/// The lock files a transaction of `edits` takes.
fn lock_paths(repo: &Repo, edits: &[RefEdit]) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in edits {
        let name = e.name.as_bstr().to_string();
        if name == "HEAD" {
            out.push(repo.git_dir.join("HEAD.lock"));
            if e.deref {
                if let Ok(Some(branch)) = repo.git.head_name() {
                    out.push(lock_of(&repo.common_dir, &branch.as_bstr().to_string()));
                }
            }
        } else {
            out.push(lock_of(&repo.common_dir, &name));
        }
    }
    // gix locks `packed-refs` for every transaction while the file exists: to delete
    // a packed ref, and to read the old value of one it updates (a clone's refs are
    // packed).
    if !edits.is_empty() && repo.common_dir.join("packed-refs").exists() {
        out.push(repo.common_dir.join("packed-refs.lock"));
    }
    out
}

fn lock_of(dir: &Path, name: &str) -> PathBuf {
    dir.join(format!("{name}.lock"))
}

fn ref_locked(repo: &Repo, lock: PathBuf) -> Error {
    let ours = intents(repo)
        .into_iter()
        .find(|(_, i)| i.locks.iter().any(|l| Path::new(l) == lock));
    let holder = match ours {
        Some((_, i)) if !i.holder.is_dead() => Some(format!(
            "git astedit pid {} ({}) is updating it",
            i.holder.pid, i.holder.op
        )),
        Some((_, i)) => Some(format!(
            "left by git astedit pid {} ({}) on {}, which cannot be judged from here",
            i.holder.pid, i.holder.op, i.holder.host
        )),
        None => None,
    };
    Error::RefLocked {
        lock: lock.display().to_string(),
        holder,
    }
}

/// A hold on the gate; the flock goes with the file.
struct Gate {
    _file: Option<std::fs::File>,
}

impl Gate {
    /// A shared hold, waited for (an exclusive holder is a breaker, busy for
    /// milliseconds). A file system without flock gives no gate: transactions still
    /// run, and nothing is ever broken (the breaker cannot get it either).
    fn shared(repo: &Repo) -> Result<Gate, Error> {
        let Some(file) = open_gate(repo) else {
            return Ok(Gate { _file: None });
        };
        // Bounded: a breaker that hangs (stopped, say) must not hang every writer.
        let start = std::time::Instant::now();
        loop {
            match flock(&file, LOCK_SH | LOCK_NB) {
                Ok(true) => return Ok(Gate { _file: Some(file) }),
                Ok(false) if start.elapsed() < GATE_WAIT => {
                    std::thread::sleep(std::time::Duration::from_millis(2))
                }
                Ok(false) => {
                    return Err(Error::RefLocked {
                        lock: repo.common_dir.join(GATE).display().to_string(),
                        holder: Some(
                            "a git astedit clearing stale ref locks is updating it".into(),
                        ),
                    })
                }
                Err(_) => return Ok(Gate { _file: None }),
            }
        }
    }

    /// An exclusive hold, or None at once when anyone holds it.
    fn exclusive(repo: &Repo) -> Option<Gate> {
        let f = open_gate(repo)?;
        flock(&f, LOCK_EX | LOCK_NB)
            .ok()
            .filter(|ok| *ok)
            .map(|_| Gate { _file: Some(f) })
    }
}

fn open_gate(repo: &Repo) -> Option<std::fs::File> {
    std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(repo.common_dir.join(GATE))
        .ok()
}

use super::os::{flock, LOCK_EX, LOCK_NB, LOCK_SH};

/// A written intent; removed by [`IntentFile::remove`] once the transaction is done,
/// and by drop when it failed in this process (gix removed its locks then).
struct IntentFile {
    path: Option<PathBuf>,
}

impl IntentFile {
    fn write(repo: &Repo, edits: &[RefEdit], op: &str) -> Result<IntentFile, Error> {
        use std::sync::atomic::AtomicU64;
        use std::sync::atomic::Ordering;
        static SEQ: AtomicU64 = AtomicU64::new(0);
        let dir = repo.common_dir.join(INTENTS);
        std::fs::create_dir_all(&dir).map_err(Error::io("create", &dir))?;
        let holder = Holder::me(op, &repo.workdir);
        let path = dir.join(format!(
            "{}-{}.json",
            holder.pid,
            SEQ.fetch_add(1, Ordering::Relaxed)
        ));
        let intent = Intent {
            holder,
            locks: lock_paths(repo, edits)
                .iter()
                .map(|p| p.display().to_string())
                .collect(),
            edits: edits.iter().map(intent_edit).collect(),
        };
        let body = serde_json::to_vec(&intent)
            .map_err(|e| Error::Corrupt(format!("cannot encode a ref intent: {e}")))?;
        let mut f = std::fs::File::create(&path).map_err(Error::io("create", &path))?;
        f.write_all(&body).map_err(Error::io("write", &path))?;
        // A transaction that deletes must be completable after a power loss too (the
        // swaps: refresh, split, apply, discard, gc); pure creations need not wait.
        if intent.edits.iter().any(|e| e.new.is_none()) {
            f.sync_all().map_err(Error::io("fsync", &path))?;
            super::fsutil::sync_dir(&dir)?;
        }
        Ok(IntentFile { path: Some(path) })
    }

    fn remove(mut self) {
        if let Some(p) = self.path.take() {
            let _ = std::fs::remove_file(p);
        }
    }
}

impl Drop for IntentFile {
    fn drop(&mut self) {
        if let Some(p) = self.path.take() {
            let _ = std::fs::remove_file(p);
        }
    }
}

fn intent_edit(e: &RefEdit) -> IntentEdit {
    let hex = |t: &Target| match t {
        Target::Object(id) => Some(id.to_string()),
        Target::Symbolic(_) => None,
    };
    let prev = |p: &PreviousValue| match p {
        PreviousValue::MustExistAndMatch(t) | PreviousValue::ExistingMustMatch(t) => hex(t),
        _ => None,
    };
    let (new, expected) = match &e.change {
        Change::Update { new, expected, .. } => (hex(new), prev(expected)),
        Change::Delete { expected, .. } => (None, prev(expected)),
    };
    IntentEdit {
        name: e.name.as_bstr().to_string(),
        new,
        expected,
    }
}

/// Every readable intent, with its file.
fn intents(repo: &Repo) -> Vec<(PathBuf, Intent)> {
    let Ok(dir) = std::fs::read_dir(repo.common_dir.join(INTENTS)) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for entry in dir.flatten() {
        let path = entry.path();
        if path.extension().is_none_or(|e| e != "json") {
            continue;
        }
        if let Ok(bytes) = std::fs::read(&path) {
            if let Ok(i) = serde_json::from_slice::<Intent>(&bytes) {
                out.push((path, i));
            }
        }
    }
    out
}

/// Clears what killed transactions of ours left (module docs); returns a note per
/// transaction cleared, for the user (the journal gets them with its next event).
pub fn clear_stale(repo: &Repo) -> Result<Vec<String>, Error> {
    let dead: Vec<(PathBuf, Intent)> = intents(repo)
        .into_iter()
        .filter(|(_, i)| i.holder.is_dead())
        .collect();
    if dead.is_empty() {
        return Ok(Vec::new());
    }
    let Some(_gate) = Gate::exclusive(repo) else {
        // A live transaction (or another breaker): not now.
        return Ok(Vec::new());
    };
    let mut notes = Vec::new();
    for (path, intent) in dead {
        // Read again under the gate: another breaker may have just finished it.
        if !path.exists() {
            continue;
        }
        let mut removed = Vec::new();
        for lock in &intent.locks {
            let lock = Path::new(lock);
            if looks_ours(lock, &intent) {
                match std::fs::remove_file(lock) {
                    Ok(()) => removed.push(lock.display().to_string()),
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                    Err(e) => return Err(Error::io("remove the stale lock", lock)(e)),
                }
            }
        }
        let completed = complete(repo, &intent)?;
        let mut note = format!(
            "ref-lock-broken: the ref transaction of git astedit pid {} ({}), which is no longer running,",
            intent.holder.pid, intent.holder.op
        );
        if removed.is_empty() {
            note.push_str(" left no lock");
        } else {
            note.push_str(&format!(" left {}, removed", removed.join(", ")));
        }
        if !completed.is_empty() {
            note.push_str(&format!("; completed it: {}", completed.join(", ")));
        }
        let _ = notes::add_pending_note(repo, &note);
        notes.push(note);
        std::fs::remove_file(&path).map_err(Error::io("remove", &path))?;
    }
    Ok(notes)
}

/// Whether the lock file `lock` named by dead `intent` is its own (module docs).
fn looks_ours(lock: &Path, intent: &Intent) -> bool {
    let Ok(meta) = std::fs::symlink_metadata(lock) else {
        return false;
    };
    if !meta.is_file() {
        return false;
    }
    if lock.file_name().is_some_and(|n| n == "packed-refs.lock") {
        let age = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs() as i64)
            .unwrap_or(0)
            - super::os::mtime_secs(&meta);
        return age >= PACKED_AGE.as_secs() as i64;
    }
    let Ok(content) = std::fs::read(lock) else {
        return false;
    };
    let text = String::from_utf8_lossy(&content);
    let text = text.trim();
    text.is_empty()
        || intent
            .edits
            .iter()
            .any(|e| e.new.as_deref().is_some_and(|n| n == text))
}

/// Step 2 of the module docs: finishes a transaction whose journal edit landed.
/// Returns what it did, one phrase per ref.
fn complete(repo: &Repo, intent: &Intent) -> Result<Vec<String>, Error> {
    let Some(j) = intent.edits.iter().find(|e| e.name == refs::JOURNAL_REF) else {
        return Ok(Vec::new());
    };
    let from = j.expected.as_deref().and_then(oid);
    let landed = match j.new.as_deref().and_then(oid) {
        Some(to) => chain_holds(repo, to, from)?,
        // The journal deleted (gc of every event): it is the first deletion.
        None => refs::tip(repo)? != from,
    };
    if !landed {
        return Ok(Vec::new());
    }
    let mut edits = Vec::new();
    let mut done = Vec::new();
    for e in intent.edits.iter().filter(|e| e.name != refs::JOURNAL_REF) {
        if !e.name.starts_with("refs/astedit") {
            continue;
        }
        let now = current(repo, &e.name)?;
        let expected = e.expected.as_deref().and_then(oid);
        match e.new.as_deref().and_then(oid) {
            Some(new) if now != Some(new) && now == expected => {
                edits.push(refs::update_edit(
                    &e.name,
                    match now {
                        Some(n) => PreviousValue::MustExistAndMatch(Target::Object(n)),
                        None => PreviousValue::MustNotExist,
                    },
                    new,
                    "astedit: completed after a crash",
                )?);
                done.push(format!("created {}", e.name));
            }
            None => {
                if let Some(n) = now.filter(|n| Some(*n) == expected) {
                    edits.push(refs::delete_edit(
                        &e.name,
                        PreviousValue::MustExistAndMatch(Target::Object(n)),
                    )?);
                    done.push(format!("removed {}", e.name));
                }
            }
            _ => {}
        }
    }
    if edits.is_empty() {
        return Ok(done);
    }
    // Under the exclusive gate: no intent of its own (the dead one stays until this is
    // done, and names the same locks).
    let sig = repo.signature();
    let mut buf = gix::date::parse::TimeBuf::default();
    repo.git
        .edit_references_as(edits, Some(sig.to_ref(&mut buf)))
        .map_err(Error::git("complete an interrupted ref update"))?;
    Ok(done)
}

fn oid(hex: &str) -> Option<ObjectId> {
    ObjectId::from_hex(hex.as_bytes()).ok()
}

fn current(repo: &Repo, name: &str) -> Result<Option<ObjectId>, Error> {
    match repo
        .git
        .try_find_reference(name)
        .map_err(Error::git(format!("read {name}")))?
    {
        None => Ok(None),
        Some(mut r) => Ok(r.peel_to_id().ok().map(|id| id.detach())),
    }
}

/// Whether the journal's first-parent chain from its tip reaches `to` before `from`.
fn chain_holds(repo: &Repo, to: ObjectId, from: Option<ObjectId>) -> Result<bool, Error> {
    let mut next = refs::tip(repo)?;
    // Bounded: appends since the crash are few; a journal is walked to its start at most.
    for _ in 0..1_000_000 {
        let Some(id) = next else { return Ok(false) };
        if id == to {
            return Ok(true);
        }
        if Some(id) == from {
            return Ok(false);
        }
        let Ok(commit) = repo.git.find_commit(id) else {
            return Ok(false);
        };
        let parents: Vec<ObjectId> = commit.parent_ids().map(|p| p.detach()).collect();
        // The first journal commit has one parent, the transaction's P.
        next = if parents.len() >= 2 {
            Some(parents[0])
        } else {
            None
        };
    }
    Ok(false)
}

/// Lock files named by intents of processes that are gone (the next command clears
/// them), with the pid, for `recover --status`.
pub fn dead_locks(repo: &Repo) -> Vec<(PathBuf, u32)> {
    let mut out = Vec::new();
    for (_, i) in intents(repo) {
        if i.holder.is_dead() {
            for l in &i.locks {
                if Path::new(l).exists() {
                    out.push((PathBuf::from(l), i.holder.pid));
                }
            }
        }
    }
    out
}

/// Leftover lock files under our refs that no intent explains, for `recover --status`.
pub fn unexplained_locks(repo: &Repo) -> Vec<PathBuf> {
    let known: std::collections::HashSet<String> = intents(repo)
        .into_iter()
        .flat_map(|(_, i)| i.locks)
        .collect();
    let mut out = Vec::new();
    let journal_lock = lock_of(&repo.common_dir, refs::JOURNAL_REF);
    if journal_lock.exists() {
        out.push(journal_lock);
    }
    if let Ok(dir) = std::fs::read_dir(repo.common_dir.join("refs/astedit")) {
        for e in dir.flatten() {
            if e.path().extension().is_some_and(|x| x == "lock") {
                out.push(e.path());
            }
        }
    }
    out.retain(|p| !known.contains(&p.display().to_string()));
    out.sort();
    out
}
