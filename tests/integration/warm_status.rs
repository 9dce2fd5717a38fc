//! Integration tests: a scan through the result cache where git keeps an untracked
//! cache (issue 55 item 3) asks `git status` what changed and takes every other tracked
//! file's content id from the index without looking at the file. Whatever git reports
//! (a file rewritten to the same size and mtime, untracked files and folders, deleted
//! and type-changed files) is looked at, and where git's own look is weaker than the
//! cache's (`core.trustctime=false`) git is not asked: the findings are always those
//! of a scan without the cache.

use std::path::Path;

use crate::cache::age;
use crate::util::Output;
use crate::util::TestRepo;

const RULE: &str = "id: no-print\nlanguage: python\nseverity: warning\nmessage: print $$$A\nrule: {pattern: print($$$A)}\n";

/// A rule project with Python files in two folders, committed, git's untracked cache
/// on, every entry old enough to be trusted.
fn repo() -> TestRepo {
    let repo = TestRepo::new();
    repo.write("sgconfig.yml", "ruleDirs: [rules]\n");
    repo.write("rules/py.yml", RULE);
    repo.write("a.py", "print(1)\n");
    repo.write("sub/b.py", "print(2)\n");
    repo.write("sub/c.py", "x = 3\n");
    repo.write("gone.py", "print(4)\n");
    repo.write("link.py", "print(5)\n");
    repo.write(".gitignore", "ignored/\n*.log.py\n");
    repo.commit_all("init");
    repo.git(&["config", "core.untrackedCache", "true"]);
    repo.git(&["update-index", "--untracked-cache"]);
    age(&repo);
    repo
}

/// `scan` in `subdir` with the cache in `dir` (`None`: `--no-cache`).
fn scan(repo: &TestRepo, dir: Option<&Path>, subdir: &str) -> Output {
    let dir = dir.map(|d| d.display().to_string());
    let mut args = match &dir {
        Some(d) => vec!["--cache-dir", d.as_str()],
        None => vec!["--no-cache"],
    };
    args.push("scan");
    repo.run_in(subdir, &args)
}

fn same(a: &Output, b: &Output, what: &str) {
    assert_eq!(a.code, b.code, "{what}: exit\n{}", b.stderr);
    assert_eq!(a.stdout, b.stdout, "{what}: stdout");
    assert_eq!(a.stderr, b.stderr, "{what}: stderr");
}

/// Rewrites `path` with `text` (the same size as before) and gives it back its mtime.
fn rewrite_keeping_mtime(repo: &TestRepo, path: &str, text: &str) {
    let file = repo.path().join(path);
    let before = std::fs::metadata(&file).expect("stat");
    assert_eq!(before.len(), text.len() as u64, "not the same size");
    let mtime = before.modified().expect("mtime");
    repo.write(path, text);
    std::fs::File::options()
        .write(true)
        .open(&file)
        .expect("open")
        .set_modified(mtime)
        .expect("set mtime");
}

#[test]
fn a_file_rewritten_to_the_same_size_and_mtime_is_read_again() {
    let repo = repo();
    let cache = tempfile::tempdir().expect("tempdir");
    let dir = cache.path().join("c");
    let warm = scan(&repo, Some(&dir), ".");
    assert!(warm.stdout.contains("print 1\n"), "{}", warm.stdout);
    same(
        &scan(&repo, None, "."),
        &scan(&repo, Some(&dir), "."),
        "warm",
    );
    rewrite_keeping_mtime(&repo, "a.py", "print(9)\n");
    let after = scan(&repo, Some(&dir), ".");
    assert!(after.stdout.contains("print 9\n"), "{}", after.stdout);
    assert!(!after.stdout.contains("print 1\n"), "{}", after.stdout);
    same(&scan(&repo, None, "."), &after, "after the rewrite");
}

/// With `core.trustctime=false` git's status does not see a rewrite that kept size and
/// mtime (only the change time moved); the cache's own look does, so git is not asked.
#[test]
fn where_git_does_not_trust_ctime_its_status_is_not_taken() {
    let repo = repo();
    repo.git(&["config", "core.trustctime", "false"]);
    let cache = tempfile::tempdir().expect("tempdir");
    let dir = cache.path().join("c");
    scan(&repo, Some(&dir), ".");
    rewrite_keeping_mtime(&repo, "a.py", "print(9)\n");
    assert_eq!(
        repo.git(&["status", "--porcelain"]),
        "",
        "git saw the rewrite"
    );
    let after = scan(&repo, Some(&dir), ".");
    assert!(after.stdout.contains("print 9\n"), "{}", after.stdout);
    same(&scan(&repo, None, "."), &after, "after the rewrite");
}

/// A cache folder, filled by a first scan of `repo`.
fn warmed(repo: &TestRepo) -> (tempfile::TempDir, std::path::PathBuf) {
    let cache = tempfile::tempdir().expect("tempdir");
    let dir = cache.path().join("c");
    scan(repo, Some(&dir), ".");
    (cache, dir)
}

#[test]
fn a_file_changed_within_the_index_second_is_read_again() {
    let repo = repo();
    let (_cache, dir) = warmed(&repo);
    // Staged now (the index written in this second), then rewritten, same size.
    repo.write("a.py", "print(7)\n");
    repo.git(&["add", "a.py"]);
    repo.write("a.py", "print(8)\n");
    let after = scan(&repo, Some(&dir), ".");
    assert!(after.stdout.contains("print 8\n"), "{}", after.stdout);
    same(&scan(&repo, None, "."), &after, "racy");
}

/// What git reports besides modified files: an untracked file, an untracked folder
/// (walked, its ignored file left out), an ignored folder, a deleted file, a file
/// turned into a symlink (skipped and counted as the walk does); from the top and
/// from a subfolder; and the same again once nothing changed.
#[test]
fn files_git_reports_are_listed_as_the_walk_lists_them() {
    let repo = repo();
    let cache = tempfile::tempdir().expect("tempdir");
    let dir = cache.path().join("c");
    scan(&repo, Some(&dir), ".");
    repo.write("new.py", "print(10)\n");
    repo.write("fresh/deep/d.py", "print(11)\n");
    repo.write("fresh/deep/x.log.py", "print(12)\n");
    repo.write("ignored/e.py", "print(13)\n");
    repo.write("sub/new.py", "print(14)\n");
    std::fs::remove_file(repo.path().join("gone.py")).expect("rm");
    std::fs::remove_file(repo.path().join("link.py")).expect("rm");
    std::os::unix::fs::symlink("a.py", repo.path().join("link.py")).expect("symlink");
    for round in ["first", "again"] {
        for subdir in [".", "sub"] {
            let through_git = scan(&repo, Some(&dir), subdir);
            let cold = scan(&repo, None, subdir);
            same(&cold, &through_git, &format!("{round}, in {subdir}"));
        }
    }
    let top = scan(&repo, Some(&dir), ".");
    for found in ["print 10\n", "print 11\n", "print 14\n"] {
        assert!(top.stdout.contains(found), "{found}: {}", top.stdout);
    }
    for left_out in ["print 12\n", "print 13\n", "print 4\n"] {
        assert!(!top.stdout.contains(left_out), "{left_out}: {}", top.stdout);
    }
}

/// Where git's untracked cache would mislead if it went by folders' modification
/// times alone: a file added to a folder whose mtime is then set back. git compares
/// the folder's change time too (the scan asks git only where `core.trustctime` holds,
/// above), so the new file is listed and scanned, as the walk finds it.
#[test]
fn a_file_added_to_a_folder_whose_mtime_is_set_back_is_found() {
    let repo = repo();
    let (_cache, dir) = warmed(&repo);
    let folder = repo.path().join("sub");
    let mtime = std::fs::metadata(&folder)
        .expect("stat")
        .modified()
        .expect("mtime");
    repo.write("sub/late.py", "print(15)\n");
    std::fs::File::open(&folder)
        .expect("open folder")
        .set_modified(mtime)
        .expect("set mtime");
    let after = scan(&repo, Some(&dir), ".");
    assert!(after.stdout.contains("print 15\n"), "{}", after.stdout);
    same(&scan(&repo, None, "."), &after, "untracked, mtime set back");
}

/// A file-system monitor (`core.fsmonitor`, a hook) whose answer git cannot use: the
/// hook fails, or answers that anything may have changed (Watchman's answer when it
/// restarted and lost its clock). git then looks at every file itself, and a change
/// the monitor never reported (a rewrite keeping size and mtime) is seen; the scan,
/// which takes git's answer, sees it too.
#[test]
fn a_monitor_that_cannot_answer_leaves_git_looking_at_every_file() {
    // Protocol version 2: the token, then the changed paths, NUL-separated; `/`: all.
    for (what, body) in [
        ("fails", "exit 1\n"),
        ("answers everything", "printf 'token-2\\0/\\0'\n"),
    ] {
        let repo = repo();
        let hook = repo.path().join(".git").join("monitor.sh");
        std::fs::write(&hook, format!("#!/bin/sh\n{body}")).expect("hook");
        std::fs::set_permissions(&hook, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .expect("chmod");
        repo.git(&["config", "core.fsmonitor", &hook.display().to_string()]);
        repo.git(&["config", "core.untrackedCache", "false"]);
        repo.git(&["update-index", "--no-untracked-cache"]);
        repo.git(&["update-index", "--fsmonitor"]);
        repo.git(&["status", "--porcelain"]);
        let cache = tempfile::tempdir().expect("tempdir");
        let dir = cache.path().join("c");
        let warm = scan(&repo, Some(&dir), ".");
        assert!(warm.stdout.contains("print 1\n"), "{what}: {}", warm.stdout);
        rewrite_keeping_mtime(&repo, "a.py", "print(9)\n");
        let after = scan(&repo, Some(&dir), ".");
        assert!(
            after.stdout.contains("print 9\n"),
            "{what}: {}",
            after.stdout
        );
        assert!(
            !after.stdout.contains("print 1\n"),
            "{what}: {}",
            after.stdout
        );
        same(&scan(&repo, None, "."), &after, what);
    }
}
