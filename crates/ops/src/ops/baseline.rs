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
use crate::select::Narrowed;
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
    if let Some(id) = commit_in_process(repo, rev) {
        return Ok(id);
    }
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

/// The commit `rev` names, read without a child process (which costs more than the
/// rest of a warm comparison) when it is a full object id or a reference name (looked
/// up in git's order) followed by `~N` and `^N` steps; `None` leaves every other form,
/// and every doubt, to git.
fn commit_in_process(repo: &Repo, rev: &str) -> Option<gix::ObjectId> {
    let (name, mut steps) = rev.split_at(rev.find(['~', '^']).unwrap_or(rev.len()));
    let plain = |b: u8| b.is_ascii_alphanumeric() || b"_./-".contains(&b);
    if name.is_empty() || name.starts_with('-') || !name.bytes().all(plain) {
        return None;
    }
    let full_id = name.len() == repo.git.object_hash().len_in_hex()
        && name.bytes().all(|b| b.is_ascii_hexdigit());
    let mut commit = if full_id {
        let id = gix::ObjectId::from_hex(name.as_bytes()).ok()?;
        repo.git.find_object(id).ok()?.peel_to_commit().ok()?
    } else {
        // Not a reference: maybe a short id, which git tells apart.
        repo.git
            .try_find_reference(name)
            .ok()??
            .peel_to_commit()
            .ok()?
    };
    while let Some(op) = steps.chars().next() {
        let digits = steps[1..]
            .find(|c: char| !c.is_ascii_digit())
            .map_or(steps.len(), |i| i + 1);
        let n: usize = match &steps[1..digits] {
            "" => 1,
            count => count.parse().ok()?,
        };
        steps = &steps[digits..];
        let hops = match op {
            '~' => vec![0; n],
            // `^0` is the commit itself; `^N` its Nth parent.
            '^' if n == 0 => Vec::new(),
            '^' => vec![n - 1],
            _ => return None,
        };
        for parent in hops {
            let id = commit.parent_ids().nth(parent)?.detach();
            commit = repo.git.find_commit(id).ok()?;
        }
    }
    Some(commit.id)
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
pub fn git(repo: &Repo, args: &[&str]) -> Result<String, BaselineError> {
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

/// The base side of a comparison: what the rules find in the base commit's tree, but
/// for the files whose blob is at the same path now (their findings are the current
/// ones: `same`); the files renamed since and the lines added are read from git only
/// when a comparison needs them ([`Matched::splits`]).
pub struct BaseSide<'r> {
    repo: &'r Repo,
    pub base: Base,
    /// The findings of the files not in `same`.
    pub findings: Vec<Finding>,
    /// The files whose blob is the same at the base and now.
    same: std::collections::HashSet<String>,
    /// Compared with the index (`--cached`), not the work tree.
    cached: bool,
    since: std::cell::OnceCell<Since>,
}

/// What changed between the base and the tree: renames (base path → path now), and
/// the lines added (which of two identical findings is new).
struct Since {
    renamed: HashMap<String, String>,
    changed: Changed,
}

/// Runs `rules` with `opts` over `inputs`, the files of the base commit's tree (their
/// blobs through the cache, no checkout) but for the files that are the same now,
/// findings only; `cached`: compared with the index.
pub fn scan_base<'r>(
    repo: &'r Repo,
    rules: &scan::rules::Rules,
    opts: &scan::Options,
    inputs: &scan::source::Inputs,
    base: Base,
    cached: bool,
) -> Result<BaseSide<'r>, Error> {
    let base_opts = scan::Options {
        mode: scan::Mode::Report,
        name_contents: false,
        ..opts.clone()
    };
    let at_base = scan::run(repo, rules, &base_opts, inputs, scan::Consume::Collect)?;
    Ok(BaseSide {
        repo,
        base,
        findings: at_base.findings,
        same: at_base.same.into_iter().collect(),
        cached,
        since: Default::default(),
    })
}

/// The base side of a comparison before it is scanned: it waits for the scan of now,
/// whose content ids tell which files are the same at the base (so that those are
/// neither read at the base nor looked at on disk again).
pub struct Pending<'r> {
    base: Base,
    side: std::cell::OnceCell<BaseSide<'r>>,
}

impl<'r> Pending<'r> {
    pub fn new(base: Base) -> Pending<'r> {
        Pending {
            base,
            side: Default::default(),
        }
    }

    /// The base side, scanned by `scan` the first time it is asked for.
    pub fn side(
        &self,
        scan: impl FnOnce(&Base) -> Result<BaseSide<'r>, Error>,
    ) -> Result<&BaseSide<'r>, Error> {
        if let Some(side) = self.side.get() {
            return Ok(side);
        }
        let side = scan(&self.base)?;
        Ok(self.side.get_or_init(|| side))
    }

    /// [`side`](Self::side), taken.
    pub fn into_side(
        self,
        scan: impl FnOnce(&Base) -> Result<BaseSide<'r>, Error>,
    ) -> Result<BaseSide<'r>, Error> {
        self.side(scan)?;
        Ok(self.side.into_inner().expect("scanned above"))
    }
}

fn keys<'f>(findings: impl IntoIterator<Item = &'f Finding>) -> Vec<Key> {
    findings.into_iter().map(Key::of_finding).collect()
}

impl BaseSide<'_> {
    /// Each of `current` (a scan's findings in its input) as new or unchanged, and
    /// the base's findings left absent. Those in a file that is the same at the base
    /// are unchanged: the base has the very same there, and they pair off before
    /// anything else is matched.
    pub fn classify(&self, current: &[Finding]) -> Result<Matched, BaselineError> {
        let others: Vec<usize> = (0..current.len())
            .filter(|&i| !self.same.contains(&current[i].path))
            .collect();
        let rest: Vec<&Finding> = others.iter().map(|&i| &current[i]).collect();
        let matched = self.compare(&rest, &self.findings.iter().collect::<Vec<_>>())?;
        let mut states = vec![scan::baseline::State::Unchanged; current.len()];
        for (&i, state) in others.iter().zip(matched.current) {
            states[i] = state;
        }
        Ok(Matched {
            current: states,
            absent: matched.absent,
        })
    }

    /// [`classify`](Self::classify) for the findings a fix leaves (`remaining`),
    /// which may differ from `input`'s (the same scan's findings in its input) even
    /// in a file that is the same at the base; the base's findings there are
    /// `input`'s. The absent ones are not told.
    pub fn classify_fixed(
        &self,
        remaining: &[Finding],
        input: &[Finding],
    ) -> Result<Matched, BaselineError> {
        let mut base: Vec<&Finding> = self.findings.iter().collect();
        base.extend(input.iter().filter(|f| self.same.contains(&f.path)));
        base.sort_by(|a, b| (&a.path, a.line, a.column).cmp(&(&b.path, b.line, b.column)));
        let mut matched = self.compare(&remaining.iter().collect::<Vec<_>>(), &base)?;
        matched.absent.clear();
        Ok(matched)
    }

    /// Matches `current` with `base`, asking git for renames and added lines only
    /// when a group of identical findings is split.
    fn compare(&self, current: &[&Finding], base: &[&Finding]) -> Result<Matched, BaselineError> {
        let (now, then) = (keys(current.iter().copied()), keys(base.iter().copied()));
        let matched = scan::baseline::classify(&now, &then, &HashMap::new(), &[]);
        if !matched.splits(&now, &then) {
            return Ok(matched);
        }
        let since = self.since()?;
        let fresh: Vec<bool> = current
            .iter()
            .map(|f| since.changed.touches(&f.path, f.line, f.end_line))
            .collect();
        Ok(scan::baseline::classify(
            &now,
            &then,
            &since.renamed,
            &fresh,
        ))
    }

    fn since(&self) -> Result<&Since, BaselineError> {
        if let Some(since) = self.since.get() {
            return Ok(since);
        }
        let since = Since {
            renamed: renames(self.repo, self.base.commit, self.cached)?,
            changed: changed(self.repo, &self.base.commit.to_string(), self.cached)?,
        };
        Ok(self.since.get_or_init(|| since))
    }
}

/// Says yes or no to each of a scan's findings (those of the outcome it is given,
/// whose content ids it may use too), in order.
pub type Wanted<'a> = dyn Fn(&scan::ScanOutcome) -> Result<Vec<bool>, Error> + 'a;

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
    inputs: &scan::source::Inputs,
    select: Option<&mut dyn Select>,
    wanted: &Wanted<'_>,
) -> Result<scan::ScanOutcome, Error> {
    let report_opts = scan::Options {
        mode: scan::Mode::Report,
        ..opts.clone()
    };
    let mut found = scan::run(repo, rules, &report_opts, inputs, scan::Consume::Collect)?;
    let mut decline: HashMap<Key, usize> = HashMap::new();
    let mut to_fix = std::collections::BTreeSet::new();
    for (f, wanted) in found.findings.iter().zip(wanted(&found)?) {
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
    // The fixes of unwanted findings are declined (known by rule and replaced text).
    let mut keep = Narrowed {
        keep: |proposal: &Proposal<'_>| {
            let Origin::Rule(rule) = proposal.origin else {
                return true;
            };
            let p = &proposal.change;
            let replaced = p.text.get(p.start..p.end).unwrap_or_default();
            match decline.get_mut(&Key::of(rule, proposal.path, replaced)) {
                Some(n) if *n > 0 => {
                    *n -= 1;
                    false
                }
                _ => true,
            }
        },
        inner: select,
    };
    let to_fix_inputs = inputs.only(&to_fix);
    let fixed = scan::run(
        repo,
        rules,
        opts,
        &to_fix_inputs,
        scan::Consume::Ask(&mut keep),
    )?;
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

/// What `--changed [REV]` compares: the files that differ between REV and the work
/// tree (or the index, with `cached`).
#[derive(Debug, Clone, Default)]
pub struct Changed {
    /// Modified, added, staged, deleted and (not with `cached`) untracked files.
    pub files: std::collections::BTreeSet<String>,
    /// Of those, the lines of each (1-based, inclusive ranges) that were added or
    /// changed; an untracked file has all its lines.
    pub lines: crate::text::LineRanges,
}

impl Changed {
    /// Whether lines `first..=last` of `path` touch a changed line.
    pub fn touches(&self, path: &str, first: usize, last: usize) -> bool {
        self.lines.touches(path, first, last)
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
                out.lines.0.entry(p.clone()).or_default().push(range);
            }
        }
    }
    if !cached {
        let untracked = git(repo, &["ls-files", "-z", "--others", "--exclude-standard"])?;
        for p in untracked.split('\0').filter(|p| !p.is_empty()) {
            out.files.insert(p.to_string());
            out.lines.0.insert(p.to_string(), vec![(1, usize::MAX)]);
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
    fn simple_revisions_are_read_in_process_and_the_rest_left_to_git() {
        let dir = tempfile::tempdir().expect("temp dir");
        let git = |args: &[&str]| {
            let out = Command::new("git")
                .args([
                    "-c",
                    "user.name=t",
                    "-c",
                    "user.email=t@t",
                    "-c",
                    "commit.gpgsign=false",
                ])
                .args(args)
                .current_dir(dir.path())
                .output()
                .expect("git runs");
            assert!(out.status.success(), "{:?}", out);
            String::from_utf8(out.stdout)
                .expect("utf-8")
                .trim()
                .to_string()
        };
        git(&["init", "-q", "-b", "main"]);
        for i in 0..3 {
            git(&["commit", "-q", "--allow-empty", "-m", &i.to_string()]);
        }
        git(&["tag", "-a", "-m", "t", "v1", "HEAD~1"]);
        let repo = Repo::discover_from(dir.path()).expect("repo");
        for rev in [
            "HEAD", "HEAD~1", "main~2", "HEAD^", "HEAD^1~1", "v1", "v1~1", "HEAD~0",
        ] {
            let by_git = git(&["rev-parse", &format!("{rev}^{{commit}}")]);
            let ours = commit_in_process(&repo, rev).map(|id| id.to_string());
            assert_eq!(ours.as_deref(), Some(by_git.as_str()), "{rev}");
            assert_eq!(commit_of(&repo, rev).expect(rev).to_string(), by_git);
        }
        let head = git(&["rev-parse", "HEAD"]);
        assert!(commit_in_process(&repo, &head).is_some());
        // Git's: short ids, reflog and upstream forms; no such parent.
        for rev in [
            &head[..8],
            "@",
            "HEAD@{0}",
            "main^{}",
            "HEAD~3",
            "HEAD^2",
            "nope",
        ] {
            assert_eq!(commit_in_process(&repo, rev), None, "{rev}");
        }
        assert_eq!(
            commit_of(&repo, &head[..8]).expect("short").to_string(),
            head
        );
    }

    #[test]
    fn hunk_headers_give_the_added_lines() {
        assert_eq!(added_range("-3,2 +4,5 @@ def f():"), Some((4, 8)));
        assert_eq!(added_range("-3 +4 @@"), Some((4, 4)));
        assert_eq!(added_range("-3,2 +2,0 @@"), None);
        let c = Changed {
            files: Default::default(),
            lines: crate::text::LineRanges(HashMap::from([("a.py".to_string(), vec![(4, 8)])])),
        };
        assert!(c.touches("a.py", 8, 9) && c.touches("a.py", 1, 4));
        assert!(!c.touches("a.py", 9, 12) && !c.touches("b.py", 1, 100));
    }
}
