//! Integration tests: `apply`, `undo`, `discard`, `log`, `gc`, crash recovery.
//!
//! Previews are staged through the library (`txn::stage` with a hand-built change
//! set), then the real binary drives everything else.

use git_astedit::change::ChangeSet;
use git_astedit::change::FileChange;
use git_astedit::change::FileContent;
use git_astedit::change::FileMode;
use git_astedit::change::PreviewMeta;
use git_astedit::repo::Repo;

use crate::util::TestRepo;

fn content(bytes: &[u8], mode: FileMode) -> Option<FileContent> {
    Some(FileContent {
        bytes: bytes.to_vec(),
        mode,
    })
}

/// Stages a change set read against the current work tree: `edits` are
/// (path, new bytes or None to delete, new mode).
fn stage(t: &TestRepo, edits: &[(&str, Option<&[u8]>, FileMode)]) -> String {
    let repo = Repo::discover_from(t.path()).expect("open repo");
    let mut changes = ChangeSet::default();
    for (path, after, mode) in edits {
        let abs = t.path().join(path);
        let before = match std::fs::symlink_metadata(&abs) {
            Ok(meta) => content(
                &std::fs::read(&abs).expect("read"),
                FileMode::from_metadata(&meta),
            ),
            Err(_) => None,
        };
        changes.changes.push(FileChange {
            path: path.to_string(),
            before,
            after: after.and_then(|b| content(b, *mode)),
        });
    }
    let meta = PreviewMeta {
        kind: "edit".into(),
        summary: format!("{} files", edits.len()),
        reason: Some("test".into()),
        tool_version: git_astedit::VERSION.into(),
        ..PreviewMeta::default()
    };
    git_astedit::txn::stage(&repo, &changes, &meta)
        .expect("stage")
        .id
}

#[test]
fn stage_writes_preview_commits_and_journal() {
    let t = TestRepo::new();
    t.write("a.txt", "one\n");
    t.write("gone.txt", "bye\n");
    t.commit_all("init");
    let id = stage(
        &t,
        &[
            ("a.txt", Some(b"two\n"), FileMode::Regular),
            ("gone.txt", None, FileMode::Regular),
            ("new/dir/b.txt", Some(b"new\n"), FileMode::Executable),
        ],
    );
    assert_eq!(id.len(), 12);
    assert_eq!(t.astedit_refs(), vec![format!("refs/astedit/{id}")]);
    let r = format!("refs/astedit/{id}");
    // P has the after side, B (its parent, no parent of its own) the before side.
    assert_eq!(t.git(&["show", &format!("{r}:a.txt")]), "two\n");
    assert_eq!(t.git(&["show", &format!("{r}~:a.txt")]), "one\n");
    assert_eq!(t.git(&["show", &format!("{r}~:gone.txt")]), "bye\n");
    assert!(
        t.git_output(&["cat-file", "-e", &format!("{r}:gone.txt")])
            .code
            != 0
    );
    assert!(
        t.git_output(&["cat-file", "-e", &format!("{r}~:new/dir/b.txt")])
            .code
            != 0
    );
    let ls = t.git(&["ls-tree", "-r", &r]);
    assert!(ls.contains("100755 blob"), "{ls}");
    assert_eq!(t.git(&["rev-list", "--count", &r]).trim(), "2");
    let diff = t.git(&["diff", "--stat", &format!("{r}~"), &r]);
    assert!(diff.contains("3 files changed"), "{diff}");
    // The journal names the preview and keeps it reachable.
    let msg = t.git(&["log", "-1", "--format=%B", "refs/astedit-journal"]);
    let event: serde_json::Value = serde_json::from_str(msg.trim()).expect("event json");
    assert_eq!(event["event"], "staged");
    assert_eq!(event["id"], id.as_str());
    let parents = t.git(&["log", "-1", "--format=%P", "refs/astedit-journal"]);
    assert!(parents
        .trim()
        .ends_with(&t.git(&["rev-parse", &r]).trim().to_string()));
    t.fsck();
    // Nothing in the work tree moved.
    assert_eq!(t.read_string("a.txt"), "one\n");
    assert!(!t.exists("new"));
}

#[test]
fn list_find_and_discard() {
    let t = TestRepo::new();
    t.write("a.txt", "one\n");
    t.commit_all("init");
    let first = stage(&t, &[("a.txt", Some(b"two\n"), FileMode::Regular)]);
    let second = stage(&t, &[("a.txt", Some(b"three\n"), FileMode::Regular)]);
    let repo = Repo::discover_from(t.path()).expect("open");
    let list = git_astedit::txn::list(&repo).expect("list");
    assert_eq!(
        list.iter().map(|p| p.id.clone()).collect::<Vec<_>>(),
        vec![second.clone(), first.clone()]
    );
    assert_eq!(
        git_astedit::txn::find(&repo, None).expect("newest").id,
        second
    );
    assert_eq!(
        git_astedit::txn::find(&repo, Some(&first[..8]))
            .expect("prefix")
            .id,
        first
    );
    let err = git_astedit::txn::find(&repo, Some("zz")).expect_err("bad id");
    assert_eq!(
        err.to_string(),
        "'zz' is not a preview id (expected hex digits)"
    );
    // Discard through the binary, with a reason.
    let out = t.run(&["discard", &first[..8], "--reason", "wrong idea", "--json"]);
    out.assert_code(0);
    assert_eq!(out.json()["id"], first.as_str());
    assert_eq!(t.astedit_refs(), vec![format!("refs/astedit/{second}")]);
    t.run(&["discard", &first]).assert_code(2);
    let msg = t.git(&["log", "-1", "--format=%B", "refs/astedit-journal"]);
    let event: serde_json::Value = serde_json::from_str(msg.trim()).expect("event json");
    assert_eq!(event["event"], "discarded");
    assert_eq!(event["reason"], "wrong idea");
    t.git(&["gc", "-q", "--prune=now"]);
    t.git(&["cat-file", "-e", &format!("{first}^{{commit}}")]);
    t.fsck();
}

/// The work tree of the round-trip tests: awkward bytes of every kind.
fn awkward_repo() -> TestRepo {
    let t = TestRepo::new();
    t.write("crlf.txt", "one\r\ntwo\r\n");
    t.write("bom.txt", "\u{feff}bom first\n");
    t.write("nonl.txt", "no final newline");
    t.write("run.sh", "#!/bin/sh\necho hi\n");
    set_exec(&t, "run.sh");
    t.write("gone/only.txt", "to be deleted\n");
    t.write("keep.txt", "untouched\n");
    t.commit_all("init");
    t
}

fn set_exec(t: &TestRepo, path: &str) {
    use std::os::unix::fs::PermissionsExt;
    let p = t.path().join(path);
    let mut perm = std::fs::metadata(&p).expect("meta").permissions();
    perm.set_mode(0o755);
    std::fs::set_permissions(&p, perm).expect("chmod");
}

fn awkward_stage(t: &TestRepo) -> String {
    stage(
        t,
        &[
            ("crlf.txt", Some(b"one\r\nTWO\r\n"), FileMode::Regular),
            (
                "bom.txt",
                Some("\u{feff}bom still first\n".as_bytes()),
                FileMode::Regular,
            ),
            (
                "nonl.txt",
                Some(b"still no final newline"),
                FileMode::Regular,
            ),
            (
                "run.sh",
                Some(b"#!/bin/sh\necho bye\n"),
                FileMode::Executable,
            ),
            ("keep.txt", Some(b"untouched\n"), FileMode::Executable),
            ("gone/only.txt", None, FileMode::Regular),
            ("new/deep/file.txt", Some(b"fresh\n"), FileMode::Regular),
        ],
    )
}

fn journal_events(t: &TestRepo) -> Vec<serde_json::Value> {
    let out = t.run(&["log", "--json"]);
    out.assert_code(0);
    out.json()["events"].as_array().cloned().unwrap_or_default()
}

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
    assert_eq!(out.json()["error"]["code"], "stale");
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
