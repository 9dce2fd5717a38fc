/*!
The repository lock: `<common_dir>/astedit.lock`, created with `O_CREAT|O_EXCL` like
git's own lockfiles, holding who took it (pid, host, process start time, time).

It is never waited on: a second apply exits 6 at once. A lock whose process is gone
(same host, no such pid, or the pid was reused by a process started later) is reported
as stale with the command that clears it. Recovery may take over a stale lock only when
the dead process left an "applying" record naming the same pid: then we know exactly
what it was doing.
*/

use std::io::Write;
use std::path::PathBuf;

use serde::Deserialize;
use serde::Serialize;

use super::Error;
use crate::repo::Repo;

/// The lock file's name inside the common git dir.
pub const LOCK_FILE: &str = "astedit.lock";

/// Who holds the lock, as written in the lock file.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub(crate) struct Holder {
    pub pid: u32,
    pub host: String,
    /// Process start time (clock ticks since boot, from /proc), to detect pid reuse.
    #[serde(default)]
    pub start: Option<u64>,
    pub time: i64,
    pub op: String,
    /// The work tree it ran in: where recovery of an interrupted run happens.
    #[serde(default)]
    pub workdir: Option<String>,
}

impl Holder {
    fn me(op: &str, workdir: &std::path::Path) -> Holder {
        let pid = std::process::id();
        Holder {
            pid,
            host: hostname(),
            start: proc_start(pid),
            time: super::journal::now_secs(),
            op: op.to_string(),
            workdir: Some(workdir.display().to_string()),
        }
    }

    /// Whether the holder is certainly gone (false when unsure, e.g. another host).
    pub fn is_dead(&self) -> bool {
        if self.host != hostname() || !std::path::Path::new("/proc/self/stat").exists() {
            return false;
        }
        match (proc_start(self.pid), self.start) {
            (None, _) => true,
            (Some(now), Some(then)) => now != then,
            (Some(_), None) => false,
        }
    }

    fn describe(&self) -> String {
        format!(
            "{} by pid {} on {} since {}",
            self.op, self.pid, self.host, self.time
        )
    }
}

/// A held lock; dropping it removes the file.
pub(crate) struct Lock {
    path: PathBuf,
}

impl Lock {
    pub fn path(repo: &Repo) -> PathBuf {
        repo.common_dir.join(LOCK_FILE)
    }

    /// Takes the lock or fails at once with [`Error::Locked`].
    pub fn acquire(repo: &Repo, op: &str) -> Result<Lock, Error> {
        let path = Self::path(repo);
        match Self::try_create(&path, &Holder::me(op, &repo.workdir))? {
            Some(lock) => Ok(lock),
            None => {
                let holder = Self::holder(repo);
                Err(locked_error(&path, holder.as_ref()))
            }
        }
    }

    fn try_create(path: &std::path::Path, me: &Holder) -> Result<Option<Lock>, Error> {
        let mut file = match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(path)
        {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => return Ok(None),
            Err(e) => return Err(Error::io("create the lock", path)(e)),
        };
        let lock = Lock {
            path: path.to_path_buf(),
        };
        let body = serde_json::to_string(me).unwrap_or_default();
        file.write_all(body.as_bytes())
            .and_then(|_| file.sync_all())
            .map_err(Error::io("write the lock", path))?;
        Ok(Some(lock))
    }

    /// Who holds the lock now, if it is held and readable.
    pub fn holder(repo: &Repo) -> Option<Holder> {
        let text = std::fs::read_to_string(Self::path(repo)).ok()?;
        serde_json::from_str(&text).ok()
    }

    /// Replaces a lock held by `dead` (a process known to be gone) with ours. Another
    /// process doing the same at the same moment is kept out by a second lockfile.
    pub fn take_over(repo: &Repo, dead: &Holder, op: &str) -> Result<Lock, Error> {
        let path = Self::path(repo);
        let guard_path = repo.common_dir.join("astedit.lock.takeover");
        let me = Holder::me(op, &repo.workdir);
        let Some(guard) = Self::try_create(&guard_path, &me)? else {
            return Err(locked_error(&path, Self::holder(repo).as_ref()));
        };
        let result = (|| {
            if Self::holder(repo).as_ref() == Some(dead) {
                std::fs::remove_file(&path).map_err(Error::io("remove the stale lock", &path))?;
            }
            match Self::try_create(&path, &me)? {
                Some(lock) => Ok(lock),
                None => Err(locked_error(&path, Self::holder(repo).as_ref())),
            }
        })();
        drop(guard);
        result
    }
}

impl Drop for Lock {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

fn locked_error(path: &std::path::Path, holder: Option<&Holder>) -> Error {
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
    }
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
