/*!
A long-lived process's file sets, handed out again while nothing they were made
from changed (see [`collect_remembered`]).
*/

use super::collect;
use super::collect_watched;
use super::literal_pathspecs;
use super::Error;
use super::FileSet;
use super::Options;
use crate::repo::Repo;

/// Like [`collect`], for a long-lived process (the MCP server): the set of an earlier
/// call with the same options is handed out again while nothing it was made from
/// changed — the index, the git config and exclude files, and every folder the walk
/// entered (a file added, removed or renamed in a folder changes its mtime) with its
/// `.gitignore`. Anything changed (or changed too recently to tell) walks again.
pub fn collect_remembered(repo: &Repo, opts: &Options) -> Result<FileSet, Error> {
    // With pathspecs, the walk may start below folders it never reports entering:
    // such sets are walked every time.
    if !opts.pathspecs.is_empty() || !opts.globs.globs.is_empty() || !opts.language_globs.is_empty()
    {
        return collect(repo, opts);
    }
    let key = format!(
        "{:?}\0{:?}\0{:?}\0{:?}\0{}\0{}\0{}",
        repo.workdir,
        repo.prefix,
        opts.pathspecs,
        opts.lang,
        opts.max_file_size,
        opts.no_ignore,
        literal_pathspecs()
    );
    {
        let memo = REMEMBERED_SETS.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((_, witness, set)) = memo.iter().find(|(k, _, _)| *k == key) {
            if witness.unchanged() {
                return Ok(set.clone());
            }
        }
    }
    let mut witness = Witness::default();
    // What the walk reads besides the folders, looked at before it reads them.
    let git_dir = repo.git.git_dir();
    let mut sources = vec![
        repo.git.index_path(),
        git_dir.join("config"),
        git_dir.join("info").join("exclude"),
        git_dir.join("info").join("attributes"),
        repo.git.common_dir().join("config"),
    ];
    let config = repo.git.config_snapshot();
    for key in ["core.excludesFile", "core.attributesFile"] {
        if let Some(value) = config.string(key) {
            let value = value.to_string();
            let path = match (value.strip_prefix("~/"), std::env::var_os("HOME")) {
                (Some(rest), Some(home)) => std::path::PathBuf::from(home).join(rest),
                _ => repo.workdir.join(value),
            };
            sources.push(path);
        }
    }
    if let Some(home) = std::env::var_os("HOME") {
        let home = std::path::PathBuf::from(home);
        sources.push(home.join(".gitconfig"));
        sources.push(home.join(".config").join("git").join("config"));
        sources.push(home.join(".config").join("git").join("ignore"));
    }
    if let Some(xdg) = std::env::var_os("XDG_CONFIG_HOME") {
        let xdg = std::path::PathBuf::from(xdg).join("git");
        sources.push(xdg.join("config"));
        sources.push(xdg.join("ignore"));
    }
    for path in sources {
        witness.note(path);
    }
    // The folders from the top down to the current one (where the walk starts).
    let mut dir = repo.workdir.clone();
    witness.note(dir.clone());
    witness.note(dir.join(".gitignore"));
    for part in repo.prefix.as_deref().unwrap_or("").split('/') {
        if part.is_empty() {
            continue;
        }
        dir.push(part);
        witness.note(dir.clone());
        witness.note(dir.join(".gitignore"));
    }
    let set = collect_watched(repo, opts, Some(&mut witness))?;
    if witness.settled() {
        let mut memo = REMEMBERED_SETS.lock().unwrap_or_else(|e| e.into_inner());
        memo.retain(|(k, _, _)| *k != key);
        if memo.len() >= 4 {
            memo.remove(0);
        }
        memo.push((key, witness, set.clone()));
    }
    Ok(set)
}

/// The file sets [`collect_remembered`] keeps: (options, what they were made from, set).
static REMEMBERED_SETS: std::sync::Mutex<Vec<(String, Witness, FileSet)>> =
    std::sync::Mutex::new(Vec::new());

/// The stat data of the files and folders a file set was made from, each taken
/// before it was read (`None`: it did not exist).
#[derive(Default)]
pub(super) struct Witness {
    seen: Vec<(std::path::PathBuf, Option<Snapshot>)>,
    /// When the first was taken.
    started: Option<std::time::SystemTime>,
}

#[derive(PartialEq, Eq, Clone, Copy)]
struct Snapshot {
    dev: u64,
    ino: u64,
    size: u64,
    mtime: (i64, i64),
    ctime: (i64, i64),
}

fn snapshot(path: &std::path::Path) -> Option<Snapshot> {
    use std::os::unix::fs::MetadataExt as _;
    let m = std::fs::symlink_metadata(path).ok()?;
    Some(Snapshot {
        dev: m.dev(),
        ino: m.ino(),
        size: m.size(),
        mtime: (m.mtime(), m.mtime_nsec()),
        ctime: (m.ctime(), m.ctime_nsec()),
    })
}

impl Witness {
    pub(super) fn note(&mut self, path: std::path::PathBuf) {
        if self.started.is_none() {
            self.started = Some(std::time::SystemTime::now());
        }
        let snap = snapshot(&path);
        self.seen.push((path, snap));
    }

    /// Whether every snapshot still holds.
    fn unchanged(&self) -> bool {
        self.seen.iter().all(|(path, snap)| snapshot(path) == *snap)
    }

    /// Whether no snapshot is so recent that a change in the same clock tick could
    /// hide behind it (as git's racy index entries): only then is the set kept.
    fn settled(&self) -> bool {
        let Some(started) = self.started else {
            return false;
        };
        let limit = started
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs() as i64)
            - 2;
        self.seen
            .iter()
            .all(|(_, snap)| snap.is_none_or(|s| s.mtime.0 < limit && s.ctime.0 < limit))
    }
}
