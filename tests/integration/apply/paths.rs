//! What an apply writes and refuses: bytes and modes round-tripped by undo, a stale file,
//! symlinked folders and git paths, a SHA-256 repository and a linked worktree.

use git_astedit::change::ChangeSet;
use git_astedit::change::FileChange;
use git_astedit::change::FileMode;
use git_astedit::change::PreviewMeta;
use git_astedit::repo::Repo;

use super::awkward_repo;
use super::awkward_stage;
use super::content;
use super::journal_events;
use super::set_exec;
use super::stage;
use crate::util::TestRepo;

#[test]
fn apply_then_undo_round_trips_bytes_and_modes() {
    let t = awkward_repo();
    let before = t.snapshot();
    let id = awkward_stage(&t);
    assert_eq!(t.snapshot(), before, "staging wrote to the work tree");

    let out = t.run(&["apply", "--json", "--reason", "ship it"]);
    out.assert_code(0);
    let report = out.json();
    assert_eq!(report["id"], id.as_str());
    assert_eq!(report["action"], "applied");
    assert_eq!(report["deleted"], serde_json::json!(["gone/only.txt"]));
    assert_eq!(t.read("crlf.txt"), b"one\r\nTWO\r\n");
    assert_eq!(t.read_string("bom.txt"), "\u{feff}bom still first\n");
    assert_eq!(t.read("nonl.txt"), b"still no final newline");
    assert_eq!(t.read_string("new/deep/file.txt"), "fresh\n");
    assert!(!t.exists("gone"), "the emptied folder stays behind");
    let after = t.snapshot();
    assert!(after.iter().any(|(p, _, x)| p == "run.sh" && *x));
    assert!(after.iter().any(|(p, _, x)| p == "keep.txt" && *x));
    assert!(t.astedit_refs().is_empty());
    assert!(!t.path().join(".git/astedit.lock").exists());
    assert!(!t.path().join(".git/astedit-applying.json").exists());
    // git agrees the work tree now holds the preview's after side.
    let status = t.git(&["status", "--porcelain"]);
    assert!(
        status.contains(" M crlf.txt") && status.contains(" D gone/only.txt"),
        "{status}"
    );

    let out = t.run(&["undo", "--json"]);
    out.assert_code(0);
    assert_eq!(out.json()["action"], "undone");
    assert_eq!(t.snapshot(), before, "undo is not byte-identical");
    assert_eq!(t.git(&["status", "--porcelain"]), "");
    // Undo made the preview pending again, so it applies again.
    assert_eq!(t.astedit_refs(), vec![format!("refs/astedit/{id}")]);
    t.run(&["apply", &id[..6]]).assert_code(0);
    assert_eq!(t.snapshot(), after);
    t.run(&["undo", &id]).assert_code(0);
    assert_eq!(t.snapshot(), before);
    t.run(&["undo"]).assert_code(1);

    let kinds: Vec<String> = journal_events(&t)
        .iter()
        .map(|e| e["event"].as_str().unwrap_or("").to_string())
        .collect();
    assert_eq!(kinds, ["undone", "applied", "undone", "applied", "staged"]);
    let events = journal_events(&t);
    assert_eq!(events[3]["reason"], "ship it");
    assert_eq!(events[3]["who"], "Test Committer <committer@example.com>");
    assert_eq!(events[3]["files"].as_array().map(Vec::len), Some(7));
    let text = t.run(&["log"]);
    text.assert_code(0);
    assert!(
        text.stdout.lines().count() == 5 && text.stdout.contains("applied"),
        "{}",
        text.stdout
    );
    t.fsck();
}

#[test]
fn stale_file_rejects_the_whole_apply() {
    let t = TestRepo::new();
    t.write("a.txt", "a\n");
    t.write("b.txt", "b\n");
    t.commit_all("init");
    let id = stage(
        &t,
        &[
            ("a.txt", Some(b"A\n"), FileMode::Regular),
            ("b.txt", Some(b"B\n"), FileMode::Regular),
            ("c.txt", Some(b"C\n"), FileMode::Regular),
        ],
    );
    t.write("b.txt", "edited by someone\n");
    t.write("c.txt", "appeared\n");
    let before = t.snapshot();
    let out = t.run(&["apply"]);
    out.assert_code(3);
    assert!(out.stderr.contains("b.txt: modified"), "{}", out.stderr);
    assert!(out.stderr.contains("c.txt: exists"), "{}", out.stderr);
    assert!(!out.stderr.contains("a.txt:"), "{}", out.stderr);
    assert_eq!(t.snapshot(), before);
    assert_eq!(t.astedit_refs(), vec![format!("refs/astedit/{id}")]);
    let out = t.run(&["apply", "--json"]);
    out.assert_code(3);
    let err = &out.json()["error"];
    assert_eq!(err["code"], "stale");
    // Agents get the stale paths as data, not only inside the message.
    assert_eq!(err["details"]["id"], id.as_str());
    let paths = err["details"]["paths"].as_array().expect("paths");
    assert_eq!(paths.len(), 2, "{paths:?}");
    assert_eq!(paths[0]["path"], "b.txt");
    assert!(paths[0]["what"]
        .as_str()
        .is_some_and(|w| w.starts_with("modified")));
    assert_eq!(paths[1]["path"], "c.txt");
    assert!(paths[1]["what"]
        .as_str()
        .is_some_and(|w| w.starts_with("exists")));
    // A mode change is a change too.
    t.write("b.txt", "b\n");
    std::fs::remove_file(t.path().join("c.txt")).expect("rm");
    set_exec(&t, "a.txt");
    let out = t.run(&["apply"]);
    out.assert_code(3);
    assert!(out.stderr.contains("a.txt: mode changed"), "{}", out.stderr);
    let repo = Repo::discover_from(t.path()).expect("open");
    assert_eq!(git_astedit::txn::list(&repo).expect("list").len(), 1);
}

#[test]
fn symlinked_folder_and_git_paths_are_refused() {
    let t = TestRepo::new();
    t.write("sub/x.txt", "x\n");
    t.commit_all("init");
    let id = stage(&t, &[("sub/x.txt", Some(b"changed\n"), FileMode::Regular)]);
    // After staging, the folder becomes a symlink to an outside folder with the same file.
    let outside = tempfile::tempdir().expect("tempdir");
    std::fs::write(outside.path().join("x.txt"), "x\n").expect("write");
    std::fs::remove_dir_all(t.path().join("sub")).expect("rm");
    std::os::unix::fs::symlink(outside.path(), t.path().join("sub")).expect("symlink");
    let out = t.run(&["apply", &id, "--json"]);
    out.assert_code(4);
    assert_eq!(out.json()["error"]["code"], "refused");
    assert!(out.stdout.contains("symlink"), "{}", out.stdout);
    assert_eq!(
        std::fs::read(outside.path().join("x.txt")).expect("read"),
        b"x\n"
    );
    assert_eq!(t.astedit_refs().len(), 1);

    // Staging refuses .git paths…
    let repo = Repo::discover_from(t.path()).expect("open");
    let changes = ChangeSet {
        changes: vec![FileChange {
            path: ".git/hooks/pre-commit".into(),
            before: None,
            after: content(b"#!/bin/sh\n", FileMode::Executable),
        }],
    };
    let err = git_astedit::txn::stage(&repo, &changes, &PreviewMeta::default())
        .expect_err("staged a .git path");
    use git_astedit::error::Classify;
    assert_eq!(err.exit(), git_astedit::Exit::Refused);
    // …and apply refuses one in a preview made by other means.
    let id = craft_preview(&t, ".git", "hooks", "post-checkout");
    let out = t.run(&["apply", &id]);
    out.assert_code(4);
    assert!(out.stderr.contains(".git"), "{}", out.stderr);
    assert!(!t.path().join(".git/hooks/post-checkout").exists());
}

/// Builds a preview with git plumbing that adds `<a>/<b>/<c>` (bypassing `stage`'s checks).
fn craft_preview(t: &TestRepo, a: &str, b: &str, c: &str) -> String {
    let blob = pipe_git(
        t,
        &["hash-object", "-w", "--stdin"],
        "#!/bin/sh\necho pwned\n",
    );
    let t1 = pipe_git(t, &["mktree"], &format!("100755 blob {blob}\t{c}\n"));
    let t2 = pipe_git(t, &["mktree"], &format!("040000 tree {t1}\t{b}\n"));
    let t3 = pipe_git(
        t,
        &["mktree", "--missing"],
        &format!("040000 tree {t2}\t{a}\n"),
    );
    let empty = pipe_git(t, &["mktree"], "");
    let base = t
        .git(&["commit-tree", &empty, "-m", "before"])
        .trim()
        .to_string();
    let msg = "evil\n\n--- astedit-meta v1 ---\n{\"staged_at_ns\": 1, \"meta\": {\"kind\": \"patch\", \"summary\": \"evil\"}}\n--- end astedit-meta ---\n";
    let p = pipe_git(t, &["commit-tree", &t3, "-p", &base], msg);
    let id = p[..12].to_string();
    t.git(&["update-ref", &format!("refs/astedit/{id}"), &p]);
    id
}

fn pipe_git(t: &TestRepo, args: &[&str], stdin: &str) -> String {
    let mut cmd = std::process::Command::new("git");
    cmd.current_dir(t.path())
        .args(args)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_AUTHOR_NAME", "T")
        .env("GIT_AUTHOR_EMAIL", "t@e")
        .env("GIT_COMMITTER_NAME", "T")
        .env("GIT_COMMITTER_EMAIL", "t@e")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped());
    let mut child = cmd.spawn().expect("git");
    {
        use std::io::Write;
        let mut input = child.stdin.take().expect("stdin");
        input.write_all(stdin.as_bytes()).expect("write");
    }
    let out = child.wait_with_output().expect("git");
    assert!(out.status.success(), "git {args:?} failed");
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

#[test]
fn sha256_repository_and_linked_worktree() {
    let t = TestRepo::with_init_args(&["--object-format=sha256"]);
    t.write("a.txt", "a\n");
    t.commit_all("init");
    let id = stage(&t, &[("a.txt", Some(b"A\n"), FileMode::Regular)]);
    t.run(&["apply", &id]).assert_code(0);
    assert_eq!(t.read_string("a.txt"), "A\n");
    t.run(&["undo"]).assert_code(0);
    assert_eq!(t.read_string("a.txt"), "a\n");
    t.fsck();

    // A linked work tree: its apply takes its own lock and the main tree's, the record is
    // its own.
    let t = TestRepo::new();
    t.write("a.txt", "a\n");
    t.commit_all("init");
    t.git(&["worktree", "add", "-q", "linked"]);
    let linked = t.path().join("linked");
    let repo = Repo::discover_from(&linked).expect("open linked");
    let changes = ChangeSet {
        changes: vec![FileChange {
            path: "a.txt".into(),
            before: content(b"a\n", FileMode::Regular),
            after: content(b"linked\n", FileMode::Regular),
        }],
    };
    let id = git_astedit::txn::stage(&repo, &changes, &PreviewMeta::default())
        .expect("stage")
        .id;
    let out = t.run_in("linked", &["apply", &id]);
    out.assert_code(0);
    assert_eq!(
        std::fs::read(linked.join("a.txt")).expect("read"),
        b"linked\n"
    );
    assert_eq!(t.read_string("a.txt"), "a\n");
    let out = t.run_with(
        "linked",
        &["undo"],
        &[("GIT_ASTEDIT_FAULT", "after-rename:1")],
        None,
    );
    assert_ne!(out.code, 0);
    // The main work tree does not recover the linked one's run…
    t.run(&["log"]).assert_code(0);
    assert!(t
        .path()
        .join(".git/worktrees/linked/astedit-applying.json")
        .exists());
    // …the linked one does.
    let out = t.run_in("linked", &["log"]);
    out.assert_code(0);
    assert!(out.stderr.contains("completed"), "{}", out.stderr);
    assert_eq!(std::fs::read(linked.join("a.txt")).expect("read"), b"a\n");
    t.fsck();
}

#[test]
fn symlinks_and_mode_only_changes_round_trip() {
    let t = TestRepo::new();
    t.write("target-a.txt", "a\n");
    t.write("tool", "#!/bin/sh\n");
    set_exec(&t, "tool");
    std::os::unix::fs::symlink("target-a.txt", t.path().join("link")).expect("symlink");
    t.commit_all("init");
    let before = t.snapshot();
    stage(
        &t,
        &[
            ("link", Some(b"target-b.txt"), FileMode::Symlink),
            ("tool", Some(b"#!/bin/sh\n"), FileMode::Regular),
        ],
    );
    t.run(&["apply"]).assert_code(0);
    let link = std::fs::read_link(t.path().join("link")).expect("still a link");
    assert_eq!(link.to_string_lossy(), "target-b.txt");
    let snap = t.snapshot();
    assert!(
        snap.iter().any(|(p, _, x)| p == "tool" && !*x),
        "exec bit kept"
    );
    assert_eq!(t.git(&["status", "--porcelain"]), " M link\n M tool\n");
    t.run(&["undo"]).assert_code(0);
    assert_eq!(t.snapshot(), before);
    assert_eq!(t.git(&["status", "--porcelain"]), "");
}
