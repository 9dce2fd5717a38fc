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

mod faults;
mod paths;

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
