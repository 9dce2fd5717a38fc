//! Runs cut short: a fault injected at each point of an apply or undo, a kill during a
//! large apply, two applies racing, a lock never waited on, edits made while a run writes.

use git_astedit::change::ChangeSet;
use git_astedit::change::FileChange;
use git_astedit::change::FileMode;
use git_astedit::change::PreviewMeta;
use git_astedit::repo::Repo;

use super::awkward_repo;
use super::awkward_stage;
use super::content;
use super::journal_events;
use super::stage;
use crate::util::TestRepo;

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
    // A dead holder's lock is broken (tests/integration/recovery/locks.rs has the details).
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
