/*!
What git already knows about the work tree: where the untracked cache or fsmonitor is
on, `git status` answers "which files changed since the index?" without reading every
folder (the untracked cache) or even looking at every file (fsmonitor), and gix parses
those index extensions but does not use them. A listing for the result cache then asks
git once (`git status --porcelain=v2 -z`) and takes every other tracked file's content
id from the index without a `stat`: on a tree that did not change, a warm scan reads
nothing but the index and the cache.

Only the work tree's side comes from git's answer: the files are those the walk would
list (tracked, and untracked but not ignored), and a file git reports changed, or one
whose index entry cannot name its bytes (racy, filtered, flagged: see
[`super::IndexTrust`]), is read and hashed as without this.
*/

use std::collections::HashSet;
use std::path::Path;
use std::process::Command;
use std::process::Stdio;

use gix::bstr::BString;
use gix::bstr::ByteSlice as _;

/// What `git status` reported, as repository paths.
#[derive(Debug, Default, Clone)]
pub struct Changes {
    /// Index entries whose work-tree file differs from them (modified, deleted, type
    /// changed, intent-to-add, unmerged).
    pub tracked: HashSet<BString>,
    /// Untracked files (not ignored).
    pub untracked: Vec<BString>,
    /// Untracked folders git reported whole (its default `-unormal`), without their
    /// trailing slash: the caller walks them.
    pub untracked_dirs: Vec<BString>,
    /// A digest of git's whole answer (its output's bytes): two answers with the same
    /// digest reported the same paths the same way (see [`super::memo`]).
    pub answer: super::Key,
}

/// When git's `status` is asked what changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Asking {
    /// Only where git keeps something that makes its `status` cheaper than a walk
    /// ([`worth_asking`]).
    WhereKept,
    /// Also where it keeps neither (its `status` then walks as the listing would): for
    /// a caller that saves more by git's answer than the walk costs (a scan's memo of
    /// its whole answer, see [`super::memo`]). Never where git's look is weaker
    /// ([`may_ask`]), nor with a sparse index (`index.sparse`: the listing walks it).
    Always,
}

/// Whether git may be asked at all: not where its look at a file is weaker than the
/// cache's own (`core.trustctime=false`, `core.checkStat=minimal`): a rewrite that
/// kept size and mtime would then pass for unchanged.
pub fn may_ask(git: &gix::Repository) -> bool {
    let config = git.config_snapshot();
    let weaker = config
        .string("core.trustctime")
        .is_some_and(|v| falsy(v.as_ref()))
        || config
            .string("core.checkStat")
            .is_some_and(|v| v.trim().eq_ignore_ascii_case(b"minimal"));
    !weaker
}

/// Whether git keeps something that makes its `status` cheaper than a walk here: the
/// untracked cache (`core.untrackedCache`, also set by `feature.manyFiles`) or a file
/// system monitor (`core.fsmonitor`). Never where git may not be asked ([`may_ask`]).
pub fn worth_asking(git: &gix::Repository) -> bool {
    if !may_ask(git) {
        return false;
    }
    let config = git.config_snapshot();
    let yes = |key: &str| config.boolean(key).unwrap_or(false);
    let untracked_cache = match config.string("core.untrackedCache") {
        Some(v) => truthy(v.as_ref()),
        None => yes("feature.manyFiles"),
    };
    let fsmonitor = config
        .string("core.fsmonitor")
        .is_some_and(|v| !v.is_empty() && !falsy(v.as_ref()));
    untracked_cache || fsmonitor
}

/// Whether git is asked here, `asking` as the caller says.
pub fn asks(git: &gix::Repository, asking: Asking) -> bool {
    match asking {
        Asking::WhereKept => worth_asking(git),
        // A sparse index is walked whatever git answers (see `files`): its `status`
        // would be paid for nothing.
        Asking::Always => {
            may_ask(git)
                && !git
                    .config_snapshot()
                    .boolean("index.sparse")
                    .unwrap_or(false)
        }
    }
}

fn truthy(v: &[u8]) -> bool {
    let v = v.trim().to_ascii_lowercase();
    matches!(&v[..], b"true" | b"yes" | b"on" | b"1")
}

fn falsy(v: &[u8]) -> bool {
    let v = v.trim().to_ascii_lowercase();
    matches!(&v[..], b"false" | b"no" | b"off" | b"0")
}

/// [`ask`], where `asking` says git is asked ([`asks`]), and never in a hook with its
/// own `GIT_INDEX_FILE` (`git commit -a`): that index is the one git would answer
/// about, and gix would read another. `None`: not asked, or no answer.
pub fn ask_when(
    asking: Asking,
    git: &gix::Repository,
    git_dir: &Path,
    workdir: &Path,
) -> Option<Changes> {
    if std::env::var_os("GIT_INDEX_FILE").is_some() || !asks(git, asking) {
        return None;
    }
    ask(git, git_dir, workdir)
}

/// Asks git which files differ from the index and which are untracked, in the
/// untracked-files mode the user's own `git status` runs in (`status.showUntrackedFiles`
/// `all`, else `normal`: the untracked cache is kept for one mode, and a run in the
/// other would throw it away). git refreshes the index as its `status` always does.
/// `None` when git cannot be run or says something we do not read: the caller walks.
pub fn ask(git: &gix::Repository, git_dir: &Path, workdir: &Path) -> Option<Changes> {
    let all = git
        .config_snapshot()
        .string("status.showUntrackedFiles")
        .is_some_and(|v| v.trim().eq_ignore_ascii_case(b"all"));
    let out = Command::new("git")
        .arg("--git-dir")
        .arg(git_dir)
        .arg("--work-tree")
        .arg(workdir)
        .args([
            "status",
            "--porcelain=v2",
            "-z",
            if all { "-uall" } else { "-unormal" },
            "--no-renames",
            "--ignore-submodules=all",
        ])
        .current_dir(workdir)
        .env_remove("GIT_OPTIONAL_LOCKS")
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    let mut changes = parse(&out.stdout)?;
    changes.answer = super::KeyBuilder::new("status").add(&out.stdout).finish();
    Some(changes)
}

/// Reads `git status --porcelain=v2 -z` (without renames); `None` on anything else.
pub fn parse(out: &[u8]) -> Option<Changes> {
    let mut changes = Changes::default();
    for record in out.split(|b| *b == 0).filter(|r| !r.is_empty()) {
        // The path is the last field; it may hold spaces, so the fields before it
        // are counted: `1 XY sub mH mI mW hH hI path`, `u XY sub m1 m2 m3 mW h1 h2 h3
        // path`, `? path`.
        let (kind, fields) = match record.first()? {
            b'1' => (b'1', 8),
            b'u' => (b'u', 10),
            b'?' => (b'?', 1),
            // `#` headers are not asked for; `2` (renames) neither; `!` (ignored)
            // neither.
            _ => return None,
        };
        let mut parts = record.splitn(fields + 1, |b| *b == b' ');
        let xy = if kind == b'?' { None } else { parts.nth(1) };
        let path = parts.last()?;
        if path.is_empty() || record.get(1) != Some(&b' ') {
            return None;
        }
        match kind {
            b'?' => match path.strip_suffix(b"/") {
                Some(dir) => changes.untracked_dirs.push(dir.into()),
                None => changes.untracked.push(path.into()),
            },
            // The work tree's column: `.` when the file is the entry's content.
            b'1' if xy?.get(1)? == &b'.' => {}
            _ => {
                changes.tracked.insert(path.into());
            }
        }
    }
    Some(changes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_porcelain_v2() {
        let out = b"1 .M N... 100644 100644 100644 aaaa aaaa a/b c\0\
                    1 A. N... 000000 100644 100644 0000 bbbb staged only\0\
                    1 .A N... 000000 000000 100644 0000 0000 intent\0\
                    u UU N... 100644 100644 100644 100644 a b c both\0\
                    ? new file\0? new dir/\0";
        let c = parse(out).expect("parsed");
        let mut tracked: Vec<_> = c.tracked.iter().map(|p| p.to_string()).collect();
        tracked.sort();
        assert_eq!(tracked, ["a/b c", "both", "intent"]);
        assert_eq!(c.untracked, [BString::from("new file")]);
        assert_eq!(c.untracked_dirs, [BString::from("new dir")]);
        assert!(parse(b"2 R. N... 100644 100644 100644 a b R100 x\0y\0").is_none());
        assert!(parse(b"# branch.oid x\0").is_none());
    }
}
