//! Targets that cannot be written or are not what the run expects: a file that cannot
//! be replaced, one created meanwhile, a full disk, permission bits kept.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use git_astedit::change::ChangeSet;
use git_astedit::change::FileChange;
use git_astedit::change::FileContent;
use git_astedit::change::FileMode;
use git_astedit::change::PreviewMeta;
use git_astedit::repo::Repo;

use super::stage;
use super::with_fault;
use super::RECORD;
use crate::util::TestRepo;

fn mode_of(t: &TestRepo, path: &str) -> u32 {
    std::fs::symlink_metadata(t.path().join(path))
        .expect("meta")
        .permissions()
        .mode()
        & 0o7777
}

/// Makes `path` impossible to replace: `chattr +i` where the file system and our
/// privileges allow, else a read-only folder (not for root), else an injected EPERM.
/// Returns the fault to set (if any) and how to undo it.
fn unrenameable(t: &TestRepo, path: &str) -> (Option<String>, Box<dyn Fn()>) {
    let abs = t.path().join(path);
    let chattr = |flag: &str, p: &Path| {
        std::process::Command::new("chattr")
            .arg(flag)
            .arg(p)
            .stderr(std::process::Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    };
    if chattr("+i", &abs) {
        return (None, Box::new(move || assert!(chattr("-i", &abs))));
    }
    let root = String::from_utf8_lossy(
        &std::process::Command::new("id")
            .arg("-u")
            .output()
            .expect("id")
            .stdout,
    )
    .trim()
        == "0";
    if !root && !path.contains('/') {
        let dir = t.path().to_path_buf();
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o555)).expect("chmod");
        return (
            None,
            Box::new(move || {
                std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755))
                    .expect("chmod")
            }),
        );
    }
    (Some(format!("eperm:rename:{path}")), Box::new(|| {}))
}

/// A rename that fails past the point of no return (an immutable target) does not stop
/// the run half way: every other path is written, the one left is named, the record
/// stays (exit 3), read-only commands warn and run, and `recover --finish` completes
/// the run once the file can be written — or `--abandon` puts the rest back.
#[test]
fn a_target_that_cannot_be_replaced_leaves_a_run_recover_finishes() {
    for finish in [true, false] {
        let t = TestRepo::new();
        for p in ["a.txt", "b.txt", "c.txt", "d.txt"] {
            t.write(p, "old\n");
        }
        t.commit_all("init");
        let id = stage(
            &t,
            &[
                ("a.txt", Some("new\n")),
                ("b.txt", Some("new\n")),
                ("c.txt", Some("new\n")),
                ("d.txt", None),
            ],
        );
        let (fault, undo) = unrenameable(&t, "b.txt");
        let out = match &fault {
            Some(f) => with_fault(&t, &["apply", &id], f),
            None => t.run(&["apply", &id]),
        };
        assert_eq!(out.code, 3, "{}", out.stderr);
        assert!(
            out.stderr.contains("b.txt") && out.stderr.contains("could not be written"),
            "{}",
            out.stderr
        );
        assert!(out.stderr.contains("recover"), "{}", out.stderr);
        assert_eq!(t.read_string("a.txt"), "new\n");
        assert_eq!(t.read_string("b.txt"), "old\n");
        assert_eq!(t.read_string("c.txt"), "new\n");
        assert!(!t.exists("d.txt"));
        assert!(t.exists(RECORD));
        // Read-only commands warn and run.
        let list = match &fault {
            Some(f) => with_fault(&t, &["list"], f),
            None => t.run(&["list"]),
        };
        list.assert_code(0);
        assert!(list.stderr.contains("unfinished"), "{}", list.stderr);
        undo();
        if finish {
            t.run(&["recover", "--finish"]).assert_code(0);
            for p in ["a.txt", "b.txt", "c.txt"] {
                assert_eq!(t.read_string(p), "new\n", "{p}");
            }
            assert!(!t.exists("d.txt"));
        } else {
            t.run(&["recover", "--abandon"]).assert_code(0);
            for p in ["a.txt", "b.txt", "c.txt", "d.txt"] {
                assert_eq!(t.read_string(p), "old\n", "{p}");
            }
        }
        assert!(!t.exists(RECORD));
        assert!(
            !t.snapshot().iter().any(|(p, ..)| p.contains("astedit")),
            "temp file left: {:?}",
            t.snapshot()
        );
        t.git(&["fsck", "--no-progress"]);
    }
}

#[test]
fn a_file_created_where_the_preview_adds_one_is_not_replaced() {
    let t = TestRepo::new();
    t.write("a.txt", "a\n");
    t.commit_all("init");
    stage(&t, &[("a.txt", Some("A\n")), ("new.txt", Some("new\n"))]);
    with_fault(&t, &["apply"], "after-commit");
    t.write("new.txt", "mine\n");
    t.run(&["list"]).assert_code(0);
    assert_eq!(t.read_string("new.txt"), "mine\n");
    assert_eq!(t.read_string("a.txt"), "A\n");
    assert!(t.exists(RECORD));
}

#[test]
fn a_full_disk_leaves_no_record_and_no_temp_files() {
    let t = TestRepo::new();
    t.write("a.txt", "a\n");
    t.write("d/b.txt", "b\n");
    t.commit_all("init");
    let before = t.snapshot();
    let id = stage(
        &t,
        &[
            ("a.txt", Some("A\n")),
            ("d/b.txt", None),
            ("n/c.txt", Some("c\n")),
        ],
    );
    for point in ["enospc:record", "enospc:temp"] {
        let out = with_fault(&t, &["apply", &id], point);
        out.assert_code(70);
        assert!(
            out.stderr.contains("No space left"),
            "{point}: {}",
            out.stderr
        );
        assert!(!t.exists(".git/astedit-applying.tmp"), "{point}");
        assert!(!t.exists(RECORD), "{point}");
        assert!(!t.exists(".git/astedit.lock"), "{point}");
        assert_eq!(t.snapshot(), before, "{point}: the tree changed");
        assert_eq!(t.astedit_refs(), vec![format!("refs/astedit/{id}")]);
    }
    t.run(&["apply", &id]).assert_code(0);
}

#[test]
fn permission_bits_survive_apply_and_undo() {
    let t = TestRepo::new();
    t.write("ro.txt", "read only\n");
    t.write("private.txt", "private\n");
    t.write("tool.sh", "#!/bin/sh\n");
    t.commit_all("init");
    let chmod = |p: &str, m: u32| {
        std::fs::set_permissions(t.path().join(p), std::fs::Permissions::from_mode(m))
            .expect("chmod")
    };
    t.write("gone.txt", "removed\n");
    chmod("ro.txt", 0o444);
    chmod("private.txt", 0o600);
    chmod("tool.sh", 0o700);
    chmod("gone.txt", 0o640);
    let id = stage(
        &t,
        &[
            ("ro.txt", Some("still read only\n")),
            ("private.txt", Some("still private\n")),
            ("gone.txt", None),
        ],
    );
    let repo = Repo::discover_from(t.path()).expect("open repo");
    // tool.sh loses its execute bit (git mode 755 -> 644), keeping the rest of its bits.
    let mut changes = ChangeSet::default();
    changes.changes.push(FileChange {
        path: "tool.sh".into(),
        before: Some(FileContent {
            bytes: b"#!/bin/sh\n".to_vec(),
            mode: FileMode::Executable,
        }),
        after: Some(FileContent {
            bytes: b"#!/bin/sh\n".to_vec(),
            mode: FileMode::Regular,
        }),
    });
    t.run(&["apply", &id]).assert_code(0);
    assert_eq!(t.read_string("ro.txt"), "still read only\n");
    assert_eq!(mode_of(&t, "ro.txt"), 0o444);
    assert_eq!(mode_of(&t, "private.txt"), 0o600);
    assert!(!t.exists("gone.txt"));
    t.run(&["undo"]).assert_code(0);
    assert_eq!(t.read_string("ro.txt"), "read only\n");
    assert_eq!(mode_of(&t, "ro.txt"), 0o444);
    assert_eq!(mode_of(&t, "private.txt"), 0o600);
    assert_eq!(t.read_string("gone.txt"), "removed\n");
    assert_eq!(
        mode_of(&t, "gone.txt"),
        0o640,
        "a removed file comes back as it was"
    );

    let meta = PreviewMeta {
        kind: git_astedit::change::PreviewKind::Edit,
        summary: "mode".into(),
        tool_version: git_astedit::VERSION.into(),
        ..PreviewMeta::default()
    };
    let mode_id = git_astedit::txn::stage(&repo, &changes, &meta)
        .expect("stage")
        .id;
    t.run(&["apply", &mode_id]).assert_code(0);
    assert_eq!(mode_of(&t, "tool.sh"), 0o600);
    t.run(&["undo"]).assert_code(0);
    assert_eq!(mode_of(&t, "tool.sh"), 0o700);
}
