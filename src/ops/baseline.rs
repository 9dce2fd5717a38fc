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
        what: args
            .iter()
            .find(|a| !a.starts_with('-') && !a.contains('='))
            .copied()
            .unwrap_or_default()
            .to_string(),
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
    /// The lines changed since the base (which of two identical findings is new).
    pub changed: Changed,
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
    let changed = changed(repo, &base.commit.to_string(), cached)?;
    Ok(BaseSide {
        base,
        findings: at_base.findings,
        renamed,
        changed,
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
        let fresh: Vec<bool> = current
            .iter()
            .map(|f| self.changed.touches(&f.path, f.line, f.end_line))
            .collect();
        scan::baseline::classify(&keys(current), &keys(&self.findings), &self.renamed, &fresh)
    }
}

/// A fixing scan that fixes only the findings `wanted` picks (`wanted` gets every
/// finding, in order, and says yes or no to each): the findings of every file, then
/// the fixes of the files with a wanted fixable finding, each fix of an unwanted one
/// declined (it is known by its rule and the text it replaces). For `--baseline` (the
/// new findings) and `--changed-lines` (those on changed lines). `select`: a person
/// asked about the rest (`-i`).
pub fn fix_wanted(
    repo: &Repo,
    rules: &scan::rules::Rules,
    opts: &scan::Options,
    select: Option<&mut dyn Select>,
    wanted: &dyn Fn(&[Finding]) -> Vec<bool>,
) -> Result<scan::ScanOutcome, Error> {
    let report_opts = scan::Options {
        mode: scan::Mode::Report,
        ..opts.clone()
    };
    let mut found = scan::run(repo, rules, &report_opts, scan::Consume::Collect)?;
    let mut decline: HashMap<Key, usize> = HashMap::new();
    let mut to_fix = std::collections::BTreeSet::new();
    for (f, wanted) in found.findings.iter().zip(wanted(&found.findings)) {
        if !wanted {
            *decline
                .entry(Key::of(&f.rule, &f.path, &f.text))
                .or_default() += 1;
        } else if f.fixable {
            to_fix.insert(f.path.clone());
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

/// Declines the fixes of unwanted findings, passing the rest on (to a person, or
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

/// What `--changed [REV]` compares: the files that differ between REV and the work
/// tree (or the index, with `cached`).
#[derive(Debug, Clone, Default)]
pub struct Changed {
    /// Modified, added, staged, deleted and (not with `cached`) untracked files.
    pub files: std::collections::BTreeSet<String>,
    /// Of those, the lines of each (1-based, inclusive ranges) that were added or
    /// changed; an untracked file has all its lines.
    pub lines: HashMap<String, Vec<(usize, usize)>>,
}

impl Changed {
    /// Whether lines `first..=last` of `path` touch a changed line.
    pub fn touches(&self, path: &str, first: usize, last: usize) -> bool {
        self.lines
            .get(path)
            .is_some_and(|ranges| ranges.iter().any(|&(a, b)| a <= last && first <= b))
    }
}

/// The files (and lines) that differ between `rev` and the work tree, or the index
/// with `cached` (what is being committed).
pub fn changed(repo: &Repo, rev: &str, cached: bool) -> Result<Changed, BaselineError> {
    let commit = match commit_of(repo, rev) {
        Ok(commit) => commit.to_string(),
        // Before the first commit, everything differs from HEAD.
        Err(_) if rev == "HEAD" && repo.head_commit().is_none() => {
            repo.git.empty_tree().id.to_string()
        }
        Err(e) => return Err(e),
    };
    let mut args = vec![
        "-c",
        "core.quotePath=false",
        "diff",
        "--no-ext-diff",
        "--no-textconv",
        "--no-color",
        "--no-renames",
        "-U0",
    ];
    if cached {
        args.push("--cached");
    }
    args.extend([commit.as_str(), "--"]);
    let mut out = Changed::default();
    let mut path: Option<String> = None;
    for line in git(repo, &args)?.lines() {
        if let Some(name) = line.strip_prefix("+++ ") {
            path = name.strip_prefix("b/").map(str::to_string);
        } else if let Some(name) = line.strip_prefix("--- a/") {
            // A deleted file has no `+++ b/` side.
            out.files.insert(name.to_string());
        } else if let (Some(p), Some(hunk)) = (&path, line.strip_prefix("@@ ")) {
            out.files.insert(p.clone());
            if let Some(range) = added_range(hunk) {
                out.lines.entry(p.clone()).or_default().push(range);
            }
        }
    }
    if !cached {
        let untracked = git(repo, &["ls-files", "-z", "--others", "--exclude-standard"])?;
        for p in untracked.split('\0').filter(|p| !p.is_empty()) {
            out.files.insert(p.to_string());
            out.lines.insert(p.to_string(), vec![(1, usize::MAX)]);
        }
    }
    Ok(out)
}

/// The new side of a `-U0` hunk header's ranges (`-3,2 +4,5 @@ …` → lines 4..=8),
/// `None` when it adds no line.
fn added_range(hunk: &str) -> Option<(usize, usize)> {
    let plus = hunk.split_whitespace().find(|w| w.starts_with('+'))?;
    let (start, count) = match plus[1..].split_once(',') {
        Some((s, c)) => (s.parse::<usize>().ok()?, c.parse::<usize>().ok()?),
        None => (plus[1..].parse::<usize>().ok()?, 1),
    };
    (count > 0).then(|| (start, start + count - 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hunk_headers_give_the_added_lines() {
        assert_eq!(added_range("-3,2 +4,5 @@ def f():"), Some((4, 8)));
        assert_eq!(added_range("-3 +4 @@"), Some((4, 4)));
        assert_eq!(added_range("-3,2 +2,0 @@"), None);
        let c = Changed {
            files: Default::default(),
            lines: HashMap::from([("a.py".to_string(), vec![(4, 8)])]),
        };
        assert!(c.touches("a.py", 8, 9) && c.touches("a.py", 1, 4));
        assert!(!c.touches("a.py", 9, 12) && !c.touches("b.py", 1, 100));
    }
}
