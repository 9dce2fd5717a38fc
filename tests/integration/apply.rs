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
