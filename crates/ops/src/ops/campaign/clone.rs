//! The clones a campaign makes in its workspace, and the guard that keeps it to them.
//!
//! A folder is fetched and checked out again only when it is exactly
//! `<workspace>/<key>` (never a path the state names: the state is shared, pushed and
//! collected from CI shards, so anyone who can write it could name a user's own
//! checkout), its `.git` is a folder holding the [`MARKER`] written when the campaign
//! cloned it, and its work tree is clean (no change, untracked or ignored file). A
//! user's checkout of the same name, or a campaign clone someone worked in, is refused
//! with its reason and left exactly as it is. A clone is made in a scratch folder beside
//! its place and renamed into it once checked out and marked, so a killed clone never
//! leaves a half-made folder at the key.

use std::collections::BTreeMap;
use std::path::Path;
use std::path::PathBuf;

use super::git;
use super::plain;
use super::CampaignError;
use super::Loaded;
use crate::error::Classify;
use crate::report::campaign::RepoSpec;

/// The file a campaign writes into the git folder of every clone it makes.
pub(super) const MARKER: &str = "astedit-campaign-clone";

/// The file inside a scratch folder a clone is made in (so that a leftover of a killed
/// run is known to be ours and may be removed).
const SCRATCH_MARKER: &str = "astedit-campaign-scratch";

/// Where each repository's checkout is: a local entry's `path` from the spec, a
/// clone's `<workspace>/<key>`. Never a path read from the state.
#[derive(Debug, Clone)]
pub struct Checkouts {
    workspace: PathBuf,
    /// The spec's keys, with the local checkout of those that have one.
    keys: BTreeMap<String, Option<PathBuf>>,
    /// The spec has `[targets]`: keys `stage` resolved from the forge are clones too.
    targets: bool,
}

impl Checkouts {
    pub fn new(loaded: &Loaded, workspace: PathBuf) -> Checkouts {
        let keys = loaded
            .repos
            .iter()
            .map(|(k, r)| (k.clone(), r.path.as_deref().map(local_dir)))
            .collect();
        Checkouts {
            workspace,
            keys,
            targets: loaded.spec.targets.is_some(),
        }
    }

    pub fn workspace(&self) -> &Path {
        &self.workspace
    }

    /// The checkout of `key`: its local path, or its clone when the campaign made it.
    pub fn dir(&self, key: &str) -> Result<PathBuf, CampaignError> {
        match self.keys.get(key) {
            // A repository `[targets]` found at stage: a clone at `<workspace>/<key>`
            // (a key as keys are made, never a path), with the marker, or nothing.
            None if self.targets && super::sanitize(key) == key && !key.contains("..") => {
                existing(&self.workspace, key)
            }
            None => Err(CampaignError::NotInSpec(key.to_string())),
            Some(Some(local)) => Ok(local.clone()),
            Some(None) => existing(&self.workspace, key),
        }
    }
}

/// A local checkout as the spec names it (its real path when it exists).
pub(super) fn local_dir(path: &str) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| PathBuf::from(path))
}

/// What is at a clone's place.
enum Found {
    /// Nothing, or an empty folder: a clone may be made there.
    Nothing,
    /// A clone the campaign made.
    Ours,
    /// Anything else, with the reason it is not ours.
    Foreign(String),
}

fn look(dir: &Path) -> Found {
    match std::fs::symlink_metadata(dir) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Found::Nothing,
        Err(e) => return Found::Foreign(format!("it cannot be read: {e}")),
        Ok(m) if m.file_type().is_symlink() => {
            return Found::Foreign("it is a symbolic link".into())
        }
        Ok(m) if !m.is_dir() => return Found::Foreign("it is not a folder".into()),
        Ok(_) => {}
    }
    let git_dir = dir.join(".git");
    let is_dir = |p: &Path| std::fs::symlink_metadata(p).is_ok_and(|m| m.is_dir());
    let is_file = |p: &Path| std::fs::symlink_metadata(p).is_ok_and(|m| m.is_file());
    if is_dir(&git_dir) && is_file(&git_dir.join(MARKER)) {
        return Found::Ours;
    }
    let empty = std::fs::read_dir(dir).is_ok_and(|mut d| d.next().is_none());
    if empty {
        Found::Nothing
    } else if std::fs::symlink_metadata(&git_dir).is_ok() {
        Found::Foreign("it holds a repository no campaign cloned (no marker in its .git)".into())
    } else {
        Found::Foreign("it is a folder that is not a campaign's clone".into())
    }
}

/// `<workspace>/<key>` when it is a clone the campaign made.
pub(super) fn existing(workspace: &Path, key: &str) -> Result<PathBuf, CampaignError> {
    let dir = workspace.join(key);
    match look(&dir) {
        Found::Ours => Ok(dir),
        Found::Nothing => Err(CampaignError::NoClone(dir.display().to_string())),
        Found::Foreign(why) => Err(CampaignError::NotOurs {
            path: dir.display().to_string(),
            why,
        }),
    }
}

/// A refusal as a repository's recorded reason: the message, its code and the hint.
pub(super) fn reason(e: &CampaignError) -> String {
    match e.hint() {
        Some(h) => format!("{e} ({}); {h}", e.code()),
        None => format!("{e} ({})", e.code()),
    }
}

/// What is changed, untracked or ignored in the work tree of `dir` (at most a few
/// paths, for the message); empty when it is clean.
fn changes(dir: &Path) -> Result<Vec<String>, String> {
    let out = git(
        dir,
        &[
            "--no-optional-locks",
            "status",
            "--porcelain=v1",
            "-z",
            "--ignored=matching",
            "--untracked-files=all",
        ],
    )?;
    Ok(out
        .split('\0')
        .filter(|e| e.len() > 3)
        .map(|e| e.to_string())
        .collect())
}

/// Refuses a clone whose work tree is not exactly what was checked out.
fn ensure_clean(dir: &Path) -> Result<(), String> {
    let found = changes(dir)?;
    if found.is_empty() {
        return Ok(());
    }
    let shown: Vec<&str> = found.iter().take(3).map(String::as_str).collect();
    let more = found.len().saturating_sub(shown.len());
    let what = format!(
        "{}{}",
        shown.join(", "),
        if more > 0 {
            format!(" and {more} more")
        } else {
            String::new()
        }
    );
    Err(reason(&CampaignError::Dirty {
        path: dir.display().to_string(),
        what,
    }))
}

/// The base branch and the commit it is at now (remote-tracking for clones, without
/// fetching; a local checkout's HEAD).
pub(super) fn current_base(
    dir: &Path,
    spec: &RepoSpec,
) -> Result<(Option<String>, Option<String>), String> {
    if spec.path.is_some() {
        let head = git(dir, &["rev-parse", "--verify", "--quiet", "HEAD"])?;
        return Ok((spec.base.clone(), Some(head.trim().to_string())));
    }
    let base = match &spec.base {
        Some(b) => b.clone(),
        None => default_branch(dir)?,
    };
    let at = git(
        dir,
        &[
            "rev-parse",
            "--verify",
            "--quiet",
            &format!("refs/remotes/origin/{base}^{{commit}}"),
        ],
    )
    .map_err(|_| format!("the base branch '{base}' does not exist in the repository"))?;
    Ok((Some(base), Some(at.trim().to_string())))
}

fn default_branch(dir: &Path) -> Result<String, String> {
    let head = git(
        dir,
        &["symbolic-ref", "--quiet", "refs/remotes/origin/HEAD"],
    )
    .map_err(|_| "the repository has no default branch: give `base`".to_string())?;
    Ok(head
        .trim()
        .strip_prefix("refs/remotes/origin/")
        .unwrap_or(head.trim())
        .to_string())
}

/// Clones (or fetches the clone the campaign made) into `<workspace>/<key>` and
/// checks out its base's commit; the folder, the base branch and the commit.
pub(super) fn sync_clone(
    workspace: &Path,
    key: &str,
    spec: &RepoSpec,
) -> Result<(PathBuf, String, String), String> {
    let url = spec.url.as_deref().unwrap_or_default();
    plain("url", url)?;
    if let Some(b) = &spec.base {
        plain("base branch", b)?;
    }
    std::fs::create_dir_all(workspace)
        .map_err(|e| format!("cannot make the workspace {}: {e}", workspace.display()))?;
    let dir = workspace.join(key);
    let (base, commit) = match look(&dir) {
        Found::Foreign(why) => {
            return Err(reason(&CampaignError::NotOurs {
                path: dir.display().to_string(),
                why,
            }))
        }
        Found::Nothing => {
            let (base, commit) = fresh_clone(workspace, key, url, spec)?;
            return Ok((dir, base, commit));
        }
        Found::Ours => {
            // Our clone, but someone may have worked in it: nothing of theirs is lost.
            ensure_clean(&dir)?;
            git(&dir, &["fetch", "--quiet", "--prune", "origin"])?;
            current_base(&dir, spec)?
        }
    };
    let (base, commit) = (base.unwrap_or_default(), commit.unwrap_or_default());
    // Only an object id reaches checkout; the tree is clean, so `--force` only
    // replaces what the last checkout wrote.
    git(
        &dir,
        &["checkout", "--quiet", "--force", "--detach", &commit],
    )?;
    Ok((dir, base, commit))
}

/// Clones `url` into a scratch folder beside `<workspace>/<key>`, checks out the base,
/// marks it ours and renames it into place (which fails, leaving nothing, when a folder
/// appeared there meanwhile).
fn fresh_clone(
    workspace: &Path,
    key: &str,
    url: &str,
    spec: &RepoSpec,
) -> Result<(String, String), String> {
    remove_leftovers(workspace, key);
    let scratch = workspace.join(format!(".astedit-clone-{key}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&scratch);
    std::fs::create_dir(&scratch)
        .and_then(|()| std::fs::write(scratch.join(SCRATCH_MARKER), key))
        .map_err(|e| format!("cannot make {}: {e}", scratch.display()))?;
    let made = (|| {
        let inner = scratch.join("repo");
        let target = inner.display().to_string();
        git(
            workspace,
            &["clone", "--quiet", "--no-checkout", "--", url, &target],
        )?;
        let (base, commit) = current_base(&inner, spec)?;
        let (base, commit) = (base.unwrap_or_default(), commit.unwrap_or_default());
        git(
            &inner,
            &["checkout", "--quiet", "--force", "--detach", &commit],
        )?;
        std::fs::write(inner.join(".git").join(MARKER), format!("{key}\n{url}\n"))
            .map_err(|e| format!("cannot mark the clone {}: {e}", inner.display()))?;
        let dir = workspace.join(key);
        std::fs::rename(&inner, &dir).map_err(|e| {
            reason(&CampaignError::NotOurs {
                path: dir.display().to_string(),
                why: format!("a folder appeared there while the clone was made ({e})"),
            })
        })?;
        Ok((base, commit))
    })();
    let _ = std::fs::remove_dir_all(&scratch);
    made
}

/// Removes the scratch folders of `key` a killed run left (only those holding the
/// scratch marker: nothing else in the workspace is touched).
fn remove_leftovers(workspace: &Path, key: &str) {
    let prefix = format!(".astedit-clone-{key}-");
    let Ok(entries) = std::fs::read_dir(workspace) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name();
        let Some(rest) = name.to_str().and_then(|n| n.strip_prefix(&prefix)) else {
            continue;
        };
        // A live run's (same pid) scratch folder is its own business.
        let alive = cfg!(target_os = "linux") && Path::new("/proc").join(rest).exists();
        let ours = !rest.is_empty()
            && !alive
            && rest.bytes().all(|b| b.is_ascii_digit())
            && e.file_type().is_ok_and(|t| t.is_dir())
            && std::fs::symlink_metadata(e.path().join(SCRATCH_MARKER)).is_ok_and(|m| m.is_file());
        if ours {
            let _ = std::fs::remove_dir_all(e.path());
        }
    }
}
