//! The git side of `scan --baseline REV`: which commit REV is (`auto`: where this
//! branch left its upstream), and which files git sees renamed between it and the tree.
//! The matching itself is the engine's (`scan::baseline`).

use std::collections::HashMap;
use std::process::Command;
use std::process::Stdio;

use crate::error::Classify;
use crate::error::Exit;
use crate::repo::Repo;
use crate::scan;
use crate::scan::baseline::Key;
use crate::scan::baseline::Matched;
use crate::scan::baseline::State;
use crate::scan::Finding;
use crate::select::Origin;
use crate::select::Proposal;
use crate::select::Select;
use crate::Error;

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

/// The base side of a comparison: what the rules find in the base commit's tree, and
/// the files renamed since.
pub struct BaseSide {
    pub base: Base,
    pub findings: Vec<Finding>,
    pub renamed: HashMap<String, String>,
}

/// Runs `rules` with `opts` over the base commit's tree (its blobs through the cache,
/// no checkout), findings only; `cached`: the renames are those staged.
pub fn scan_base(
    repo: &Repo,
    rules: &scan::rules::Rules,
    opts: &scan::Options,
    base: Base,
    cached: bool,
) -> Result<BaseSide, Error> {
    let base_opts = scan::Options {
        tree: Some(base.tree),
        cached: false,
        mode: scan::Mode::Report,
        ..opts.clone()
    };
    let at_base = scan::run(repo, rules, &base_opts, scan::Consume::Collect)?;
    let renamed = renames(repo, base.commit, cached)?;
    Ok(BaseSide {
        base,
        findings: at_base.findings,
        renamed,
    })
}

fn keys(findings: &[Finding]) -> Vec<Key> {
    findings
        .iter()
        .map(|f| Key::of(&f.rule, &f.path, &f.text))
        .collect()
}

impl BaseSide {
    /// Each of `current` as new or unchanged, and the base's findings left absent.
    pub fn classify(&self, current: &[Finding]) -> Matched {
        scan::baseline::classify(&keys(current), &keys(&self.findings), &self.renamed)
    }

    /// A fixing scan that fixes only the new findings (`--check`, `--stage`,
    /// `--apply` with `--baseline`, not `--fix-all`): the findings of every file, then
    /// the fixes of the files with a new fixable finding, each fix of an unchanged
    /// finding declined (it is known by its rule and the text it replaces). `select`:
    /// a person asked about the rest (`-i`).
    pub fn fix_new(
        &self,
        repo: &Repo,
        rules: &scan::rules::Rules,
        opts: &scan::Options,
        select: Option<&mut dyn Select>,
    ) -> Result<scan::ScanOutcome, Error> {
        let report_opts = scan::Options {
            mode: scan::Mode::Report,
            ..opts.clone()
        };
        let mut found = scan::run(repo, rules, &report_opts, scan::Consume::Collect)?;
        let matched = self.classify(&found.findings);
        let mut decline: HashMap<Key, usize> = HashMap::new();
        let mut to_fix = std::collections::BTreeSet::new();
        for (f, state) in found.findings.iter().zip(&matched.current) {
            match state {
                State::Unchanged => {
                    *decline
                        .entry(Key::of(&f.rule, &f.path, &f.text))
                        .or_default() += 1
                }
                State::New if f.fixable => {
                    to_fix.insert(f.path.clone());
                }
                _ => {}
            }
        }
        if to_fix.is_empty() {
            found.remaining = found.findings.clone();
            return Ok(found);
        }
        let fix_opts = scan::Options {
            pathspecs: to_fix
                .iter()
                .map(|p| format!(":(top,literal){p}"))
                .collect(),
            ..opts.clone()
        };
        let mut keep = KeepNew {
            decline,
            inner: select,
        };
        let fixed = scan::run(repo, rules, &fix_opts, scan::Consume::Ask(&mut keep))?;
        let mut remaining: Vec<Finding> = found
            .findings
            .iter()
            .filter(|f| !to_fix.contains(&f.path))
            .cloned()
            .chain(fixed.remaining)
            .collect();
        remaining.sort_by(|a, b| (&a.path, a.line, a.column).cmp(&(&b.path, b.line, b.column)));
        Ok(scan::ScanOutcome {
            remaining,
            changes: fixed.changes,
            fixed: fixed.fixed,
            unconverged: fixed.unconverged,
            conflicts: fixed.conflicts,
            ..found
        })
    }
}

/// Declines the fixes of unchanged findings, passing the rest on (to a person, or
/// accepted).
struct KeepNew<'a> {
    decline: HashMap<Key, usize>,
    inner: Option<&'a mut dyn Select>,
}

impl Select for KeepNew<'_> {
    fn select(&mut self, proposal: &Proposal<'_>) -> bool {
        if let Origin::Rule(rule) = proposal.origin {
            let p = &proposal.change;
            let replaced = p.text.get(p.start..p.end).unwrap_or_default();
            let key = Key::of(rule, proposal.path, replaced);
            if let Some(n) = self.decline.get_mut(&key).filter(|n| **n > 0) {
                *n -= 1;
                return false;
            }
        }
        match self.inner.as_mut() {
            Some(inner) => inner.select(proposal),
            None => true,
        }
    }

    fn finished(&self) -> bool {
        self.inner.as_ref().is_some_and(|s| s.finished())
    }
}
