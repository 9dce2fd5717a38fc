/*!
The repository lock: `<git_dir>/astedit.lock`, one per work tree (the main tree's
git dir is the common dir; a linked worktree's, such as an agent's lane, is its own),
holding who took it (pid, host, boot id, process start time, time). It is written under a name of its own and then
hard-linked into place, which fails when it exists (as `O_CREAT|O_EXCL` does for git's
own lockfiles) and never shows an empty lock, even when its taker is killed at once.
Its holder also keeps an advisory `flock` on it for as long as it lives, which the
kernel drops when the process dies, however it dies.

A command does not wait for it: a second apply exits 6 at once. Agents do
([`set_wait`]): two MCP sessions (or hook calls) resolving at once take turns, polling
with a growing pause, and only past the bound is the lock an error, with `retry_after`
in its details. `GIT_ASTEDIT_LOCK_WAIT=SECONDS` sets the bound for any run. A lock whose holder is provably
gone is broken automatically ([`Lock::acquire`]): same host and either another boot
(the boot id differs) or no such pid, or a pid reused by a process started later (the
start time from `/proc/<pid>/stat` differs). Breaking is atomic: the breaker must take
the `flock` of the lock file it judged (which fails while anyone holds it, the holder
or another breaker) and check that the path still names that very file before it
removes it; then it creates its own lock with `O_EXCL` like anyone else. A note goes to
the journal with the next event. A lock it cannot judge (another host, no `/proc`, a
file system without `flock`) is reported as stale with the command that clears it.

An agent hook keeps the lock past its own process as a *turn* ([`Lock::keep_as_turn`]):
a harness's before-edit hook takes the lock, checks the file, and leaves the lock file
in place naming the session, the path and a deadline; the harness writes the file; its
after-edit hook takes the same file back ([`take_back_turn`]) and removes it when done.
So an apply never runs between a hook's check and the write it allowed. A turn's holder
is gone when its deadline has passed (its process exited long before): a hook whose
after-event never comes (the tool failed, the harness died) holds others up for the
bound at most.

A linked worktree's writers that change what all work trees share (an apply or undo
consumes a pending preview, gc rewrites the journal) take the main tree's lock too,
after their own ([`Lock::acquire`]); an agent's hook and the journalling of its edit
take their work tree's alone ([`Lock::acquire_tree`]), so the agents of two lanes never
wait for each other, nor for a turn on the main tree. The journal itself is appended by
compare-and-swap, so writers of two work trees never lose each other's events.
*/

use std::io::Read;
use std::io::Write;
use std::path::Path;
use std::path::PathBuf;

use serde::Deserialize;
use serde::Serialize;

use super::Error;
use crate::repo::Repo;

/// The lock file's name inside a work tree's git dir.
pub const LOCK_FILE: &str = "astedit.lock";

/// Who holds the lock, as written in the lock file.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct Holder {
    pub pid: u32,
    pub host: String,
    /// Process start time (clock ticks since boot, from /proc), to detect pid reuse.
    #[serde(default)]
    pub start: Option<u64>,
    /// `/proc/sys/kernel/random/boot_id` when it was taken: another boot means gone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub boot: Option<String>,
    pub time: i64,
    pub op: String,
    /// The work tree it ran in: where recovery of an interrupted run happens.
    #[serde(default)]
    pub workdir: Option<String>,
    /// Kept past the process as an agent hook's turn (see the module docs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turn: Option<Turn>,
}

/// An agent hook's turn: whose, on what, until when.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct Turn {
    /// Who may take it back: the harness's session, as the hook names it.
    pub session: String,
    /// The repository path the session is writing.
    pub path: String,
    /// Milliseconds since the epoch after which the turn is over.
    pub until_ms: i64,
}

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

impl Holder {
    pub fn me(op: &str, workdir: &Path) -> Holder {
        let pid = std::process::id();
        Holder {
            pid,
            host: hostname(),
            start: proc_start(pid),
            boot: boot_id(),
            time: super::notes::now_secs(),
            op: op.to_string(),
            workdir: Some(workdir.display().to_string()),
            turn: None,
        }
    }

    /// Whether the holder is certainly gone (false when unsure, e.g. another host).
    /// A turn is gone when its deadline has passed.
    pub fn is_dead(&self) -> bool {
        if self.host != hostname() {
            return false;
        }
        if let Some(turn) = &self.turn {
            return now_ms() > turn.until_ms;
        }
        if let (Some(then), Some(now)) = (&self.boot, boot_id()) {
            if *then != now {
                return true;
            }
        }
        if !Path::new("/proc/self/stat").exists() {
            return false;
        }
        match (proc_start(self.pid), self.start) {
            (None, _) => true,
            (Some(now), Some(then)) => now != then,
            // An old lock without a start time and a live pid: maybe reused, maybe not.
            (Some(_), None) => false,
        }
    }

    fn describe(&self) -> String {
        if let Some(t) = &self.turn {
            return format!(
                "the turn of an agent's own edit of {} (agent-hook, {}) since {}, for {} ms more at most",
                t.path,
                t.session,
                crate::text::rfc3339(self.time),
                (t.until_ms - now_ms()).max(0)
            );
        }
        format!(
            "{} by pid {} on {} since {}",
            self.op,
            self.pid,
            self.host,
            crate::text::rfc3339(self.time)
        )
    }
}

/// A held lock; dropping it removes the file (and releases the flock).
pub struct Lock {
    path: PathBuf,
    /// Open for the lock's lifetime: it carries the flock.
    file: std::fs::File,
    /// What the file says.
    me: Holder,
    /// Kept as a turn: dropping it leaves the file.
    keep: bool,
    /// A linked worktree's writer: the main tree's lock, taken after this one and
    /// dropped with it.
    main: Option<Box<Lock>>,
}

/// What a look at a held lock found.
enum Judged {
    /// It was the lock of this dead process and is gone now.
    Broken(Holder),
    /// It changed under us (released, or broken by someone else): look again.
    Moved,
    /// Held by a live (or unknown) process.
    Held(Option<Holder>),
    /// Held by a process that is gone, but this file system cannot break it safely.
    Unbreakable(Holder),
}

impl Lock {
    /// The work tree's lock.
    pub fn path(repo: &Repo) -> PathBuf {
        repo.git_dir.join(LOCK_FILE)
    }

    /// Takes the work tree's lock and, in a linked worktree, the main tree's after it
    /// (see the module docs), waiting up to the bound [`set_wait`] set (none by
    /// default) while a live process holds one, then fails with [`Error::Locked`]. A
    /// lock left by a process that is provably gone is broken first.
    pub fn acquire(repo: &Repo, op: &str) -> Result<Lock, Error> {
        let mut lock = Self::acquire_tree(repo, op)?;
        if repo.git_dir != repo.common_dir {
            let main = Self::acquire_at(repo, &repo.common_dir.join(LOCK_FILE), op)?;
            lock.main = Some(Box::new(main));
        }
        Ok(lock)
    }

    /// Takes the work tree's lock alone: what an agent's hook and the journalling of
    /// its edit need (see the module docs).
    pub fn acquire_tree(repo: &Repo, op: &str) -> Result<Lock, Error> {
        Self::acquire_at(repo, &Self::path(repo), op)
    }

    fn acquire_at(repo: &Repo, path: &Path, op: &str) -> Result<Lock, Error> {
        let path = path.to_path_buf();
        let me = Holder::me(op, &repo.workdir);
        let started = std::time::Instant::now();
        let bound = wait_bound();
        let mut pause = std::time::Duration::from_millis(5);
        let mut moved = 0;
        loop {
            if let Some(lock) = Self::try_create(&path, &me)? {
                return Ok(lock);
            }
            match judge(&path)? {
                Judged::Broken(holder) => {
                    let note = format!(
                        "lock-broken: the lock of {}, which is no longer running, was broken by pid {} ({op})",
                        holder.describe(),
                        me.pid
                    );
                    journal_note(repo, &note);
                }
                // Released or broken under us: look again at once, a few times.
                Judged::Moved if moved < 8 => moved += 1,
                // A dead holder that could not be broken here is not waited for.
                Judged::Unbreakable(h) => return Err(locked_error(&path, Some(&h), 0)),
                Judged::Moved | Judged::Held(_) if started.elapsed() + pause <= bound => {
                    std::thread::sleep(pause);
                    pause = (pause * 2).min(std::time::Duration::from_millis(100));
                }
                Judged::Held(holder) => {
                    return Err(locked_error(&path, holder.as_ref(), waited(started, bound)))
                }
                Judged::Moved => {
                    let holder = holder_at(&path);
                    return Err(locked_error(&path, holder.as_ref(), waited(started, bound)));
                }
            }
        }
    }

    /// Creates the lock at `path` holding `me`, or `None` when it exists. The file is
    /// written (and flocked) under a name of its own first and then linked to `path`,
    /// so the lock is never seen empty, even when its taker is killed at once (an
    /// empty lock names nobody and could never be judged gone).
    fn try_create(path: &Path, me: &Holder) -> Result<Option<Lock>, Error> {
        // Held: no need to write a file to learn it (the link below decides races).
        if std::fs::symlink_metadata(path).is_ok() {
            return Ok(None);
        }
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let temp = path.with_extension(format!("lock.{}.{n}.new", me.pid));
        // A file of that name is a killed process's whose pid was reused: not live.
        let _ = std::fs::remove_file(&temp);
        let file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&temp)
            .map_err(Error::io("create the lock", &temp))?;
        // Before the link: a breaker only tries the flock of a lock it could read.
        // A file system without flock leaves the lock unbreakable, not unsafe.
        let _ = super::os::flock(&file, super::os::LOCK_EX | super::os::LOCK_NB);
        let body = serde_json::to_string(me).unwrap_or_default();
        let written = (&file)
            .write_all(body.as_bytes())
            .and_then(|_| file.sync_all());
        let linked = written.and_then(|_| std::fs::hard_link(&temp, path));
        let _ = std::fs::remove_file(&temp);
        match linked {
            Ok(()) => Ok(Some(Lock {
                path: path.to_path_buf(),
                file,
                me: me.clone(),
                keep: false,
                main: None,
            }))
            .inspect(|_| clear_stray_temps(path)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(None),
            Err(e) => Err(Error::io("create the lock", path)(e)),
        }
    }

    /// Rewrites the holder in place (the file stays the same file, so the flock and
    /// the breakers' identity check still hold).
    fn rewrite(&mut self, holder: Holder) -> Result<(), Error> {
        use std::io::Seek;
        let body = serde_json::to_string(&holder).unwrap_or_default();
        let mut f = &self.file;
        f.set_len(0)
            .and_then(|_| f.seek(std::io::SeekFrom::Start(0)))
            .and_then(|_| f.write_all(body.as_bytes()))
            .and_then(|_| f.sync_all())
            .map_err(Error::io("write the lock", &self.path))?;
        self.me = holder;
        Ok(())
    }

    /// Leaves the lock in place past this process, as `session`'s turn to write
    /// `path`, for `bound` at most (see the module docs).
    pub fn keep_as_turn(
        mut self,
        session: &str,
        path: &str,
        bound: std::time::Duration,
    ) -> Result<(), Error> {
        let mut holder = self.me.clone();
        holder.turn = Some(Turn {
            session: session.to_string(),
            path: path.to_string(),
            until_ms: now_ms().saturating_add(i64::try_from(bound.as_millis()).unwrap_or(0)),
        });
        self.rewrite(holder)?;
        self.keep = true;
        Ok(())
    }

    /// Who holds the work tree's lock now, if it is held and readable.
    pub fn holder(repo: &Repo) -> Option<Holder> {
        holder_at(&Self::path(repo))
    }
}

fn holder_at(path: &Path) -> Option<Holder> {
    let text = std::fs::read_to_string(path).ok()?;
    serde_json::from_str(&text).ok()
}

/// Takes back the turn `session` was given for `path`, if the lock file is still that
/// turn (nobody broke it after its deadline): the lock is then this process's, until
/// dropped. `None` when the turn is not there any more (released, or broken and maybe
/// taken by another writer since).
pub fn take_back_turn(
    repo: &Repo,
    session: &str,
    path: &str,
    op: &str,
) -> Result<Option<Lock>, Error> {
    let lock_path = Lock::path(repo);
    let mut file = match std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(&lock_path)
    {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(Error::io("open the lock", &lock_path)(e)),
    };
    let mut text = String::new();
    let _ = file.read_to_string(&mut text);
    let ours = serde_json::from_str::<Holder>(&text)
        .ok()
        .and_then(|h| h.turn)
        .is_some_and(|t| t.session == session && t.path == path);
    if !ours
        || !matches!(
            super::os::flock(&file, super::os::LOCK_EX | super::os::LOCK_NB),
            Ok(true)
        )
    {
        return Ok(None);
    }
    let same_file = match (file.metadata(), std::fs::symlink_metadata(&lock_path)) {
        (Ok(a), Ok(b)) => super::os::same_file(&a, &b).unwrap_or(false),
        _ => false,
    };
    if !same_file {
        return Ok(None);
    }
    let me = Holder::me(op, &repo.workdir);
    let mut lock = Lock {
        path: lock_path,
        file,
        me: me.clone(),
        keep: false,
        main: None,
    };
    lock.rewrite(me)?;
    Ok(Some(lock))
}

impl Drop for Lock {
    fn drop(&mut self) {
        if self.keep {
            return;
        }
        // Removed while the flock is still held: a breaker that opened this file
        // finds, once it gets the flock, that the path no longer names it.
        let _ = std::fs::remove_file(&self.path);
    }
}

/// Removes the files a taker of the lock killed before it linked its lock left beside
/// `path` (`astedit.lock.<pid>.<n>.new` of a pid that is gone); called with the lock
/// held, so no live taker's file is judged.
fn clear_stray_temps(path: &Path) {
    let (Some(dir), Some(name)) = (path.parent(), path.file_name().and_then(|n| n.to_str())) else {
        return;
    };
    let prefix = format!("{name}.");
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let file = entry.file_name();
        let Some(rest) = file
            .to_str()
            .and_then(|f| f.strip_prefix(&prefix))
            .and_then(|f| f.strip_suffix(".new"))
        else {
            continue;
        };
        let pid = rest.split('.').next().and_then(|p| p.parse::<u32>().ok());
        if pid.is_some_and(|pid| proc_start(pid).is_none() && pid != std::process::id()) {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

/// Looks at the lock at `path` and breaks it when its holder is provably gone.
fn judge(path: &Path) -> Result<Judged, Error> {
    let mut file = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Judged::Moved),
        Err(e) => return Err(Error::io("open the lock", path)(e)),
    };
    let mut text = String::new();
    let holder: Option<Holder> = match file.read_to_string(&mut text) {
        Ok(_) => serde_json::from_str(&text).ok(),
        Err(_) => None,
    };
    let holder = match holder {
        Some(h) if h.is_dead() => h,
        other => return Ok(Judged::Held(other)),
    };
    match super::os::flock(&file, super::os::LOCK_EX | super::os::LOCK_NB) {
        Ok(true) => {}
        // Someone holds it: the holder after all (another pid namespace?) or a breaker.
        Ok(false) => return Ok(Judged::Moved),
        // No flock here: breaking could race another breaker, so it is left to the user.
        Err(_) => return Ok(Judged::Unbreakable(holder)),
    }
    // Where identity cannot be told (no flock there either) this is not reached.
    let same_file = match (file.metadata(), std::fs::symlink_metadata(path)) {
        (Ok(a), Ok(b)) => super::os::same_file(&a, &b).unwrap_or(false),
        _ => false,
    };
    if !same_file {
        return Ok(Judged::Moved);
    }
    match std::fs::remove_file(path) {
        Ok(()) => Ok(Judged::Broken(holder)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Judged::Moved),
        Err(e) => Err(Error::io("remove the stale lock", path)(e)),
    }
}

/// The note about a broken lock goes with the next journal event; failing to queue it
/// must not keep the lock from being taken (the lock is already gone).
fn journal_note(repo: &Repo, note: &str) {
    let _ = super::notes::add_pending_note(repo, note);
}

/// When to try again after [`Error::Locked`] (seconds): a writer holds the lock for
/// the length of one apply.
pub const RETRY_AFTER_SECS: u64 = 2;

/// The environment variable that sets the wait bound of any run (seconds).
pub const WAIT_ENV: &str = "GIT_ASTEDIT_LOCK_WAIT";

/// The wait bound set for this process, in milliseconds (`u64::MAX`: not set).
static WAIT_MS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(u64::MAX);

/// Makes every [`Lock::acquire`] of this process wait up to `bound` for a lock a live
/// process holds (the MCP server and the agent hooks do; a command fails at once).
/// [`WAIT_ENV`] wins when set.
pub fn set_wait(bound: std::time::Duration) {
    let ms = u64::try_from(bound.as_millis()).unwrap_or(u64::MAX - 1);
    WAIT_MS.store(ms, std::sync::atomic::Ordering::Relaxed);
}

fn wait_bound() -> std::time::Duration {
    let env = std::env::var(WAIT_ENV)
        .ok()
        .and_then(|v| v.trim().parse::<f64>().ok())
        .filter(|s| s.is_finite() && *s >= 0.0);
    match (env, WAIT_MS.load(std::sync::atomic::Ordering::Relaxed)) {
        (Some(secs), _) => std::time::Duration::from_secs_f64(secs.min(86_400.0)),
        (None, u64::MAX) => std::time::Duration::ZERO,
        (None, ms) => std::time::Duration::from_millis(ms),
    }
}

/// How long a run waited, in milliseconds: 0 when it was not to wait at all.
fn waited(started: std::time::Instant, bound: std::time::Duration) -> u64 {
    if bound.is_zero() {
        return 0;
    }
    u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX)
}

fn locked_error(path: &Path, holder: Option<&Holder>, waited_ms: u64) -> Error {
    let unjudged = match holder {
        Some(h) if h.host != hostname() => Some(format!("it was taken on host {}", h.host)),
        Some(h) if !h.is_dead() && !Path::new("/proc/self/stat").exists() => {
            Some(format!("no /proc here to look for pid {}", h.pid))
        }
        Some(_) => None,
        None => {
            // Empty or unreadable. A lock is written right after it is created, so one
            // that stays empty for a moment is a crashed holder's (or not ours).
            let young = std::fs::metadata(path)
                .and_then(|m| m.modified())
                .ok()
                .and_then(|t| t.elapsed().ok())
                .is_some_and(|age| age < std::time::Duration::from_secs(2));
            (!young).then(|| "the lock file is empty or not one of ours".to_string())
        }
    };
    let (holder, dead) = match holder {
        Some(h) if h.is_dead() => {
            let mut text = format!("{}, which is no longer running", h.describe());
            if let Some(w) = &h.workdir {
                text.push_str(&format!(
                    "; if it was interrupted, any git astedit command run in {w} finishes or rolls it back"
                ));
            }
            (text, true)
        }
        Some(h) => (h.describe(), false),
        None => ("unknown holder".to_string(), false),
    };
    Error::Locked {
        lock: path.display().to_string(),
        holder,
        dead,
        waited_ms,
        unjudged,
    }
}

fn boot_id() -> Option<String> {
    std::fs::read_to_string("/proc/sys/kernel/random/boot_id")
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
}

fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .or_else(|_| std::fs::read_to_string("/etc/hostname"))
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| "unknown".into())
}

/// The start time of a live (non-zombie) process, from `/proc/<pid>/stat`.
fn proc_start(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name may contain spaces and parentheses: fields start after the last ')'.
    let rest = &stat[stat.rfind(')')? + 1..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // fields[0] is the state (field 3); the start time is field 22.
    if fields.first() == Some(&"Z") || fields.first() == Some(&"X") {
        return None;
    }
    fields.get(19)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn own_process_is_alive_and_a_gone_pid_is_dead() {
        let me = Holder::me("test", std::path::Path::new("/tmp"));
        assert!(!me.is_dead());
        if me.boot.is_some() {
            let rebooted = Holder {
                boot: Some("another-boot".into()),
                ..me.clone()
            };
            assert!(rebooted.is_dead(), "a lock from another boot is gone");
        }
        let gone = Holder {
            pid: u32::MAX - 7,
            ..me.clone()
        };
        if std::path::Path::new("/proc/self/stat").exists() {
            assert!(gone.is_dead());
        }
        let elsewhere = Holder {
            host: "some-other-host".into(),
            ..gone
        };
        assert!(!elsewhere.is_dead());
    }
}
