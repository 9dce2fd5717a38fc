/*!
A shell window's record brought up to date from a file-system monitor (Watchman)
instead of a look at every file.

A record taken where Watchman watches the work tree carries a [`Mark`]: Watchman's
clock taken *before* the record looked at the files, and what the files it did not
look at depend on (the index's entries, the ignore files outside the work tree). The
next record asks Watchman which paths changed since that clock (`query` with `since`,
which Watchman answers after it has seen every change made before the question), and
looks at those alone: every other file is as the last record saw it, since nothing
wrote it after the clock. A write made between two records is therefore in one of
them, or in the answer of the next question.

The full look ([`super::shell`]'s walk and one `stat` per file) is taken instead when
there is no mark, when Watchman cannot be asked (not installed, its service not
running, the work tree not watched: the hook never starts a service nor a watch), when
Watchman says it cannot tell (`is_fresh_instance`: the watch or the service was
restarted since the clock), when the index's entries or an ignore file outside the
work tree changed, when a `.gitignore` changed, and with `astedit.watchman = false`.
*/

use std::collections::BTreeMap;
use std::collections::BTreeSet;
use std::hash::Hasher as _;
use std::io::Read as _;
use std::io::Seek as _;
use std::io::Write as _;
use std::path::Path;
use std::process::Command;
use std::process::Stdio;

use super::Tree;
use crate::repo::Repo;

/// How a record was taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub(super) enum Monitor {
    /// Watchman named the paths changed since the last record's clock.
    Watchman,
    /// Every file's stat data (and the walk for untracked files).
    Stat,
}

/// The first line of a record taken with Watchman.
const HEADER: &str = "#watch ";

/// What a record taken with Watchman depends on (see the module docs).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Mark {
    /// Watchman's clock, taken before the record looked at any file.
    pub clock: String,
    /// The trailing checksum of the index file the record read (hex; empty where git
    /// writes none, `index.skipHash`).
    pub index_sum: String,
    /// A digest of the index's entries: paths, ids, modes, stages and flags.
    pub entries: String,
    /// The stat data of the ignore files git reads outside the work tree.
    pub excludes: String,
}

impl Mark {
    /// The mark as a record's first line.
    pub fn line(&self) -> String {
        let sum = if self.index_sum.is_empty() {
            "-"
        } else {
            &self.index_sum
        };
        format!(
            "{HEADER}{} {sum} {} {}\n",
            self.clock, self.entries, self.excludes
        )
    }

    /// The mark a record's text starts with, if any.
    pub fn of(text: &str) -> Option<Mark> {
        let line = text.lines().next()?.strip_prefix(HEADER)?;
        let f: Vec<&str> = line.split(' ').collect();
        let [clock, sum, entries, excludes] = f[..] else {
            return None;
        };
        Some(Mark {
            clock: clock.to_string(),
            index_sum: if sum == "-" {
                String::new()
            } else {
                sum.into()
            },
            entries: entries.to_string(),
            excludes: excludes.to_string(),
        })
    }
}

/// Whether the repository lets the hook ask Watchman (`astedit.watchman`, on unless
/// false).
pub(super) fn enabled(repo: &Repo) -> bool {
    repo.git
        .config_snapshot()
        .boolean("astedit.watchman")
        .unwrap_or(true)
}

/// Watchman's answer to `command`, `None` when it cannot be asked or says an error.
/// Never starts its service (`--no-spawn`); `WATCHMAN_SOCK` names its socket where
/// set, as Watchman's own clients read it.
fn ask(command: &serde_json::Value) -> Option<serde_json::Value> {
    let mut cmd = Command::new("watchman");
    if let Some(sock) = std::env::var_os("WATCHMAN_SOCK").filter(|s| !s.is_empty()) {
        cmd.arg("--sockname").arg(sock);
    }
    let mut child = cmd
        .args(["--no-spawn", "--no-local", "--no-pretty", "-j"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    let body = serde_json::to_vec(command).ok()?;
    let wrote = child.stdin.take().map(|mut s| s.write_all(&body));
    let out = child.wait_with_output().ok()?;
    if !matches!(wrote, Some(Ok(()))) || !out.status.success() {
        return None;
    }
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).ok()?;
    v.get("error").is_none().then_some(v)
}

/// How long Watchman may take to see every change made before a question.
const SYNC_MS: u64 = 5000;

/// Watchman's clock for `workdir` now (after it has seen every change made before).
pub(super) fn clock(workdir: &Path) -> Option<String> {
    let v = ask(&serde_json::json!(["clock", workdir, {"sync_timeout": SYNC_MS}]))?;
    v["clock"].as_str().map(str::to_string)
}

/// The paths under `workdir` Watchman saw change since `clock` (created, written,
/// deleted, renamed; folders too), with its clock now; `None` when it cannot tell.
fn since(workdir: &Path, clock: &str) -> Option<(Vec<String>, String)> {
    let query = serde_json::json!(["query", workdir, {
        "since": clock,
        "fields": ["name"],
        "empty_on_fresh_instance": true,
        "sync_timeout": SYNC_MS,
    }]);
    let v = ask(&query)?;
    if v["is_fresh_instance"].as_bool() != Some(false) {
        return None;
    }
    let now = v["clock"].as_str()?.to_string();
    let paths = v["files"]
        .as_array()?
        .iter()
        .map(|f| f.as_str().map(str::to_string))
        .collect::<Option<Vec<_>>>()?;
    Some((paths, now))
}

/// The trailing checksum of the index file at `path` (hex), empty when it has none.
pub(super) fn index_sum(path: &Path, kind: gix::hash::Kind) -> String {
    let len = kind.len_in_bytes();
    let mut buf = vec![0u8; len];
    let read = std::fs::File::open(path).and_then(|mut f| {
        f.seek(std::io::SeekFrom::End(-(len as i64)))?;
        f.read_exact(&mut buf)
    });
    if read.is_err() || buf.iter().all(|b| *b == 0) {
        return String::new();
    }
    buf.iter().map(|b| format!("{b:02x}")).collect()
}

/// A digest of the index's entries (see [`Mark::entries`]): two hashes of them, 96 bits.
pub(super) fn entries_digest(index: &gix::index::State) -> String {
    let mut sip = std::hash::DefaultHasher::new();
    let mut crc = crc32fast::Hasher::new();
    for e in index.entries() {
        let path: &[u8] = e.path(index);
        let fixed = [
            &(path.len() as u64).to_le_bytes()[..],
            &e.mode.bits().to_le_bytes()[..],
            &e.flags.bits().to_le_bytes()[..],
        ];
        for part in fixed.into_iter().chain([path, e.id.as_bytes()]) {
            sip.write(part);
            crc.update(part);
        }
    }
    format!("{:016x}{:08x}", sip.finish(), crc.finalize())
}

/// The stat data of the ignore files git reads outside the work tree: the common
/// dir's `info/exclude` and the user's (`core.excludesFile`, else the default
/// `$XDG_CONFIG_HOME/git/ignore` or `~/.config/git/ignore`).
pub(super) fn excludes_stamp(repo: &Repo) -> String {
    let config = repo.git.config_snapshot();
    let mut files = vec![repo.common_dir.join("info").join("exclude")];
    let named = config.trusted_path("core.excludesFile").ok().flatten();
    match named {
        Some(p) => files.push(p),
        None => match std::env::var_os("XDG_CONFIG_HOME").filter(|v| !v.is_empty()) {
            Some(xdg) => files.push(Path::new(&xdg).join("git").join("ignore")),
            None => {
                if let Some(home) = std::env::var_os("HOME") {
                    files.push(Path::new(&home).join(".config/git/ignore"));
                }
            }
        },
    }
    let mut h = std::hash::DefaultHasher::new();
    for f in &files {
        use std::os::unix::fs::MetadataExt as _;
        h.write(f.as_os_str().as_encoded_bytes());
        match std::fs::metadata(f) {
            Ok(m) => {
                for n in [m.mtime(), m.mtime_nsec(), m.ctime(), m.ctime_nsec()] {
                    h.write_i64(n);
                }
                h.write_u64(m.ino());
                h.write_u64(m.size());
            }
            Err(_) => h.write_u8(0),
        }
    }
    format!("{:016x}", h.finish())
}

/// The last record: the files it saw that did not match its index, the index's paths
/// that were no files, and its mark.
pub(super) struct Prev {
    pub files: Tree,
    pub absent: BTreeSet<String>,
    pub mark: Option<Mark>,
}

/// What the record brought up to date holds: as [`Prev`], and the mark to keep.
pub(super) struct Fresh {
    pub files: Tree,
    pub absent: BTreeSet<String>,
    pub mark: Mark,
    /// Files read (their bytes, to keep in the object database).
    pub read: Vec<Vec<u8>>,
}

/// The record of the work tree now from `prev` and what Watchman saw change since
/// its mark; `None` when the full look is needed (see the module docs). `index` is the
/// index file the new record goes with (a link to the repository's, taken first).
pub(super) fn take_since(repo: &Repo, prev: &Prev, index: &Path) -> Option<Fresh> {
    let mark = prev.mark.as_ref()?;
    if !enabled(repo) {
        return None;
    }
    let kind = repo.git.object_hash();
    let index_sum = index_sum(index, kind);
    let mut parsed: Option<gix::index::File> = None;
    if index_sum.is_empty() || index_sum != mark.index_sum {
        // Rewritten (a `git status` refreshing stat data, an add): the same entries
        // keep every file the record did not look at as it was.
        let file = open_index(index, kind)?;
        if entries_digest(&file) != mark.entries {
            return None;
        }
        parsed = Some(file);
    }
    if excludes_stamp(repo) != mark.excludes {
        return None;
    }
    let (changed, clock) = since(&repo.workdir, &mark.clock)?;
    let changed: Vec<String> = changed
        .into_iter()
        .filter(|p| !p.split('/').any(|c| c == ".git"))
        .collect();
    if changed
        .iter()
        .any(|p| p == ".gitignore" || p.ends_with("/.gitignore"))
    {
        return None;
    }
    let mut files = prev.files.clone();
    let mut absent = prev.absent.clone();
    let mut read = Vec::new();
    if !changed.is_empty() {
        let index = match parsed {
            Some(f) => f,
            None => open_index(index, kind)?,
        };
        let paths = with_what_was_under(&changed, &index, &prev.files, &prev.absent, repo);
        let mut ignored = Ignored::new(repo, &index)?;
        for path in paths {
            files.remove(&path);
            absent.remove(&path);
            let in_index = index.entry_index_by_path(path.as_bytes().into()).is_ok();
            let tracked = index
                .entry_by_path_and_stage(
                    path.as_bytes().into(),
                    gix::index::entry::Stage::Unconflicted,
                )
                .is_some();
            if !tracked && !in_index && ignored.is(&path) {
                continue;
            }
            let found = tracked || !in_index;
            let seen = found
                .then(|| super::seen_now(&repo.workdir, kind, path.clone(), None, &prev.files))
                .flatten();
            match seen {
                Some((path, seen, bytes)) => {
                    read.extend(bytes);
                    files.insert(path, seen);
                }
                None if in_index => {
                    absent.insert(path);
                }
                None => {}
            }
        }
    }
    let mark = Mark {
        clock,
        index_sum,
        ..mark.clone()
    };
    Some(Fresh {
        files,
        absent,
        mark,
        read,
    })
}

/// The index file at `path`.
pub(super) fn open_index(path: &Path, kind: gix::hash::Kind) -> Option<gix::index::File> {
    gix::index::File::at(path, kind, false, gix::index::decode::Options::default()).ok()
}

/// `changed` and, under each that is no folder now (a folder deleted or renamed away),
/// every path the record knew there: Watchman names a folder that went, and may not
/// name each file it held.
fn with_what_was_under(
    changed: &[String],
    index: &gix::index::State,
    files: &Tree,
    absent: &BTreeSet<String>,
    repo: &Repo,
) -> BTreeSet<String> {
    let mut out: BTreeSet<String> = changed.iter().cloned().collect();
    for path in changed {
        if repo.workdir.join(path).is_dir() {
            continue;
        }
        let dir = format!("{path}/");
        let under = |p: &&String| p.starts_with(&dir);
        out.extend(
            files
                .range(dir.clone()..)
                .map(|(p, _)| p)
                .take_while(under)
                .cloned(),
        );
        out.extend(absent.range(dir.clone()..).take_while(under).cloned());
        if let Some(range) = index.prefixed_entries_range(dir.as_bytes().into()) {
            for e in &index.entries()[range] {
                if let Ok(p) = std::str::from_utf8(e.path(index)) {
                    out.insert(p.to_string());
                }
            }
        }
    }
    out
}

/// Whether an untracked path is one the walk leaves out: ignored (itself or a folder
/// above it), or in a repository nested in the work tree.
struct Ignored<'r> {
    stack: gix::AttributeStack<'r>,
    workdir: &'r Path,
    /// Folders already looked at: left out or not.
    dirs: BTreeMap<String, bool>,
}

impl<'r> Ignored<'r> {
    fn new(repo: &'r Repo, index: &gix::index::State) -> Option<Ignored<'r>> {
        let stack = repo
            .git
            .excludes(
                index,
                None,
                gix::worktree::stack::state::ignore::Source::WorktreeThenIdMappingIfNotSkipped,
            )
            .ok()?;
        Some(Ignored {
            stack,
            workdir: &repo.workdir,
            dirs: BTreeMap::new(),
        })
    }

    fn is(&mut self, path: &str) -> bool {
        let mut end = 0;
        while let Some(slash) = path[end..].find('/') {
            end += slash;
            let dir = &path[..end];
            end += 1;
            let out = match self.dirs.get(dir) {
                Some(out) => *out,
                None => {
                    let out = self.workdir.join(dir).join(".git").exists()
                        || self.excluded(dir, gix::index::entry::Mode::DIR);
                    self.dirs.insert(dir.to_string(), out);
                    out
                }
            };
            if out {
                return true;
            }
        }
        self.excluded(path, gix::index::entry::Mode::FILE)
    }

    fn excluded(&mut self, path: &str, mode: gix::index::entry::Mode) -> bool {
        self.stack
            .at_path(path, Some(mode))
            .map(|p| p.is_excluded())
            // Not known: left out, as a file the record cannot name.
            .unwrap_or(true)
    }
}
