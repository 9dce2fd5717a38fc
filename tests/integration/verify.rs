//! `verify`: a preview's check in a temporary worktree; the user's tree untouched.

use std::time::Duration;
use std::time::Instant;

use crate::util::TestRepo;

fn staged() -> TestRepo {
    let repo = TestRepo::new();
    repo.write("a.ts", "foo(1);\nfoo(2);\n");
    repo.write("keep.ts", "x();\n");
    repo.commit_all("base");
    repo.run(&["edit", "-p", "foo($A)", "-r", "bar($A)"])
        .assert_code(0);
    repo
}

/// The linked worktrees git knows of (the main one included).
fn worktrees(repo: &TestRepo) -> usize {
    repo.git(&["worktree", "list", "--porcelain"])
        .lines()
        .filter(|l| l.starts_with("worktree "))
        .count()
}

#[test]
fn the_command_sees_the_preview_and_the_tree_is_untouched() {
    let repo = staged();
    let before = repo.snapshot();
    let out = repo.run(&["--json", "verify", "--", "grep", "-c", "bar", "a.ts"]);
    out.assert_code(0);
    let v = out.json();
    assert_eq!(v["passed"], true);
    assert_eq!(v["exit_code"], 0);
    assert_eq!(v["output"], "2\n");
    assert_eq!(v["files"], 1);
    crate::contract::validate(&repo, "verify", &v);
    // A failing command: exit 1, its output kept.
    let out = repo.run(&["verify", "--", "grep", "foo", "a.ts"]);
    out.assert_code(1);
    assert!(
        out.stderr.contains("failed: `grep foo a.ts` exited 1"),
        "{}",
        out.stderr
    );
    // A command that writes and deletes in its worktree leaves the user's alone.
    let out = repo.run(&[
        "verify",
        "--",
        "sh",
        "-c",
        "echo x > new.txt; rm keep.ts a.ts",
    ]);
    out.assert_code(0);
    assert_eq!(repo.snapshot(), before);
    assert_eq!(worktrees(&repo), 1);
    // The preview is still pending, nothing applied.
    assert!(repo.read_string("a.ts").contains("foo(1)"));
    repo.run(&["apply"]).assert_code(0);
    repo.fsck();
}

#[test]
fn a_command_that_hangs_is_killed_at_the_timeout() {
    let repo = staged();
    let started = Instant::now();
    let out = repo.run(&[
        "--json",
        "verify",
        "--timeout",
        "1",
        "--",
        "sh",
        "-c",
        "sleep 60 & sleep 60",
    ]);
    out.assert_code(1);
    let v = out.json();
    assert_eq!(v["timed_out"], true);
    assert_eq!(v["passed"], false);
    // Killed with what it started: the run did not wait the minute out.
    assert!(started.elapsed() < Duration::from_secs(50));
    assert_eq!(worktrees(&repo), 1);
}

#[test]
fn a_killed_verify_leaves_a_worktree_the_next_one_removes() {
    let repo = staged();
    let mut child = repo
        .command("", &["verify", "--", "sleep", "30"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("spawn");
    // Wait until its worktree exists, then kill it as a crash would.
    let deadline = Instant::now() + Duration::from_secs(20);
    while worktrees(&repo) < 2 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(worktrees(&repo), 2);
    child.kill().expect("kill");
    child.wait().expect("wait");
    repo.run(&["verify", "--", "true"]).assert_code(0);
    assert_eq!(worktrees(&repo), 1);
}

#[test]
fn bad_input() {
    let repo = staged();
    // No command.
    repo.run(&["verify"]).assert_code(2);
    // A program that does not exist: exit 2, named.
    let out = repo.run(&["--json", "verify", "--", "no-such-program-here"]);
    out.assert_code(2);
    assert_eq!(out.json()["error"]["code"], "verify-spawn");
    // An unknown preview.
    repo.run(&["verify", "ffffffff", "--", "true"])
        .assert_code(2);
    assert_eq!(worktrees(&repo), 1);
}
