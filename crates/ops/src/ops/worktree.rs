/*!
The throwaway checkout a user's command runs in: `verify`'s check and the command of
a command preview (`run`).

A folder in the system's temporary folder holds a work tree whose `.git` is a git dir
of its own, made for the run and removed with the folder:

* the repository's objects are borrowed through `objects/info/alternates` (nothing is
  copied; what the command writes stays in the throwaway's own object folder);
* the refs are copied (git-astedit's own under `refs/astedit` excepted), and so is the
  list of a shallow clone's cut-off commits; HEAD is on the same branch as the
  repository's when that branch is at the commit checked out (detached otherwise, and
  unborn as the repository's is);
* the config is the repository's local config, plus what the repository's location
  made the user's global config include (`includeIf "gitdir:…"`, often an identity
  kept per folder), without what describes the repository's layout; the user's global
  and system config apply as git reads them;
* the index is the commit's tree.

So `git status`, `git diff`, `git log`, `git describe` and a code generator's
`git rev-parse` answer as in the user's repository, while a hook, a config entry, a
ref or a commit the command makes lands in the throwaway git dir and goes with it.
The command itself is not confined: it runs with the user's rights and can write
anywhere they can (`~/.bashrc`, or the repository by its absolute path).
*/

use std::path::Path;
use std::path::PathBuf;
use std::process::Command;
use std::process::Stdio;

use crate::error::Classify;
use crate::error::Exit;
use crate::repo::Repo;
use crate::supervise::WORKTREE_PREFIX;
use crate::Error;

/// Local config keys not copied: they describe the repository's layout (or are
/// written by `git init` already), and would point the throwaway elsewhere.
const LAYOUT_KEYS: &[&str] = &[
    "core.worktree",
    "core.bare",
    "core.repositoryformatversion",
    "core.sparsecheckout",
    "core.sparsecheckoutcone",
    "core.splitindex",
    "core.sharedrepository",
    "index.sparse",
    "include.path",
];

/// Set last in the throwaway's config: no file-system monitor daemon and no
/// background `gc` started for a folder about to go.
const FORCED: &[(&str, &str)] = &[
    ("core.fsmonitor", "false"),
    ("gc.auto", "0"),
    ("maintenance.auto", "false"),
];

/// The throwaway checkout could not be made.
#[derive(Debug, thiserror::Error)]
#[error("cannot make the worktree to run the command in: {detail}")]
pub struct WorktreeError {
    pub detail: String,
}

impl Classify for WorktreeError {
    fn code(&self) -> &'static str {
        "verify-worktree"
    }
    fn exit(&self) -> Exit {
        Exit::Internal
    }
}

/// A work tree with a throwaway git dir of its own in the temporary folder, removed on
/// drop (see the module docs).
pub struct Worktree {
    holder: tempfile::TempDir,
    /// The work tree (its `.git` is the throwaway git dir).
    pub dir: PathBuf,
}

impl Worktree {
    /// Makes the throwaway at `base` (a commit id; none: an unborn branch). With
    /// `checkout`, the commit's files are written (`verify`); without, only its index
    /// is made and the caller fills the folder (`run` copies the user's files).
    pub fn add(repo: &Repo, base: Option<&str>, checkout: bool) -> Result<Worktree, Error> {
        // The base comes from a preview's metadata: only an object id may reach git's
        // argv, never something it could read as an option.
        if let Some(base) = base {
            if base.is_empty() || !base.bytes().all(|b| b.is_ascii_hexdigit()) {
                return Err(failed(format!(
                    "the preview's base '{base}' is not a commit id"
                )));
            }
        }
        // The pid in the name tells a later run whether its owner is still alive.
        let holder = tempfile::Builder::new()
            .prefix(&format!("{WORKTREE_PREFIX}{}-", std::process::id()))
            .tempdir()
            .map_err(|e| failed(e.to_string()))?;
        let dir = holder.path().join("tree");
        std::fs::create_dir(&dir).map_err(|e| failed(e.to_string()))?;
        let tree = Worktree { holder, dir };
        let mut init = tree.git();
        init.args(["init", "--quiet", "--template="])
            .arg(format!("--object-format={}", repo.git.object_hash()));
        run_git(&mut init, "init")?;
        let git_dir = tree.dir.join(".git");
        borrow_objects(repo, &git_dir)?;
        let refs = copy_refs(repo, &git_dir)?;
        set_head(repo, &git_dir, base, &refs)?;
        write_config(repo, &tree)?;
        if let Some(base) = base {
            let mut read = tree.git();
            read.arg("read-tree");
            if checkout {
                read.args(["--reset", "-u"]);
            }
            run_git(read.arg(base), "read-tree")?;
        }
        Ok(tree)
    }

    /// The folder holding the work tree and nothing else of the user's (removed whole
    /// by the supervisor of a run killed outright).
    pub fn holder(&self) -> &Path {
        self.holder.path()
    }

    /// `git` in the work tree, with the throwaway git dir and nothing of the user's
    /// repository's location in its environment.
    pub fn git(&self) -> Command {
        let mut c = Command::new("git");
        c.arg("-C").arg(&self.dir).stdin(Stdio::null());
        scrub_repo_env(&mut c);
        c
    }
}

/// Removes from `cmd`'s environment what would point git at the user's repository
/// (git-astedit run from a hook has `GIT_DIR` and `GIT_INDEX_FILE` set): for the
/// command and every git run in the throwaway.
pub fn scrub_repo_env(cmd: &mut Command) {
    for name in crate::repo::REPOSITORY_VARS {
        cmd.env_remove(name);
    }
}

fn failed(detail: String) -> Error {
    WorktreeError { detail }.into()
}

/// Runs `cmd` (a git of ours), failing with its stderr.
fn run_git(cmd: &mut Command, what: &str) -> Result<Vec<u8>, Error> {
    let out = cmd
        .stdin(Stdio::null())
        .output()
        .map_err(|e| failed(format!("git {what}: {e}")))?;
    if !out.status.success() {
        return Err(failed(format!(
            "git {what}: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    Ok(out.stdout)
}

/// `git` in the user's repository (read only: listing its refs and config).
fn user_git(repo: &Repo) -> Command {
    let mut c = Command::new("git");
    c.arg("-C").arg(&repo.workdir).env_remove("GIT_INDEX_FILE");
    c
}

/// Points the throwaway's object store at the repository's, and copies the list of a
/// shallow clone's cut-off commits (without it, history walks fail at them).
fn borrow_objects(repo: &Repo, git_dir: &Path) -> Result<(), Error> {
    let objects = repo.common_dir.join("objects");
    let objects = std::fs::canonicalize(&objects).unwrap_or(objects);
    let info = git_dir.join("objects").join("info");
    let io = |e: std::io::Error| failed(format!("objects/info/alternates: {e}"));
    std::fs::create_dir_all(&info).map_err(io)?;
    let mut line = objects.into_os_string().into_encoded_bytes();
    line.push(b'\n');
    std::fs::write(info.join("alternates"), line).map_err(io)?;
    match std::fs::read(repo.common_dir.join("shallow")) {
        Ok(bytes) => std::fs::write(git_dir.join("shallow"), bytes)
            .map_err(|e| failed(format!("shallow: {e}")))?,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(failed(format!("shallow: {e}"))),
    }
    Ok(())
}

/// Copies the repository's refs (but git-astedit's own) into the throwaway's
/// `packed-refs`; returns them, name and id, sorted by name.
fn copy_refs(repo: &Repo, git_dir: &Path) -> Result<Vec<(String, String)>, Error> {
    let mut list = user_git(repo);
    list.args(["for-each-ref", "--format=%(objectname) %(refname)"]);
    let out = run_git(&mut list, "for-each-ref")?;
    let mut refs: Vec<(String, String)> = String::from_utf8_lossy(&out)
        .lines()
        .filter_map(|l| l.split_once(' '))
        .map(|(id, name)| (name.to_string(), id.to_string()))
        .filter(|(name, _)| {
            !name.starts_with("refs/astedit/") && !name.starts_with("refs/astedit-journal")
        })
        .collect();
    refs.sort();
    let mut packed = String::from("# pack-refs with: sorted \n");
    for (name, id) in &refs {
        packed.push_str(&format!("{id} {name}\n"));
    }
    std::fs::write(git_dir.join("packed-refs"), packed)
        .map_err(|e| failed(format!("packed-refs: {e}")))?;
    Ok(refs)
}

/// HEAD on the repository's branch when it is at `base` (or both are unborn), else
/// detached at `base`.
fn set_head(
    repo: &Repo,
    git_dir: &Path,
    base: Option<&str>,
    refs: &[(String, String)],
) -> Result<(), Error> {
    let mut symbolic = user_git(repo);
    symbolic.args(["symbolic-ref", "-q", "HEAD"]);
    let branch = symbolic
        .stdin(Stdio::null())
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .filter(|b| b.starts_with("refs/heads/"));
    let at = |b: &String| refs.iter().find(|(n, _)| n == b).map(|(_, id)| id.as_str());
    let head = match (base, branch) {
        (None, Some(b)) => format!("ref: {b}\n"),
        (None, None) => "ref: refs/heads/main\n".to_string(),
        (Some(base), Some(b)) if at(&b) == Some(base) => format!("ref: {b}\n"),
        (Some(base), _) => format!("{base}\n"),
    };
    std::fs::write(git_dir.join("HEAD"), head).map_err(|e| failed(format!("HEAD: {e}")))
}

/// One entry of `git config --list -z --show-scope`.
#[derive(Debug, Clone, PartialEq, Eq)]
struct ConfigEntry {
    scope: Vec<u8>,
    key: String,
    value: Option<Vec<u8>>,
}

impl ConfigEntry {
    fn local(&self) -> bool {
        self.scope == b"local" || self.scope == b"worktree"
    }
    /// Read by git from the user's own files (not `-c` on the command line).
    fn users(&self) -> bool {
        self.scope == b"global" || self.scope == b"system"
    }
    fn copied(&self) -> bool {
        let k = self.key.to_ascii_lowercase();
        !(LAYOUT_KEYS.contains(&k.as_str())
            || k.starts_with("extensions.")
            || (k.starts_with("includeif.") && k.ends_with(".path")))
    }
}

fn list_config(mut cmd: Command) -> Result<Vec<ConfigEntry>, Error> {
    cmd.args(["config", "--list", "-z", "--show-scope"]);
    let out = cmd
        .stdin(Stdio::null())
        .output()
        .map_err(|e| failed(format!("git config: {e}")))?;
    // Exit 1 with nothing listed is an empty config.
    let mut fields = out.stdout.split(|b| *b == 0);
    let mut entries = Vec::new();
    while let (Some(scope), Some(item)) = (fields.next(), fields.next()) {
        let (key, value) = match item.iter().position(|b| *b == b'\n') {
            Some(at) => (&item[..at], Some(item[at + 1..].to_vec())),
            None => (item, None),
        };
        entries.push(ConfigEntry {
            scope: scope.to_vec(),
            key: String::from_utf8_lossy(key).into_owned(),
            value,
        });
    }
    Ok(entries)
}

/// Writes the throwaway's config (see the module docs): after what `git init` wrote,
/// what the user's global config includes only for the repository's location, then
/// the repository's local entries, then [`FORCED`].
fn write_config(repo: &Repo, tree: &Worktree) -> Result<(), Error> {
    let users = list_config(user_git(repo))?;
    let mut seen_here: Vec<ConfigEntry> = list_config(tree.git())?
        .into_iter()
        .filter(ConfigEntry::users)
        .collect();
    let mut entries = Vec::new();
    for e in users.iter().filter(|e| e.users()) {
        match seen_here.iter().position(|s| s == e) {
            Some(at) => {
                seen_here.remove(at);
            }
            None => entries.push(e.clone()),
        }
    }
    let lfs = repo.common_dir.join("lfs");
    if lfs.is_dir() {
        // Large files already fetched are read from the repository's store.
        entries.push(ConfigEntry {
            scope: b"local".to_vec(),
            key: "lfs.storage".into(),
            value: Some(lfs.into_os_string().into_encoded_bytes()),
        });
    }
    entries.extend(users.iter().filter(|e| e.local()).cloned());
    entries.retain(ConfigEntry::copied);
    entries.extend(FORCED.iter().map(|(k, v)| ConfigEntry {
        scope: b"local".to_vec(),
        key: k.to_string(),
        value: Some(v.as_bytes().to_vec()),
    }));
    let path = tree.dir.join(".git").join("config");
    let io = |e: std::io::Error| failed(format!("config: {e}"));
    let mut text = std::fs::read(&path).map_err(io)?;
    for e in &entries {
        text.extend(config_lines(e));
    }
    std::fs::write(&path, text).map_err(io)
}

/// `e` as a config file's lines: a section header and the entry, quoted so that any
/// value reads back as it was.
fn config_lines(e: &ConfigEntry) -> Vec<u8> {
    let (section, rest) = e.key.split_once('.').unwrap_or((&e.key, ""));
    let (sub, name) = match rest.rsplit_once('.') {
        Some((sub, name)) => (Some(sub), name),
        None => (None, rest),
    };
    let mut out = format!("[{section}").into_bytes();
    if let Some(sub) = sub {
        out.extend(b" \"");
        for b in sub.bytes() {
            if b == b'"' || b == b'\\' {
                out.push(b'\\');
            }
            out.push(b);
        }
        out.push(b'"');
    }
    out.extend(format!("]\n\t{name}").into_bytes());
    if let Some(value) = &e.value {
        out.extend(b" = \"");
        for &b in value {
            match b {
                b'"' => out.extend(b"\\\""),
                b'\\' => out.extend(b"\\\\"),
                b'\n' => out.extend(b"\\n"),
                b'\t' => out.extend(b"\\t"),
                8 => out.extend(b"\\b"),
                b => out.push(b),
            }
        }
        out.push(b'"');
    }
    out.push(b'\n');
    out
}

/// Removes the worktrees of runs that are gone (killed outright before their
/// supervisor could), and the linked worktrees earlier versions registered in the
/// repository for the same purpose. Best effort: a failure leaves them for next time.
pub fn remove_abandoned(repo: &Repo) {
    let temp = std::env::temp_dir();
    let temp = std::fs::canonicalize(&temp).unwrap_or(temp);
    if let Ok(entries) = std::fs::read_dir(&temp) {
        for entry in entries.flatten() {
            let path = entry.path();
            if abandoned(&path) {
                let _ = std::fs::remove_dir_all(&path);
            }
        }
    }
    let mut prune = user_git(repo);
    prune.args(["worktree", "prune"]);
    let _ = run_git(&mut prune, "worktree prune");
    let mut list = user_git(repo);
    list.args(["worktree", "list", "--porcelain"]);
    let Ok(listing) = run_git(&mut list, "worktree list") else {
        return;
    };
    for path in String::from_utf8_lossy(&listing)
        .lines()
        .filter_map(|l| l.strip_prefix("worktree "))
    {
        let path = Path::new(path);
        let Some(holder) = path.parent().filter(|h| h.parent() == Some(temp.as_path())) else {
            continue;
        };
        if !abandoned(holder) {
            continue;
        }
        let mut remove = user_git(repo);
        remove.args(["worktree", "remove", "--force", "--force"]);
        let _ = run_git(remove.arg(path), "worktree remove");
        let _ = std::fs::remove_dir_all(holder);
    }
}

/// Whether `holder` is a worktree folder of ours whose git-astedit is gone.
fn abandoned(holder: &Path) -> bool {
    holder
        .file_name()
        .and_then(|n| n.to_str())
        .and_then(|n| n.strip_prefix(WORKTREE_PREFIX))
        .and_then(|rest| rest.split('-').next())
        .and_then(|pid| pid.parse::<i32>().ok())
        .is_some_and(|pid| !process_alive(pid))
}

#[cfg(unix)]
pub(super) fn process_alive(pid: i32) -> bool {
    // SAFETY: kill(2) with signal 0 only checks that the process exists.
    let r = unsafe { libc::kill(pid, 0) };
    r == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

#[cfg(not(unix))]
pub(super) fn process_alive(_: i32) -> bool {
    // Without a way to tell, a worktree is never taken for abandoned.
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn config_lines_quote_what_git_would_misread() {
        let e = ConfigEntry {
            scope: b"local".to_vec(),
            key: "url.ssh://a.b/x\"y.insteadof".into(),
            value: Some(b"say \"hi\"\\\n#not a comment".to_vec()),
        };
        assert_eq!(
            String::from_utf8(config_lines(&e)).unwrap(),
            "[url \"ssh://a.b/x\\\"y\"]\n\tinsteadof = \"say \\\"hi\\\"\\\\\\n#not a comment\"\n"
        );
        let bare = ConfigEntry {
            scope: b"local".to_vec(),
            key: "core.ignorecase".into(),
            value: None,
        };
        assert_eq!(
            String::from_utf8(config_lines(&bare)).unwrap(),
            "[core]\n\tignorecase\n"
        );
    }

    #[test]
    fn layout_keys_are_not_copied() {
        let entry = |key: &str| ConfigEntry {
            scope: b"local".to_vec(),
            key: key.into(),
            value: None,
        };
        assert!(!entry("core.worktree").copied());
        assert!(!entry("extensions.objectformat").copied());
        assert!(!entry("includeIf.gitdir:~/w/.path").copied());
        assert!(entry("user.name").copied());
        assert!(entry("remote.origin.url").copied());
    }
}
