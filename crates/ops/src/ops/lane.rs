/*!
`lane`: one linked worktree per agent, so that agents working at once never take turns
on one tree (issue 54 item 2).

`lane start NAME` makes a linked worktree (`git worktree add --detach`) at the current
work tree's HEAD, under the common git dir: `<common git dir>/astedit/lanes/NAME`, and
records its base in `refs/astedit-lanes/NAME`. The harnesses' hook configurations the
work tree holds uncommitted (`.claude/settings.json`, `.claude/settings.local.json`,
the OpenCode plugin) are copied in, so the agent's hooks run in the lane too. Under the git dir because a lane
belongs to the repository and to nothing beside it: it is not in the main tree's
`git status`, grep or scan (every walker skips `.git`), it takes no name in the
folder holding the repository (where the user's own folders are), and it goes with
the repository when that is deleted. The ref keeps the base commit alive whatever
the lane's HEAD does, and is how lanes are listed.

git names the lane's worktree (`<common git dir>/worktrees/ID`, the `worktree` the
journal records for what is done there) after its folder, so `NAME`; a lane started
again under the name of a dropped one gets a name no journal event holds (`NAME-2`…),
or it would take the dropped lane's pending previews and transactions for its own.

The agent runs in the lane's folder: its hook (`agent-hook`) journals there as on the
main tree, in the one journal of the repository, and its turns take the lane's own
lock (see [`crate::txn`]'s lock), so lanes never wait for each other.

What a lane changed is its work tree against its base: `git diff` of the base with
the work tree (what the agent committed in the lane too) and the files git does not
ignore that are untracked. `lane drop` refuses a lane whose changes the current work
tree does not hold yet (a change is held when merging it in would change nothing),
naming them, unless `--force`.
*/

mod merge;

use std::path::Path;
use std::path::PathBuf;
use std::process::Command;
use std::process::Stdio;

use crate::change::FileChange;
use crate::change::FileContent;
use crate::change::FileMode;
use crate::error::Classify;
use crate::error::Exit;
use crate::repo::Repo;
use crate::report::lane::LaneAction;
use crate::report::lane::LaneReport;
use crate::report::lane::LaneRow;
use crate::report::Version;
use crate::txn;
use crate::Error;

pub use merge::run as merge;
pub use merge::LaneConflict;
pub use merge::LaneConflictError;
pub use merge::MergeRequest;

/// The refs naming each lane's base commit.
pub const LANE_REFS: &str = "refs/astedit-lanes/";

/// Where the lanes' work trees are, under the common git dir.
pub const LANES_DIR: &str = "astedit/lanes";

/// Why a lane command cannot be done.
#[derive(Debug, thiserror::Error)]
pub enum LaneError {
    #[error("'{name}' cannot name a lane: {why}")]
    BadName { name: String, why: &'static str },
    #[error("lane '{name}' exists already ({path})")]
    Exists { name: String, path: String },
    #[error("no lane named '{0}'")]
    Unknown(String),
    #[error("HEAD names no commit yet: a lane starts from one")]
    NoBase,
    #[error("lane '{name}' is the work tree this command runs in")]
    InLane { name: String },
    #[error(
        "lane '{name}' holds changes this work tree does not: {}; nothing was removed",
        paths.join(", ")
    )]
    Unmerged { name: String, paths: Vec<String> },
    #[error("git {what} failed: {detail}")]
    Git { what: &'static str, detail: String },
}

impl Classify for LaneError {
    fn code(&self) -> &'static str {
        match self {
            LaneError::BadName { .. } => "bad-lane-name",
            LaneError::Exists { .. } => "lane-exists",
            LaneError::Unknown(_) => "unknown-lane",
            LaneError::NoBase => "no-base",
            LaneError::InLane { .. } => "in-lane",
            LaneError::Unmerged { .. } => "lane-unmerged",
            LaneError::Git { .. } => "lane-git",
        }
    }
    fn exit(&self) -> Exit {
        match self {
            LaneError::Unmerged { .. } | LaneError::InLane { .. } => Exit::Refused,
            LaneError::Git { .. } => Exit::Internal,
            _ => Exit::BadInput,
        }
    }
    fn hint(&self) -> Option<String> {
        match self {
            LaneError::Unmerged { name, .. } => Some(format!(
                "merge it first (`git astedit lane merge {name}`, then apply the preview), or \
                 drop it with its changes: `git astedit lane drop --force {name}`"
            )),
            LaneError::InLane { .. } => {
                Some("run it from the main work tree (or another lane)".into())
            }
            LaneError::BadName { .. } => Some(
                "a lane name is letters, digits, '.', '_' and '-', starting with a letter or \
                 digit, at most 64 characters"
                    .into(),
            ),
            _ => None,
        }
    }
    fn details(&self) -> Option<serde_json::Value> {
        match self {
            LaneError::Unmerged { name, paths } => {
                Some(serde_json::json!({"lane": name, "paths": paths}))
            }
            _ => None,
        }
    }
}

/// Checks a lane name: it becomes a folder name, a ref name and a worktree name, and
/// reaches git's argv, so it is letters, digits, `.`, `_` and `-`, starts with a
/// letter or a digit (never read as an option), and is no path (`..`, `/`).
pub fn check_name(name: &str) -> Result<(), Error> {
    let bad = |why: &'static str| -> Result<(), Error> {
        Err(LaneError::BadName {
            name: name.to_string(),
            why,
        }
        .into())
    };
    if name.is_empty() || name.len() > 64 {
        return bad("a lane name has 1 to 64 characters");
    }
    if !name.starts_with(|c: char| c.is_ascii_alphanumeric()) {
        return bad("it must start with a letter or a digit");
    }
    if !name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
    {
        return bad("only letters, digits, '.', '_' and '-' may be used");
    }
    if name.contains("..") || name.ends_with('.') || name.ends_with(".lock") {
        return bad("'..', a final '.' and a final '.lock' are not allowed in a ref name");
    }
    Ok(())
}

/// One lane: its name, folder and base.
#[derive(Debug, Clone)]
pub struct Lane {
    pub name: String,
    pub path: PathBuf,
    pub base: String,
}

impl Lane {
    /// Its work tree is there.
    pub fn present(&self) -> bool {
        self.path.join(".git").is_file()
    }
}

fn lane_path(repo: &Repo, name: &str) -> PathBuf {
    repo.common_dir.join(LANES_DIR).join(name)
}

/// `git` run in `dir`, with nothing in its environment pointing at another repository
/// (a hook's `GIT_DIR`, `GIT_INDEX_FILE`).
fn git_in(dir: &Path) -> Command {
    let mut c = Command::new("git");
    c.arg("-C").arg(dir).stdin(Stdio::null());
    super::worktree::scrub_repo_env(&mut c);
    c
}

fn run_git(cmd: &mut Command, what: &'static str) -> Result<Vec<u8>, Error> {
    let out = cmd.output().map_err(|e| LaneError::Git {
        what,
        detail: e.to_string(),
    })?;
    if !out.status.success() {
        return Err(LaneError::Git {
            what,
            detail: String::from_utf8_lossy(&out.stderr).trim().to_string(),
        }
        .into());
    }
    Ok(out.stdout)
}

/// Every lane, by name.
pub fn all(repo: &Repo) -> Result<Vec<Lane>, Error> {
    let out = run_git(
        git_in(&repo.workdir).args([
            "for-each-ref",
            "--format=%(refname) %(objectname)",
            LANE_REFS,
        ]),
        "for-each-ref",
    )?;
    let mut lanes = Vec::new();
    for line in String::from_utf8_lossy(&out).lines() {
        let Some((name, base)) = line
            .strip_prefix(LANE_REFS)
            .and_then(|rest| rest.split_once(' '))
        else {
            continue;
        };
        if check_name(name).is_err() {
            continue;
        }
        lanes.push(Lane {
            name: name.to_string(),
            path: lane_path(repo, name),
            base: base.to_string(),
        });
    }
    lanes.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(lanes)
}

/// The lane named `name`.
pub fn find(repo: &Repo, name: &str) -> Result<Lane, Error> {
    check_name(name)?;
    all(repo)?
        .into_iter()
        .find(|l| l.name == name)
        .ok_or_else(|| LaneError::Unknown(name.to_string()).into())
}

/// `lane start NAME`: the lane's work tree at the current HEAD.
pub fn start(repo: &Repo, name: &str) -> Result<LaneReport, Error> {
    check_name(name)?;
    let base = repo.head_commit().ok_or(LaneError::NoBase)?.to_string();
    let path = lane_path(repo, name);
    if path.exists() || all(repo)?.iter().any(|l| l.name == name) {
        return Err(LaneError::Exists {
            name: name.to_string(),
            path: path.display().to_string(),
        }
        .into());
    }
    let parent = path.parent().unwrap_or(&repo.common_dir);
    std::fs::create_dir_all(parent).map_err(|source| crate::error::IoError {
        action: "create",
        path: parent.display().to_string(),
        source,
    })?;
    // The ref first, created only where there is none: two starts of one name race
    // for it, and the loser touches nothing.
    let refname = format!("{LANE_REFS}{name}");
    run_git(
        git_in(&repo.workdir).args([
            "update-ref",
            "-m",
            "git astedit lane start",
            &refname,
            &base,
            "",
        ]),
        "update-ref",
    )
    .map_err(|_| LaneError::Exists {
        name: name.to_string(),
        path: path.display().to_string(),
    })?;
    if let Err(e) = add_worktree(repo, name, &path, &base) {
        let _ = run_git(
            git_in(&repo.workdir).args(["update-ref", "-d", &refname, &base]),
            "update-ref",
        );
        return Err(e);
    }
    copy_harness_files(&repo.workdir, &path)?;
    let lane = Lane {
        name: name.to_string(),
        path,
        base,
    };
    Ok(LaneReport {
        schema_version: Version,
        action: LaneAction::Start,
        lanes: vec![row(&lane, Vec::new(), Vec::new())],
    })
}

/// Adds the lane's linked worktree at `path`, under a worktree name the journal has not
/// seen (see [`fresh_worktree_name`]): git names a worktree after its folder, so where
/// that name is taken the worktree is added in a folder so named and moved to `path`
/// (`git worktree repair` then points git's record at it).
fn add_worktree(repo: &Repo, name: &str, path: &Path, base: &str) -> Result<(), Error> {
    let id = fresh_worktree_name(repo, name)?;
    let staging = repo.common_dir.join(LANES_NEW);
    let at = if id == name {
        path.to_path_buf()
    } else {
        staging.join(&id)
    };
    run_git(
        git_in(&repo.workdir)
            .args(["worktree", "add", "--detach", "--quiet", "--end-of-options"])
            .arg(&at)
            .arg(base),
        "worktree add",
    )?;
    if at == path {
        return Ok(());
    }
    let moved = std::fs::rename(&at, path)
        .map_err(|e| LaneError::Git {
            what: "worktree add",
            detail: format!("cannot move {} to {}: {e}", at.display(), path.display()),
        })
        .map_err(Error::from)
        .and_then(|()| {
            run_git(
                git_in(&repo.workdir)
                    .args(["worktree", "repair", "--end-of-options"])
                    .arg(path),
                "worktree repair",
            )
        });
    let _ = std::fs::remove_dir(&staging);
    if let Err(e) = moved {
        let left = if at.exists() { &at } else { path };
        let _ = run_git(
            git_in(&repo.workdir)
                .args(["worktree", "remove", "--force", "--end-of-options"])
                .arg(left),
            "worktree remove",
        );
        return Err(e);
    }
    Ok(())
}

/// Where a lane's worktree is added when it cannot be added in place.
const LANES_NEW: &str = "astedit/lanes-new";

/// The name for a new lane's worktree: the lane's own, else `NAME-2`, `NAME-3`… The
/// journal records each event's work tree by that name, and what needs no id (`undo`,
/// `apply`, `log`) keeps to the events of its own: a lane started again under the name
/// of a dropped one must not take the dropped lane's pending previews and applied
/// transactions for its own, so a name any journal event or existing worktree holds
/// is not used again.
fn fresh_worktree_name(repo: &Repo, name: &str) -> Result<String, Error> {
    let used: std::collections::HashSet<String> = txn::log(repo)?
        .into_iter()
        .filter_map(|e| e.worktree)
        .collect();
    let admin = repo.common_dir.join("worktrees");
    let taken = |id: &str| used.contains(id) || admin.join(id).exists();
    let mut id = name.to_string();
    let mut n = 2;
    while taken(&id) {
        id = format!("{name}-{n}");
        n += 1;
    }
    Ok(id)
}

/// The harnesses' hook configurations (what `agent-hook install` writes, and Claude
/// Code's own local settings), often not committed.
const HARNESS_FILES: &[&str] = &[
    ".claude/settings.json",
    ".claude/settings.local.json",
    ".opencode/plugin/git-astedit.js",
];

/// Copies into a new lane the harness configurations the work tree holds and the lane
/// does not (uncommitted or ignored), so that the agent's hooks run there too.
fn copy_harness_files(from: &Path, to: &Path) -> Result<(), Error> {
    for rel in HARNESS_FILES {
        let (src, dst) = (from.join(rel), to.join(rel));
        if !src.is_file() || dst.exists() {
            continue;
        }
        let io = |action: &'static str, p: &Path| {
            let path = p.display().to_string();
            move |source| crate::error::IoError {
                action,
                path,
                source,
            }
        };
        if let Some(dir) = dst.parent() {
            std::fs::create_dir_all(dir).map_err(io("create", dir))?;
        }
        std::fs::copy(&src, &dst).map_err(io("copy", &src))?;
    }
    Ok(())
}

fn row(lane: &Lane, changed: Vec<String>, unmerged: Vec<String>) -> LaneRow {
    LaneRow {
        name: lane.name.clone(),
        path: lane.path.display().to_string(),
        base: lane.base.clone(),
        present: lane.present(),
        changed,
        unmerged,
    }
}

/// `lane list`: every lane, what it changed and what of that the current work tree
/// does not hold yet.
pub fn list(repo: &Repo) -> Result<LaneReport, Error> {
    let mut lanes = Vec::new();
    for lane in all(repo)? {
        let changes = changes(repo, &lane)?;
        let unmerged = unmerged(repo, &changes)?;
        let changed = changes.into_iter().map(|c| c.path).collect();
        lanes.push(row(&lane, changed, unmerged));
    }
    Ok(LaneReport {
        schema_version: Version,
        action: LaneAction::List,
        lanes,
    })
}

/// `lane drop NAME`: the lane's work tree and ref removed; refused while it holds
/// changes the current work tree does not, unless `force` (they are then lost, and
/// the report names them).
pub fn drop(repo: &Repo, name: &str, force: bool) -> Result<LaneReport, Error> {
    let lane = find(repo, name)?;
    if same_dir(&lane.path, &repo.workdir) {
        return Err(LaneError::InLane {
            name: name.to_string(),
        }
        .into());
    }
    let changes = changes(repo, &lane)?;
    let lost = unmerged(repo, &changes)?;
    if !lost.is_empty() && !force {
        return Err(LaneError::Unmerged {
            name: name.to_string(),
            paths: lost,
        }
        .into());
    }
    let report = LaneReport {
        schema_version: Version,
        action: LaneAction::Drop,
        lanes: vec![row(
            &lane,
            changes.into_iter().map(|c| c.path).collect(),
            lost,
        )],
    };
    if lane.present() {
        run_git(
            git_in(&repo.workdir)
                .args(["worktree", "remove", "--force", "--end-of-options"])
                .arg(&lane.path),
            "worktree remove",
        )?;
    } else {
        run_git(
            git_in(&repo.workdir).args(["worktree", "prune"]),
            "worktree prune",
        )?;
    }
    run_git(
        git_in(&repo.workdir).args([
            "update-ref",
            "-m",
            "git astedit lane drop",
            "-d",
            &format!("{LANE_REFS}{name}"),
            &lane.base,
        ]),
        "update-ref",
    )?;
    Ok(report)
}

fn same_dir(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}

/// What the lane changed since its base, sorted by path: before is the base's file,
/// after the lane's work tree's (untracked files git does not ignore included).
/// Submodules are left out. A lane whose work tree is gone changed nothing.
pub fn changes(repo: &Repo, lane: &Lane) -> Result<Vec<FileChange>, Error> {
    if !lane.present() {
        return Ok(Vec::new());
    }
    let raw = run_git(
        git_in(&lane.path).args([
            "diff",
            "--raw",
            "--no-abbrev",
            "-z",
            "--no-renames",
            "--no-ext-diff",
            "--ignore-submodules=all",
            "--end-of-options",
            &lane.base,
            "--",
        ]),
        "diff",
    )?;
    let mut out = Vec::new();
    let mut fields = raw.split(|&b| b == 0).filter(|f| !f.is_empty());
    while let (Some(meta), Some(path)) = (fields.next(), fields.next()) {
        let meta = String::from_utf8_lossy(meta);
        let parts: Vec<&str> = meta.trim_start_matches(':').split(' ').collect();
        let [old_mode, new_mode, old_id, _, _status] = parts[..] else {
            continue;
        };
        let path = String::from_utf8_lossy(path).into_owned();
        let before = match git_mode(old_mode) {
            Some(mode) => {
                let id =
                    gix::ObjectId::from_hex(old_id.as_bytes()).map_err(|e| LaneError::Git {
                        what: "diff",
                        detail: e.to_string(),
                    })?;
                Some(FileContent {
                    bytes: txn::blob(repo, id)?,
                    mode,
                })
            }
            None if old_mode == "000000" => None,
            None => continue,
        };
        let after = match git_mode(new_mode) {
            Some(_) => on_disk(&lane.path, &path)?,
            None if new_mode == "000000" => None,
            None => continue,
        };
        out.push(FileChange {
            path,
            before,
            after,
        });
    }
    let untracked = run_git(
        git_in(&lane.path).args(["ls-files", "-z", "--others", "--exclude-standard"]),
        "ls-files",
    )?;
    for path in untracked.split(|&b| b == 0).filter(|p| !p.is_empty()) {
        let path = String::from_utf8_lossy(path).into_owned();
        if let Some(after) = on_disk(&lane.path, &path)? {
            out.push(FileChange {
                path,
                before: None,
                after: Some(after),
            });
        }
    }
    out.sort_by(|a, b| a.path.cmp(&b.path));
    out.dedup_by(|a, b| a.path == b.path);
    Ok(out)
}

fn git_mode(mode: &str) -> Option<FileMode> {
    match mode {
        "100644" => Some(FileMode::Regular),
        "100755" => Some(FileMode::Executable),
        "120000" => Some(FileMode::Symlink),
        _ => None,
    }
}

/// The file at `path` under `root`, as git would store it (a symlink's target), or
/// `None` when there is none.
fn on_disk(root: &Path, path: &str) -> Result<Option<FileContent>, Error> {
    let abs = root.join(path);
    let io = |source| crate::error::IoError {
        action: "read",
        path: abs.display().to_string(),
        source,
    };
    let meta = match std::fs::symlink_metadata(&abs) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(io(e).into()),
    };
    if meta.file_type().is_symlink() {
        let target = std::fs::read_link(&abs).map_err(io)?;
        return Ok(Some(FileContent {
            bytes: target.into_os_string().into_encoded_bytes(),
            mode: FileMode::Symlink,
        }));
    }
    if !meta.is_file() {
        return Ok(None);
    }
    let bytes = std::fs::read(&abs).map_err(io)?;
    #[cfg(unix)]
    let mode = {
        use std::os::unix::fs::PermissionsExt;
        if meta.permissions().mode() & 0o111 != 0 {
            FileMode::Executable
        } else {
            FileMode::Regular
        }
    };
    #[cfg(not(unix))]
    let mode = FileMode::Regular;
    Ok(Some(FileContent { bytes, mode }))
}

/// The paths of `changes` (a lane's) whose change the current work tree does not hold:
/// merging it into the file there would change it (or conflict).
pub fn unmerged(repo: &Repo, changes: &[FileChange]) -> Result<Vec<String>, Error> {
    let mut out = Vec::new();
    for c in changes {
        let here = on_disk(&repo.workdir, &c.path)?;
        let held = match (&c.before, &c.after, &here) {
            (_, after, here)
                if after.as_ref().map(|a| &a.bytes) == here.as_ref().map(|h| &h.bytes) =>
            {
                true
            }
            (Some(before), Some(after), Some(here)) => {
                let m = super::recipe::merge::merge3_file(
                    &c.path,
                    &before.bytes,
                    &here.bytes,
                    &after.bytes,
                    super::recipe::merge::BothChanged::Conflict,
                )?;
                m.conflicts.is_empty() && m.text == here.bytes
            }
            _ => false,
        };
        if !held {
            out.push(c.path.clone());
        }
    }
    Ok(out)
}
