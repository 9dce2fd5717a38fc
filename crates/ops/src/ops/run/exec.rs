/*!
The command of a `run` preview executed in a worktree of its own, and what it changed
there as a [`ChangeSet`] against the user's work tree.

The worktree is a throwaway checkout at HEAD with a git dir of its own
([`crate::ops::worktree`]: the repository's objects borrowed, its refs, HEAD and
local config copied, an index of HEAD), into which the user's work tree is copied:
every tracked and untracked, not ignored file as it is now (changed, executable or a
symlink; a deleted one is not there). So the command sees what the user sees,
git-aware tools included, while the user's tree is never written and nothing the
command writes under `.git` (a hook, the config, a ref) reaches the user's repository.
Every path is checked as apply checks it before it is copied in or read back: a file
beyond a symlink (or a file) on its way is not read, nor written through.

Afterwards the worktree's files, as the user's repository lists them (tracked and
untracked, not ignored), are compared with what was copied in: a file whose bytes or
mode differ, a new file and a removed one make the change (git never lists what is
under a `.git`, so nothing there is). A command that changed the throwaway
repository's HEAD (a commit), refs (a tag, a branch) or config is refused, as a change
no preview can hold (nothing of it reaches the user's repository either way), and so,
unless allowed, is one that exited non-zero: nothing is staged then. When the command
ends, whatever it left running is killed ([`crate::supervise`]).

[`execute`] is shared by `run` and the refresh of a `run` preview, which re-executes
the recorded [`Recipe`] on the tree as it is then.
*/

use std::collections::BTreeMap;
use std::collections::BTreeSet;
use std::collections::HashSet;
use std::path::Path;
use std::path::PathBuf;
use std::process::Command;
use std::process::Stdio;
use std::time::Duration;

use crate::cancel::Cancel;
use crate::change::ChangeSet;
use crate::change::FileChange;
use crate::change::FileContent;
use crate::change::FileMode;
use crate::error::Classify;
use crate::error::Exit;
use crate::ops::recipe::insert_detail_at;
use crate::ops::recipe::Recorded;
use crate::ops::verify;
use crate::ops::verify::VerifyCommand;
use crate::ops::worktree::Worktree;
use crate::ops::worktree::WorktreeError;
use crate::repo::Repo;
use crate::report::run::RunFacts;
use crate::Error;

/// Where a preview's metadata keeps how its command ended (under `details`).
const FACTS_KEY: &str = "run";
/// Lines of output the preview's record keeps (the report keeps more).
const RECORDED_LINES: usize = 20;
/// Bytes of output the preview's record keeps at most.
const RECORDED_BYTES: usize = 4096;

/// What re-runs a `run`: the command, where it ran, which paths it may change.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Recipe {
    /// The program and its arguments (no shell).
    pub argv: Vec<String>,
    /// The folder it ran in, as a repository path (`""`: the top).
    pub prefix: String,
    /// Git pathspecs, relative to `prefix`; none: every change counts.
    #[serde(default)]
    pub pathspecs: Vec<String>,
    /// A non-zero exit still stages what it changed.
    #[serde(default)]
    pub allow_failure: bool,
    /// Killed (with what it started) after this many seconds.
    pub timeout_secs: u64,
}

impl Recipe {
    /// The command as a person would type it.
    pub fn display(&self) -> String {
        VerifyCommand::Argv(self.argv.clone()).display()
    }

    /// Records the recipe and how the command ended in `meta.details`.
    pub fn record_with(&self, meta: &mut crate::change::PreviewMeta, facts: &RunFacts) {
        self.record(meta);
        insert_detail_at(
            meta,
            FACTS_KEY,
            serde_json::json!({
                "command": facts.command,
                "exit_code": facts.exit_code,
                "signal": facts.signal,
                "timed_out": facts.timed_out,
                "duration_ms": facts.duration_ms,
                "output_tail": recorded_tail(&facts.output),
                "left_out": facts.left_out,
            }),
        );
    }
}

impl Recorded for Recipe {}

/// The end of `output` a preview's record keeps: its last lines, at most 4 KiB.
fn recorded_tail(output: &str) -> String {
    let lines: Vec<&str> = output.lines().collect();
    let mut tail = lines[lines.len().saturating_sub(RECORDED_LINES)..].join("\n");
    if tail.len() > RECORDED_BYTES {
        let mut cut = tail.len() - RECORDED_BYTES;
        while !tail.is_char_boundary(cut) {
            cut += 1;
        }
        tail = tail[cut..].to_string();
    }
    tail
}

/// Why a `run` staged nothing.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error("the command to run is empty")]
    Empty,
    #[error("cannot run `{command}`: {message}")]
    Spawn {
        command: String,
        message: String,
        not_found: bool,
    },
    #[error("`{command}` {how}; nothing was staged")]
    Failed {
        command: String,
        how: String,
        /// The end of what it printed.
        output: String,
    },
    #[error("`{command}` wrote under .git ({}); nothing was staged", .what.join(", "))]
    TouchedGit { command: String, what: Vec<String> },
    #[error("the run preview {0} recorded no command to re-run")]
    NoRecipe(String),
}

impl Classify for RunError {
    fn code(&self) -> &'static str {
        match self {
            RunError::Empty => "usage",
            RunError::Spawn { .. } => "run-spawn",
            RunError::Failed { .. } => "run-failed",
            RunError::TouchedGit { .. } => "run-touched-git",
            RunError::NoRecipe(_) => "run-no-recipe",
        }
    }
    fn exit(&self) -> Exit {
        match self {
            RunError::Empty | RunError::NoRecipe(_) => Exit::BadInput,
            RunError::Spawn { not_found, .. } if *not_found => Exit::BadInput,
            RunError::Spawn { .. } => Exit::Internal,
            // A command that fails, as a failing check does.
            RunError::Failed { .. } => Exit::NothingFound,
            RunError::TouchedGit { .. } => Exit::Refused,
        }
    }
    fn hint(&self) -> Option<String> {
        match self {
            RunError::Empty => {
                Some("give the command after `--`: `git astedit run -- CMD ARG…`".into())
            }
            RunError::Spawn { .. } => Some(
                "the command runs as given, not through a shell; for a shell line use \
                 `sh -c '…'`"
                    .into(),
            ),
            RunError::Failed { output, .. } => {
                let mut hint = "the work tree is unchanged; --allow-failure stages what a \
                                failing command changed"
                    .to_string();
                let lines: Vec<&str> = output.lines().collect();
                let tail = &lines[lines.len().saturating_sub(10)..];
                if !tail.is_empty() {
                    hint.push_str("; its output ended with:");
                    for line in tail {
                        hint.push_str(&format!("\n    {}", crate::text::escape_line(line)));
                    }
                }
                Some(hint)
            }
            RunError::TouchedGit { .. } => Some(
                "the work tree and the repository are unchanged (the command ran with a \
                 throwaway git dir); a command that commits, moves HEAD or edits the \
                 repository's config is not a change a preview can hold"
                    .into(),
            ),
            RunError::NoRecipe(id) => Some(format!(
                "discard it (`git astedit discard {id}`) and run the command again"
            )),
        }
    }
    fn details(&self) -> Option<serde_json::Value> {
        match self {
            RunError::Failed {
                command, output, ..
            } => Some(serde_json::json!({ "command": command, "output": output })),
            RunError::TouchedGit { command, what } => {
                Some(serde_json::json!({ "command": command, "touched": what }))
            }
            _ => None,
        }
    }
}

/// What an execution found.
pub struct Executed {
    /// The changes within the pathspecs, sorted by path.
    pub changes: ChangeSet,
    /// How the command ended (`left_out` counted, `verified` unset).
    pub facts: RunFacts,
}

/// One path of the user's tree as it was copied into the worktree.
struct Before {
    id: gix::ObjectId,
    mode: FileMode,
    /// The bytes, when the object database does not hold them already (an untracked
    /// or modified file).
    kept: Option<Vec<u8>>,
}

/// Runs `recipe` in a worktree of the current work tree and returns what it changed
/// there (see the module docs). Refuses a recorded folder outside the repository, a
/// command that wrote to its repository, and one that failed unless
/// `recipe.allow_failure`.
pub fn execute(repo: &Repo, recipe: &Recipe, cancel: &Cancel) -> Result<Executed, Error> {
    if recipe.argv.is_empty() || recipe.argv[0].is_empty() {
        return Err(RunError::Empty.into());
    }
    // Before anything is made or run: a refreshed preview's folder and pathspecs are
    // recorded data (the trust gate checked them; so does this, whoever calls).
    crate::ops::trust::folder_contained(repo, &recipe.prefix, &recipe.pathspecs).map_err(
        |(what, path, why)| crate::txn::Error::Refused {
            path,
            why: format!("{what} of the command is outside the repository ({why})"),
        },
    )?;
    let command = recipe.display();
    crate::ops::worktree::remove_abandoned(repo);
    let head = repo.head_commit().map(|id| id.to_string());
    // Held until the worktree is gone, as `verify` holds it.
    let _stop = crate::cancel::StopSignals::catch();
    let cancel = &cancel.or_stopped();
    let tree = Worktree::add(repo, head.as_deref(), false)?;
    let snapshot = fill(repo, &tree)?;
    cancel.check()?;
    // Checked again where it runs: the copy holds no symlink on its way either.
    crate::txn::check_folder_contained_in(&tree.dir, &recipe.prefix, &mut HashSet::new())?;
    let guard = GitState::read(&tree);
    let cwd = tree.dir.join(&recipe.prefix);
    std::fs::create_dir_all(&cwd).map_err(|source| crate::error::IoError {
        action: "create",
        path: recipe.prefix.clone(),
        source,
    })?;
    let timeout = Duration::from_secs(recipe.timeout_secs.max(1));
    let argv = VerifyCommand::Argv(recipe.argv.clone());
    let ran = verify::run_command(&tree, &cwd, &argv, timeout, cancel)
        .map_err(|e| spawn_error(e, &command))?;
    let refused = |what: Vec<String>| -> Error {
        RunError::TouchedGit {
            command: command.clone(),
            what,
        }
        .into()
    };
    let touched = guard.changes(&GitState::read(&tree));
    if !touched.is_empty() {
        return Err(refused(touched));
    }
    let listed = list_files(repo, &tree)?;
    let mut all: BTreeSet<String> = snapshot.keys().cloned().collect();
    all.extend(listed);
    let touched: Vec<String> = all.iter().filter(|p| under_git(p)).cloned().collect();
    if !touched.is_empty() {
        return Err(refused(touched));
    }
    let mut facts = RunFacts {
        command: command.clone(),
        argv: recipe.argv.clone(),
        exit_code: ran.exit_code,
        signal: ran.signal,
        timed_out: ran.timed_out,
        duration_ms: ran.duration.as_millis().try_into().unwrap_or(u64::MAX),
        output: ran.output,
        output_truncated: ran.truncated,
        left_out: 0,
        verified: None,
    };
    if !facts.succeeded() && !recipe.allow_failure {
        return Err(RunError::Failed {
            command,
            how: facts.how(),
            output: facts.output,
        }
        .into());
    }
    let mut changed = changed_paths(repo, &tree.dir, &snapshot, &all)?;
    if !recipe.pathspecs.is_empty() {
        let at = Repo::discover_from(&repo.workdir.join(&recipe.prefix))?;
        let every: Vec<String> = all.iter().cloned().collect();
        let selected = crate::files::select_paths(&at, &recipe.pathspecs, &every)?;
        let before = changed.len();
        changed.retain(|c| selected.contains(&c.0));
        facts.left_out = before - changed.len();
    }
    let mut changes = ChangeSet::default();
    for (path, after) in changed {
        let before = match snapshot.get(&path) {
            None => None,
            Some(b) => Some(FileContent {
                bytes: match &b.kept {
                    Some(bytes) => bytes.clone(),
                    None => crate::txn::blob(repo, b.id)?,
                },
                mode: b.mode,
            }),
        };
        changes.changes.push(FileChange {
            path,
            before,
            after,
        });
    }
    changes.sort();
    drop(tree);
    Ok(Executed { changes, facts })
}

/// `3 files changed by `cargo fmt``, the command cut when long.
pub fn summary(files: usize, command: &str) -> String {
    const MAX: usize = 60;
    let shown = match command.char_indices().nth(MAX) {
        Some((at, _)) => format!("{}…", &command[..at]),
        None => command.to_string(),
    };
    format!(
        "{} changed by `{}`",
        crate::text::plural(files, "file"),
        crate::text::escape_line(&shown)
    )
}

/// A changed file's flags: `added` or `deleted` when it is.
pub fn flags(change: &FileChange) -> Vec<crate::change::FileFlag> {
    match (&change.before, &change.after) {
        (None, _) => vec![crate::change::FileFlag::Added],
        (_, None) => vec![crate::change::FileFlag::Deleted],
        _ => Vec::new(),
    }
}

/// The spawn failure of `verify`'s runner, said as `run`'s.
fn spawn_error(e: Error, command: &str) -> Error {
    match e.downcast_ref::<verify::VerifyError>() {
        Some(verify::VerifyError::Spawn { source, .. }) => RunError::Spawn {
            command: command.to_string(),
            message: source.to_string(),
            not_found: source.kind() == std::io::ErrorKind::NotFound,
        }
        .into(),
        _ => e,
    }
}

/// Whether a path lies under (or is) a `.git` of any folder.
fn under_git(path: &str) -> bool {
    path.trim_end_matches('/')
        .split('/')
        .any(|c| c.eq_ignore_ascii_case(".git"))
}

/// What the throwaway repository's state looks like: whether its `.git` is a folder,
/// its HEAD (the branch, the commit), its config file and its refs.
#[derive(PartialEq, Eq)]
struct GitState {
    dot_git: bool,
    head: Option<Vec<u8>>,
    config: Option<Vec<u8>>,
    refs: Option<Vec<u8>>,
}

impl GitState {
    fn read(tree: &Worktree) -> GitState {
        let out = |args: &[&str]| {
            let mut git = tree.git();
            git.args(args)
                .output()
                .ok()
                .filter(|o| o.status.success())
                .map(|o| o.stdout)
        };
        let dot_git = tree.dir.join(".git");
        let head = std::fs::read(dot_git.join("HEAD")).ok().map(|mut text| {
            text.extend(out(&["rev-parse", "--verify", "-q", "HEAD"]).unwrap_or_default());
            text
        });
        GitState {
            dot_git: std::fs::symlink_metadata(&dot_git).is_ok_and(|m| m.is_dir()),
            head,
            config: std::fs::read(dot_git.join("config")).ok(),
            refs: out(&["for-each-ref", "--format=%(refname) %(objectname)"]),
        }
    }

    /// What differs from `now`, in words.
    fn changes(&self, now: &GitState) -> Vec<String> {
        let mut what = Vec::new();
        if self.dot_git != now.dot_git {
            what.push(".git".to_string());
        }
        if self.head != now.head {
            what.push("HEAD moved".to_string());
        }
        if self.config != now.config {
            what.push("the repository's config".to_string());
        }
        if self.refs != now.refs {
            what.push("the repository's refs".to_string());
        }
        what
    }
}

/// Copies the user's work tree into the worktree and returns what it copied, by path;
/// then brings the worktree's index up to date with it. A path beyond a symlink in the
/// user's tree is not read (git sees no file there); one the copy would write through
/// a symlink is refused (exit 4).
fn fill(repo: &Repo, tree: &Worktree) -> Result<BTreeMap<String, Before>, Error> {
    let listed = ls_files(git_in(&repo.workdir), &["-c", "-o", "--exclude-standard"])?;
    let mut snapshot = BTreeMap::new();
    let (mut theirs, mut ours) = (HashSet::new(), HashSet::new());
    for path in &listed {
        let src = repo.workdir.join(path);
        let entry = match crate::txn::beyond_link(&repo.workdir, path, &mut theirs)? {
            Some(_) => Entry::Absent,
            None => read_entry(&src, path)?,
        };
        let content = match entry {
            Entry::Absent => continue,
            Entry::Folder => {
                // An empty folder (a submodule's) is there as in a checkout.
                if src.is_dir() {
                    contained(&tree.dir, &format!("{path}/."), &mut ours)?;
                    create_dir(&tree.dir.join(path), path)?;
                }
                continue;
            }
            Entry::File(content) => content,
        };
        contained(&tree.dir, path, &mut ours)?;
        write_entry(&tree.dir.join(path), &content, path)?;
        let id = blob_id(repo, &content.bytes)?;
        let kept = (!crate::txn::has_blob(repo, id)).then_some(content.bytes);
        snapshot.insert(
            path.clone(),
            Before {
                id,
                mode: content.mode,
                kept,
            },
        );
    }
    // The index records the files as they are now (`git diff` shows the user's edits
    // and nothing else); files that differ from it exit 1, which is no failure.
    let mut refresh = tree.git();
    refresh.args(["update-index", "-q", "--refresh"]);
    let _ = refresh.stdout(Stdio::null()).stderr(Stdio::null()).status();
    Ok(snapshot)
}

/// Refuses (exit 4) writing `path` under `root` through a symlink (or a file) on its
/// way: apply's containment check, without its limits on names (the copy writes what
/// the user has).
fn contained(root: &Path, path: &str, known: &mut HashSet<PathBuf>) -> Result<(), Error> {
    match crate::txn::beyond_link(root, path, known)? {
        Some(why) => Err(crate::txn::Error::Refused {
            path: path.trim_end_matches("/.").to_string(),
            why,
        }
        .into()),
        None => Ok(()),
    }
}

/// The worktree's paths after the command, tracked and untracked, not ignored, as the
/// user's repository lists them (its ignore rules and config; an empty index, so that
/// nothing the command did to the throwaway's index or excludes hides a file).
fn list_files(repo: &Repo, tree: &Worktree) -> Result<Vec<String>, Error> {
    let mut git = Command::new("git");
    git.arg("--git-dir")
        .arg(&repo.git_dir)
        .arg("--work-tree")
        .arg(&tree.dir)
        .args([
            "-c",
            "core.fsmonitor=false",
            "-c",
            "core.untrackedCache=false",
        ])
        .current_dir(&tree.dir);
    crate::ops::worktree::scrub_repo_env(&mut git);
    git.env("GIT_INDEX_FILE", tree.holder().join("empty-index"));
    ls_files(git, &["-o", "--exclude-standard"])
}

/// The paths whose worktree content differs from what was copied in, with that
/// content (`None`: removed, or beyond a symlink the command made).
fn changed_paths(
    repo: &Repo,
    dir: &Path,
    snapshot: &BTreeMap<String, Before>,
    all: &BTreeSet<String>,
) -> Result<Vec<(String, Option<FileContent>)>, Error> {
    let mut changed = Vec::new();
    let mut known = HashSet::new();
    for path in all {
        // A nested repository's folder (`ls-files -o` lists it with its `/`).
        if path.ends_with('/') {
            continue;
        }
        let now = match crate::txn::beyond_link(dir, path, &mut known)? {
            Some(_) => None,
            None => match read_entry(&dir.join(path), path)? {
                Entry::File(c) => Some(c),
                Entry::Absent | Entry::Folder => None,
            },
        };
        let same = match (snapshot.get(path), &now) {
            (None, None) => true,
            (Some(b), Some(c)) => b.mode == c.mode && blob_id(repo, &c.bytes)? == b.id,
            _ => false,
        };
        if !same {
            changed.push((path.clone(), now));
        }
    }
    Ok(changed)
}

/// The id `bytes` have as a blob (nothing written).
fn blob_id(repo: &Repo, bytes: &[u8]) -> Result<gix::ObjectId, Error> {
    gix::objs::compute_hash(repo.git.object_hash(), gix::objs::Kind::Blob, bytes).map_err(|e| {
        crate::error::IoError {
            action: "hash",
            path: "a work-tree file".into(),
            source: std::io::Error::other(e.to_string()),
        }
        .into()
    })
}

enum Entry {
    Absent,
    /// A folder (a submodule) or something else that is not a file.
    Folder,
    File(FileContent),
}

fn read_entry(abs: &Path, path: &str) -> Result<Entry, Error> {
    let io = |source| crate::error::IoError {
        action: "read",
        path: path.to_string(),
        source,
    };
    let meta = match std::fs::symlink_metadata(abs) {
        Ok(m) => m,
        Err(e)
            if matches!(
                e.kind(),
                std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory
            ) =>
        {
            return Ok(Entry::Absent)
        }
        Err(e) => return Err(io(e).into()),
    };
    let mode = FileMode::from_metadata(&meta);
    let bytes = if meta.file_type().is_symlink() {
        let target = std::fs::read_link(abs).map_err(io)?;
        target.to_string_lossy().into_owned().into_bytes()
    } else if meta.is_file() {
        std::fs::read(abs).map_err(io)?
    } else {
        return Ok(Entry::Folder);
    };
    Ok(Entry::File(FileContent { bytes, mode }))
}

fn create_dir(dst: &Path, path: &str) -> Result<(), Error> {
    std::fs::create_dir_all(dst).map_err(|source| {
        crate::error::IoError {
            action: "create",
            path: path.to_string(),
            source,
        }
        .into()
    })
}

/// Writes a file the worktree does not have yet (the copy starts from an empty
/// folder; its folders were checked by [`contained`]).
fn write_entry(dst: &Path, content: &FileContent, path: &str) -> Result<(), Error> {
    let io = |source| crate::error::IoError {
        action: "write",
        path: path.to_string(),
        source,
    };
    if let Some(parent) = dst.parent() {
        std::fs::create_dir_all(parent).map_err(io)?;
    }
    if content.mode == FileMode::Symlink {
        #[cfg(unix)]
        {
            let target = String::from_utf8_lossy(&content.bytes).into_owned();
            std::os::unix::fs::symlink(target, dst).map_err(io)?;
            return Ok(());
        }
    }
    // `create_new`: never through whatever might be there.
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(dst)
        .map_err(io)?;
    std::io::Write::write_all(&mut file, &content.bytes).map_err(io)?;
    drop(file);
    verify::set_mode(dst, content.mode).map_err(io)?;
    Ok(())
}

/// `git` run in `dir` (its own repository: no GIT_DIR or GIT_WORK_TREE from ours).
fn git_in(dir: &Path) -> Command {
    let mut c = Command::new("git");
    c.arg("-C")
        .arg(dir)
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE");
    c
}

/// `git ls-files -z ARGS`, the paths it printed (deduplicated, in order).
fn ls_files(mut git: Command, args: &[&str]) -> Result<Vec<String>, Error> {
    let out = git
        .args(["ls-files", "-z"])
        .args(args)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| WorktreeError {
            detail: format!("git ls-files: {e}"),
        })?;
    if !out.status.success() {
        return Err(WorktreeError {
            detail: format!(
                "git ls-files: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            ),
        }
        .into());
    }
    let mut seen = BTreeSet::new();
    Ok(out
        .stdout
        .split(|b| *b == 0)
        .filter(|p| !p.is_empty())
        .map(|p| String::from_utf8_lossy(p).into_owned())
        .filter(|p| seen.insert(p.clone()))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_under_git_are_told() {
        assert!(under_git(".git/config"));
        assert!(under_git("sub/.git/"));
        assert!(under_git("a/.GIT/x"));
        assert!(!under_git(".gitignore"));
        assert!(!under_git("a/b.git/c"));
    }

    /// Issue 48 item 3, in depth: whoever calls, a recorded folder or pathspec outside
    /// the repository is refused before anything is made or run.
    #[test]
    fn a_folder_or_pathspec_outside_the_repository_runs_nothing() {
        let dir = tempfile::tempdir().expect("tempdir");
        let top = dir.path().join("repo");
        let init = Command::new("git")
            .args(["init", "-q"])
            .arg(&top)
            .status()
            .expect("git init");
        assert!(init.success());
        let repo = Repo::discover_from(&top).expect("repo");
        let marker = dir.path().join("marker");
        let touch = format!("touch '{}'", marker.display());
        for (prefix, pathspecs) in [("../../..", vec![]), ("", vec!["../../x".to_string()])] {
            let recipe = Recipe {
                argv: vec!["sh".into(), "-c".into(), touch.clone()],
                prefix: prefix.into(),
                pathspecs,
                allow_failure: false,
                timeout_secs: 10,
            };
            let Err(err) = execute(&repo, &recipe, &Cancel::never()) else {
                panic!("{prefix:?} ran");
            };
            assert_eq!(err.code(), "refused", "{err}");
            assert!(!marker.exists());
        }
    }

    #[test]
    fn the_record_keeps_the_end_of_the_output() {
        let long: String = (0..50).map(|i| format!("line {i}\n")).collect();
        let tail = recorded_tail(&long);
        assert!(tail.starts_with("line 30"));
        assert!(tail.ends_with("line 49"));
        assert!(recorded_tail(&"é".repeat(5000)).len() <= RECORDED_BYTES);
    }
}
