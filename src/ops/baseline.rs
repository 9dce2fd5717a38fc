//! The git side of `scan --baseline REV`: which commit REV is (`auto`: where this
//! branch left its upstream), and which files git sees renamed between it and the tree.
//! The matching itself is the engine's (`scan::baseline`).

use std::collections::HashMap;
use std::process::Command;
use std::process::Stdio;

use crate::error::Classify;
use crate::error::Exit;
use crate::repo::Repo;

#[derive(Debug, thiserror::Error)]
pub enum BaselineError {
    #[error("--baseline {rev}: no such commit")]
    UnknownRevision {
        rev: String,
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    #[error("--baseline auto: no base found (no upstream, no origin/HEAD, no main or master)")]
    NoBase,
    #[error("git {what} failed: {detail}")]
    Git { what: String, detail: String },
}

impl Classify for BaselineError {
    fn code(&self) -> &'static str {
        match self {
            BaselineError::UnknownRevision { .. } => "unknown-revision",
            BaselineError::NoBase => "no-baseline",
            BaselineError::Git { .. } => "git",
        }
    }
    fn exit(&self) -> Exit {
        match self {
            BaselineError::Git { .. } => Exit::Internal,
            _ => Exit::BadInput,
        }
    }
    fn hint(&self) -> Option<String> {
        match self {
            BaselineError::UnknownRevision { .. } => Some(
                "give a commit, branch or tag (`--baseline origin/main`, `--baseline HEAD~1`); \
                 in a shallow CI clone, fetch the base first"
                    .into(),
            ),
            BaselineError::NoBase => Some(
                "set the branch's upstream (`git branch -u origin/main`), or name the base: \
                 --baseline REV"
                    .into(),
            ),
            BaselineError::Git { .. } => None,
        }
    }
}

/// The commit a scan is compared with.
#[derive(Debug, Clone)]
pub struct Base {
    /// As given (for `auto`, what was chosen: `merge-base HEAD origin/main`).
    pub rev: String,
    pub commit: gix::ObjectId,
    pub tree: gix::ObjectId,
}

/// Resolves `rev` (a revision, or `auto`) to a commit and its tree.
pub fn resolve(repo: &Repo, rev: &str) -> Result<Base, BaselineError> {
    if rev == "auto" {
        return auto(repo);
    }
    let commit = commit_of(repo, rev)?;
    base_at(repo, rev.to_string(), commit)
}

fn base_at(repo: &Repo, rev: String, commit: gix::ObjectId) -> Result<Base, BaselineError> {
    let unknown = |e: Box<dyn std::error::Error + Send + Sync>| BaselineError::UnknownRevision {
        rev: rev.clone(),
        source: e,
    };
    let tree = repo
        .git
        .find_commit(commit)
        .map_err(|e| unknown(e.into()))?
        .tree_id()
        .map_err(|e| unknown(e.into()))?
        .detach();
    Ok(Base { rev, commit, tree })
}

/// The commit `rev` names (a tag peeled to its commit), as git reads revisions. A
/// revision that starts with `-` is refused before git could read it as an option.
fn commit_of(repo: &Repo, rev: &str) -> Result<gix::ObjectId, BaselineError> {
    let unknown = |detail: String| BaselineError::UnknownRevision {
        rev: rev.to_string(),
        source: detail.into(),
    };
    if rev.starts_with('-') || rev.is_empty() {
        return Err(unknown("not a revision".into()));
    }
    let spec = format!("{rev}^{{commit}}");
    let out = git(
        repo,
        &[
            "rev-parse",
            "--verify",
            "--quiet",
            "--end-of-options",
            &spec,
        ],
    )
    .map_err(|e| unknown(e.to_string()))?;
    gix::ObjectId::from_hex(out.trim().as_bytes()).map_err(|e| unknown(e.to_string()))
}

/// `--baseline auto`: the merge-base of HEAD with its upstream, else with
/// `origin/HEAD`, else with `main` or `master` (local, then `origin/`).
fn auto(repo: &Repo) -> Result<Base, BaselineError> {
    let head = repo.head_commit().ok_or(BaselineError::NoBase)?;
    let mut candidates = Vec::new();
    if let Some(upstream) = upstream(repo) {
        candidates.push(upstream);
    }
    for name in [
        "origin/HEAD",
        "main",
        "master",
        "origin/main",
        "origin/master",
    ] {
        candidates.push(name.to_string());
    }
    for name in candidates {
        let Ok(other) = commit_of(repo, &name) else {
            continue;
        };
        let Some(base) = merge_base(repo, head, other)? else {
            continue;
        };
        return base_at(repo, format!("merge-base HEAD {name}"), base);
    }
    Err(BaselineError::NoBase)
}

/// The upstream of the current branch (`origin/feature`), as git names it.
fn upstream(repo: &Repo) -> Option<String> {
    let out = git(
        repo,
        &[
            "rev-parse",
            "--abbrev-ref",
            "--symbolic-full-name",
            "@{upstream}",
        ],
    )
    .ok()?;
    let name = out.trim();
    (!name.is_empty()).then(|| name.to_string())
}

/// `git merge-base A B`; `None` when the histories share no commit.
fn merge_base(
    repo: &Repo,
    a: gix::ObjectId,
    b: gix::ObjectId,
) -> Result<Option<gix::ObjectId>, BaselineError> {
    let (a, b) = (a.to_string(), b.to_string());
    let Ok(out) = git(repo, &["merge-base", &a, &b]) else {
        return Ok(None);
    };
    Ok(gix::ObjectId::from_hex(out.trim().as_bytes()).ok())
}

/// The files git sees renamed from `commit` to the work tree (or to the index, with
/// `cached`): the base's path → the path now. Untracked files are not compared (git
/// does not see them), so a file renamed with `mv` counts as renamed once it is added.
pub fn renames(
    repo: &Repo,
    commit: gix::ObjectId,
    cached: bool,
) -> Result<HashMap<String, String>, BaselineError> {
    let commit = commit.to_string();
    let mut args = vec![
        "diff",
        "--no-ext-diff",
        "--no-textconv",
        "--name-status",
        "-z",
        "-M",
        "--diff-filter=R",
    ];
    if cached {
        args.push("--cached");
    }
    args.extend([commit.as_str(), "--"]);
    let out = git(repo, &args)?;
    let mut fields = out.split('\0');
    let mut renamed = HashMap::new();
    while let Some(status) = fields.next() {
        if !status.starts_with('R') {
            continue;
        }
        let (Some(from), Some(to)) = (fields.next(), fields.next()) else {
            break;
        };
        renamed.insert(from.to_string(), to.to_string());
    }
    Ok(renamed)
}

/// Runs git in the repository; its stdout, or the failure with its stderr.
pub(crate) fn git(repo: &Repo, args: &[&str]) -> Result<String, BaselineError> {
    let failed = |detail: String| BaselineError::Git {
        what: args.first().copied().unwrap_or_default().to_string(),
        detail,
    };
    let out = Command::new("git")
        .arg("--git-dir")
        .arg(&repo.git_dir)
        .arg("--work-tree")
        .arg(&repo.workdir)
        .args(args)
        .current_dir(&repo.workdir)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| failed(e.to_string()))?;
    if !out.status.success() {
        return Err(failed(
            String::from_utf8_lossy(&out.stderr).trim().to_string(),
        ));
    }
    String::from_utf8(out.stdout).map_err(|e| failed(e.to_string()))
}
