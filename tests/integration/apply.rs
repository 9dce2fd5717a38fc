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
pub(crate) fn stage(t: &TestRepo, edits: &[(&str, Option<&[u8]>, FileMode)]) -> String {
    let repo = Repo::discover_from(t.path()).expect("open repo");
    let mut changes = ChangeSet::default();
    for (path, after, mode) in edits {
        let abs = t.path().join(path);
        let before = match std::fs::symlink_metadata(&abs) {
            Ok(meta) if meta.file_type().is_symlink() => {
                use std::os::unix::ffi::OsStrExt;
                let target = std::fs::read_link(&abs).expect("readlink");
                content(target.as_os_str().as_bytes(), FileMode::Symlink)
            }
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
        kind: git_astedit::change::PreviewKind::Edit,
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
    let out = t.run(&["discard", &first]);
    out.assert_code(2);
    assert!(out.stderr.contains("was discarded"), "{}", out.stderr);
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

/// What the awkward preview's after side looks like, from a twin repository.
fn awkward_after() -> Vec<(String, Vec<u8>, bool)> {
    let twin = awkward_repo();
    awkward_stage(&twin);
    twin.run(&["apply"]).assert_code(0);
    twin.snapshot()
}

fn no_leftovers(t: &TestRepo) {
    assert!(!t.path().join(".git/astedit.lock").exists(), "lock left");
    assert!(
        !t.path().join(".git/astedit.lock.takeover").exists(),
        "takeover lock left"
    );
    assert!(
        !t.path().join(".git/astedit-applying.json").exists(),
        "record left"
    );
}

/// Injects `point` into an apply, then checks that the next command leaves the tree
/// wholly before (`rolled-back`) or wholly after (`completed`).
fn fault_case(point: &str, completes: bool) {
    let t = awkward_repo();
    let before = t.snapshot();
    let after = awkward_after();
    let id = awkward_stage(&t);
    let out = t.run_with(".", &["apply"], &[("GIT_ASTEDIT_FAULT", point)], None);
    assert_ne!(
        out.code, 0,
        "{point}: the fault did not fire: {}",
        out.stderr
    );
    assert!(
        out.stderr.contains("fault injected"),
        "{point}: {}",
        out.stderr
    );
    assert!(
        t.path().join(".git/astedit-applying.json").exists(),
        "{point}: no record"
    );

    let out = t.run(&["log", "--json"]);
    out.assert_code(0);
    let action = if completes {
        "completed"
    } else {
        "rolled back"
    };
    assert!(out.stderr.contains(action), "{point}: {}", out.stderr);
    no_leftovers(&t);
    let events = out.json()["events"].as_array().cloned().unwrap_or_default();
    assert_eq!(events[0]["event"], "recovered", "{point}");
    assert_eq!(events[0]["op"], "apply");
    if completes {
        assert_eq!(t.snapshot(), after, "{point}: not wholly after");
        assert_eq!(events[0]["action"], "completed");
        assert_eq!(events[1]["event"], "applied", "{point}");
        assert!(t.astedit_refs().is_empty(), "{point}");
        t.run(&["undo"]).assert_code(0);
        assert_eq!(t.snapshot(), before, "{point}: undo after recovery");
    } else {
        assert_eq!(t.snapshot(), before, "{point}: not wholly before");
        assert_eq!(events[0]["action"], "rolled-back");
        assert_eq!(t.astedit_refs(), vec![format!("refs/astedit/{id}")]);
        t.run(&["apply"]).assert_code(0);
        assert_eq!(t.snapshot(), after, "{point}: apply after rollback");
    }
    t.fsck();
}

#[test]
fn fault_after_record_rolls_back() {
    fault_case("after-record", false);
}

#[test]
fn fault_after_mkdir_rolls_back() {
    fault_case("after-mkdir", false);
}

#[test]
fn fault_after_tempfiles_rolls_back() {
    fault_case("after-tempfiles", false);
}

#[test]
fn fault_after_commit_point_completes() {
    fault_case("after-commit", true);
}

#[test]
fn fault_after_first_rename_completes() {
    fault_case("after-rename:1", true);
}

#[test]
fn fault_after_third_rename_completes() {
    fault_case("after-rename:3", true);
}

#[test]
fn fault_after_renames_completes() {
    fault_case("after-renames", true);
}

#[test]
fn fault_after_deletes_completes() {
    fault_case("after-deletes", true);
}

#[test]
fn fault_after_journal_completes() {
    fault_case("after-journal", true);
}

#[test]
fn faults_during_undo_recover_too() {
    let t = awkward_repo();
    let before = t.snapshot();
    awkward_stage(&t);
    t.run(&["apply"]).assert_code(0);
    let after = t.snapshot();
    // Before the commit point: the undo is rolled back, the apply stands.
    let out = t.run_with(
        ".",
        &["undo"],
        &[("GIT_ASTEDIT_FAULT", "after-tempfiles")],
        None,
    );
    assert_ne!(out.code, 0);
    t.run(&["log"]).assert_code(0);
    no_leftovers(&t);
    assert_eq!(t.snapshot(), after);
    // After a rename: the undo is completed.
    let out = t.run_with(
        ".",
        &["undo"],
        &[("GIT_ASTEDIT_FAULT", "after-rename:2")],
        None,
    );
    assert_ne!(out.code, 0);
    let out = t.run(&["log", "--json"]);
    out.assert_code(0);
    assert!(out.stderr.contains("undo"), "{}", out.stderr);
    no_leftovers(&t);
    assert_eq!(t.snapshot(), before);
    let events = out.json()["events"].as_array().cloned().unwrap_or_default();
    assert_eq!(events[0]["event"], "recovered");
    assert_eq!(events[0]["op"], "undo");
    assert_eq!(events[1]["event"], "undone");
    assert_eq!(t.astedit_refs().len(), 1);
}

#[test]
fn a_lock_is_never_waited_on() {
    let t = TestRepo::new();
    t.write("a.txt", "a\n");
    let id = stage(&t, &[("a.txt", Some(b"b\n"), FileMode::Regular)]);
    let lock = t.path().join(".git/astedit.lock");
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| "unknown".into());
    // A live holder (this test process).
    let me = format!(
        "{{\"pid\":{},\"host\":\"{host}\",\"time\":0,\"op\":\"apply\"}}",
        std::process::id()
    );
    std::fs::write(&lock, me).expect("write lock");
    let out = t.run(&["apply", "--json"]);
    out.assert_code(6);
    assert_eq!(out.json()["error"]["code"], "locked");
    // A dead holder's lock is broken (tests/integration/recovery.rs has the details).
    std::fs::remove_file(&lock).expect("rm lock");
    t.run(&["apply", &id]).assert_code(0);
    assert_eq!(t.read_string("a.txt"), "b\n");
}

/// A repository with `n` files and a staged preview that rewrites all of them.
fn many_files(n: usize) -> (TestRepo, String) {
    let t = TestRepo::new();
    let mut changes = ChangeSet::default();
    for i in 0..n {
        let path = format!("d{}/f{i:05}.txt", i % 10);
        let before = format!("line {i}\n");
        t.write(&path, &before);
        changes.changes.push(FileChange {
            path,
            before: content(before.as_bytes(), FileMode::Regular),
            after: content(format!("LINE {i}\n").as_bytes(), FileMode::Regular),
        });
    }
    let repo = Repo::discover_from(t.path()).expect("open");
    let meta = PreviewMeta {
        kind: git_astedit::change::PreviewKind::Edit,
        summary: format!("{n} files"),
        ..PreviewMeta::default()
    };
    let id = git_astedit::txn::stage(&repo, &changes, &meta)
        .expect("stage")
        .id;
    (t, id)
}

fn wholly(t: &TestRepo, n: usize) -> &'static str {
    let snap = t.snapshot();
    let files: Vec<_> = snap.iter().filter(|(p, _, _)| !p.ends_with('/')).collect();
    assert_eq!(
        files.len(),
        n,
        "stray files: {:?}",
        files.iter().map(|f| &f.0).take(5).collect::<Vec<_>>()
    );
    let upper = files
        .iter()
        .filter(|(_, b, _)| b.starts_with(b"LINE"))
        .count();
    match upper {
        0 => "before",
        u if u == n => "after",
        u => panic!("torn tree: {u} of {n} files applied"),
    }
}

#[test]
fn sigkill_during_a_large_apply_leaves_a_whole_tree() {
    const N: usize = 3000;
    // Early: while temp files are written (rolled back); late: once renames began
    // (completed). Either way the next command sees a whole tree.
    for late in [false, true] {
        let (t, _id) = many_files(N);
        let mut child = t.command(".", &["apply"]).spawn().expect("spawn");
        let record = t.path().join(".git/astedit-applying.json");
        let probe = t.path().join("d0/f00000.txt");
        let start = std::time::Instant::now();
        loop {
            let ready = if late {
                std::fs::read(&probe)
                    .map(|b| b.starts_with(b"LINE"))
                    .unwrap_or(false)
            } else {
                record.exists()
            };
            if ready || start.elapsed().as_secs() > 60 {
                break;
            }
            if let Ok(Some(_)) = child.try_wait() {
                break;
            }
        }
        let _ = child.kill();
        let status = child.wait().expect("wait");
        let out = t.run(&["log", "--json"]);
        out.assert_code(0);
        no_leftovers(&t);
        let state = wholly(&t, N);
        eprintln!(
            "sigkill (late={late}): killed={} state={state}",
            !status.success()
        );
        if status.success() {
            assert_eq!(state, "after");
        } else {
            let expected = if out.stderr.contains("completed") {
                "after"
            } else {
                "before"
            };
            assert_eq!(state, expected, "{}", out.stderr);
        }
        t.fsck();
    }
}

fn quiet(mut cmd: std::process::Command) -> std::process::Command {
    cmd.stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    cmd
}

#[test]
fn two_applies_racing_one_wins() {
    let (t, id) = many_files(300);
    let spawn = || {
        t.command(".", &["apply", &id])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("spawn")
    };
    let (a, b) = (spawn(), spawn());
    let (a, b) = (
        a.wait_with_output().expect("a"),
        b.wait_with_output().expect("b"),
    );
    let mut codes = [a.status.code(), b.status.code()];
    codes.sort();
    assert!(
        codes == [Some(0), Some(3)] || codes == [Some(0), Some(6)],
        "{codes:?}\n{}\n{}",
        String::from_utf8_lossy(&a.stderr),
        String::from_utf8_lossy(&b.stderr)
    );
    assert_eq!(wholly(&t, 300), "after");
    let applied = journal_events(&t)
        .iter()
        .filter(|e| e["event"] == "applied")
        .count();
    assert_eq!(applied, 1);
    no_leftovers(&t);
    // An apply racing an undo: one wins, the tree is whole.
    let (u, a) = (
        quiet(t.command(".", &["undo"])).spawn().expect("undo"),
        quiet(t.command(".", &["apply", &id]))
            .spawn()
            .expect("apply"),
    );
    let (u, a) = (
        u.wait_with_output().expect("u"),
        a.wait_with_output().expect("a"),
    );
    assert!(u.status.success() || a.status.success() || u.status.code() == Some(6));
    let _ = wholly(&t, 300);
    no_leftovers(&t);
}

#[test]
fn gc_prunes_and_git_gc_keeps_what_the_journal_names() {
    let t = TestRepo::new();
    t.write("a.txt", "a\n");
    t.commit_all("init");
    let applied = stage(&t, &[("a.txt", Some(b"A\n"), FileMode::Regular)]);
    t.run(&["apply"]).assert_code(0);
    let pending = stage(&t, &[("b.txt", Some(b"b\n"), FileMode::Regular)]);
    let discarded = stage(&t, &[("c.txt", Some(b"c\n"), FileMode::Regular)]);
    t.run(&["discard", &discarded]).assert_code(0);
    let p_discarded = t.git(&["rev-parse", &format!("{discarded}^{{commit}}")]);

    t.git(&["gc", "-q", "--prune=now"]);
    t.fsck();
    t.run(&["undo", &applied]).assert_code(0);
    assert_eq!(t.read_string("a.txt"), "a\n");

    let out = t.run(&["gc", "--json"]);
    out.assert_code(0);
    assert_eq!(out.json()["pruned_events"], 0);
    assert_eq!(t.astedit_refs().len(), 2);
    t.run(&["gc", "--expire", "soon"]).assert_code(2);

    let out = t.run(&["gc", "--expire", "now", "--json"]);
    out.assert_code(0);
    let report = out.json();
    let mut expired: Vec<String> = report["expired_previews"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    expired.sort();
    let mut want = vec![applied.clone(), pending.clone()];
    want.sort();
    assert_eq!(expired, want);
    assert!(t.astedit_refs().is_empty());
    assert_eq!(t.git(&["for-each-ref", "refs/astedit-journal"]), "");
    t.git(&["gc", "-q", "--prune=now"]);
    assert_ne!(
        t.git_output(&["cat-file", "-e", p_discarded.trim()]).code,
        0
    );
    t.fsck();
    assert_eq!(
        t.run(&["log", "--json"]).json()["events"],
        serde_json::json!([])
    );
}

#[test]
fn apply_commit_holds_exactly_the_preview_with_trailers() {
    let t = TestRepo::new();
    t.write("a.txt", "a\n");
    t.write("b.txt", "b\n");
    t.write("other.txt", "o\n");
    t.commit_all("init");
    t.write("other.txt", "unrelated, uncommitted\n");
    let id = stage(
        &t,
        &[
            ("a.txt", Some(b"A\n"), FileMode::Regular),
            ("b.txt", None, FileMode::Regular),
            ("c/d.txt", Some(b"d\n"), FileMode::Executable),
        ],
    );
    let p = t
        .git(&["rev-parse", &format!("refs/astedit/{id}")])
        .trim()
        .to_string();
    let old_head = t.git(&["rev-parse", "HEAD"]).trim().to_string();
    let out = t.run(&[
        "apply",
        "--commit",
        "-m",
        "codemod: shout",
        "--reason",
        "loudness",
        "--json",
    ]);
    out.assert_code(0);
    let commit = out.json()["commit"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert_eq!(t.git(&["rev-parse", "HEAD"]).trim(), commit);
    assert_eq!(t.git(&["rev-parse", "HEAD~"]).trim(), old_head);
    assert_eq!(
        t.git(&["diff", "HEAD~", "HEAD"]),
        t.git(&["diff", &format!("{p}~"), &p])
    );
    let msg = t.git(&["log", "-1", "--format=%B"]);
    assert!(msg.starts_with("codemod: shout\n"), "{msg}");
    let trailers = t.git(&["log", "-1", "--format=%(trailers:only)"]);
    assert!(
        trailers.contains(&format!("Astedit-Id: {id}")),
        "{trailers}"
    );
    assert!(trailers.contains("Astedit-Kind: edit"), "{trailers}");
    assert!(trailers.contains("Astedit-Reason: loudness"), "{trailers}");
    assert_eq!(t.git(&["status", "--porcelain"]), " M other.txt\n");
    assert_eq!(
        t.git(&["reflog", "-1", "--format=%gs"]).trim(),
        "commit: codemod: shout"
    );
    t.fsck();

    // A touched path with other staged changes is refused before anything is written.
    t.write("a.txt", "A staged\n");
    t.git(&["add", "a.txt"]);
    let id = stage(&t, &[("a.txt", Some(b"A again\n"), FileMode::Regular)]);
    let before = t.snapshot();
    let out = t.run(&["apply", "--commit", "--json"]);
    out.assert_code(4);
    assert_eq!(out.json()["error"]["code"], "other-staged-changes");
    assert_eq!(t.snapshot(), before);
    assert_eq!(t.astedit_refs(), vec![format!("refs/astedit/{id}")]);
}

#[test]
fn apply_index_stages_the_touched_paths() {
    let t = TestRepo::new();
    t.write("a.txt", "a\n");
    t.write("b.txt", "b\n");
    t.commit_all("init");
    stage(
        &t,
        &[
            ("a.txt", Some(b"A\n"), FileMode::Regular),
            ("b.txt", None, FileMode::Regular),
            ("c/d.txt", Some(b"d\n"), FileMode::Regular),
        ],
    );
    t.run(&["apply", "--index"]).assert_code(0);
    assert_eq!(
        t.git(&["diff", "--cached", "--name-status"]),
        "M\ta.txt\nD\tb.txt\nA\tc/d.txt\n"
    );
    assert_eq!(t.git(&["diff", "--name-only"]), "");
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

#[test]
fn agent_aliases_and_undo_errors() {
    let t = TestRepo::new();
    t.write("a.txt", "a\n");
    t.commit_all("init");
    let id = stage(&t, &[("a.txt", Some(b"b\n"), FileMode::Regular)]);
    let out = t.run(&["resolve", "apply", &id, "--json"]);
    out.assert_code(0);
    assert_eq!(out.json()["action"], "applied");
    // Applying it again: the tree has moved on, so it is stale.
    let out = t.run(&["apply", &id, "--json"]);
    out.assert_code(3);
    assert_eq!(out.json()["error"]["code"], "already-applied");
    t.run(&["undo", "zz"]).assert_code(2);
    t.run(&["undo", "123456"]).assert_code(2);
    t.run(&["undo", &id]).assert_code(0);
    let out = t.run(&["undo", &id, "--json"]);
    out.assert_code(2);
    assert_eq!(out.json()["error"]["code"], "not-applied");
    let out = t.run(&["undo", "--json"]);
    out.assert_code(1);
    assert_eq!(out.json()["error"]["code"], "nothing-to-undo");
    let out = t.run(&["resolve", "discard", &id, "--reason", "nah", "--json"]);
    out.assert_code(0);
    assert_eq!(out.json()["action"], "discarded");
    let out = t.run(&["apply", "--json"]);
    out.assert_code(1);
    assert_eq!(out.json()["error"]["code"], "no-pending-preview");
    let out = t.run(&["log", &id[..4], "-n", "2", "--json"]);
    out.assert_code(0);
    let kinds: Vec<_> = out.json()["events"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|e| e["event"].as_str().unwrap_or("").to_string())
                .collect()
        })
        .unwrap_or_default();
    assert_eq!(kinds, ["discarded", "undone"]);
}

/// A preview of `a.txt` and `b.txt` (a -> A, b -> B) and its apply paused after its
/// temp files are written (the applying record then exists); `edit` runs in the pause.
/// The apply must refuse (exit 3) and leave nothing behind. `settle` passes between
/// writing the files and the apply.
fn apply_with_an_edit_during_the_pause(
    t: &TestRepo,
    settle: std::time::Duration,
    edit: impl FnOnce(),
) {
    t.write("a.txt", "a\n");
    t.write("b.txt", "b\n");
    std::thread::sleep(settle);
    let id = stage(
        t,
        &[
            ("a.txt", Some(b"A\n"), FileMode::Regular),
            ("b.txt", Some(b"B\n"), FileMode::Regular),
        ],
    );
    let child = quiet(t.command(".", &["apply", &id]))
        .env("GIT_ASTEDIT_FAULT", "pause:after-tempfiles:1500")
        .spawn()
        .expect("spawn");
    let record = t.path().join(".git/astedit-applying.json");
    let start = std::time::Instant::now();
    while !record.exists() && start.elapsed().as_secs() < 20 {
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    edit();
    let out = child.wait_with_output().expect("wait");
    assert_eq!(
        out.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(t.read_string("a.txt"), "a\n");
    no_leftovers(t);
}

#[test]
fn an_edit_made_while_temps_are_written_is_not_overwritten() {
    let t = TestRepo::new();
    apply_with_an_edit_during_the_pause(&t, std::time::Duration::ZERO, || {
        t.write("b.txt", "saved by the user meanwhile\n");
    });
    assert_eq!(t.read_string("b.txt"), "saved by the user meanwhile\n");
    assert_eq!(
        t.snapshot().len(),
        2,
        "temp files left behind: {:?}",
        t.snapshot()
    );
    assert_eq!(t.astedit_refs().len(), 1);
}

/// The second look trusts a file's stat data, not its content, when nothing in it moved
/// (for files last changed over two seconds before the first look, so the files settle
/// first): an edit that keeps the size and puts the modification time back still
/// changes the change time, and is caught.
#[test]
fn a_same_size_edit_with_its_mtime_put_back_is_still_caught() {
    let t = TestRepo::new();
    let reference = t.path().join(".git/b.times");
    let touch = |from: &std::path::Path, to: &std::path::Path| {
        let status = std::process::Command::new("touch")
            .arg("-r")
            .arg(from)
            .arg(to)
            .status()
            .expect("touch runs");
        assert!(status.success());
    };
    apply_with_an_edit_during_the_pause(&t, std::time::Duration::from_millis(2200), || {
        std::fs::write(&reference, "").expect("write");
        touch(&t.path().join("b.txt"), &reference);
        t.write("b.txt", "x\n");
        touch(&reference, &t.path().join("b.txt"));
    });
    assert_eq!(t.read_string("b.txt"), "x\n");
}
