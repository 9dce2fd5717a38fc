//! Integration tests: crash recovery that checks before it writes (folders swapped for
//! symlinks, files edited after the crash), `recover --status/--finish/--abandon`,
//! stale locks of dead processes, the rename window, disk-full leftovers, kept modes.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use git_astedit::change::ChangeSet;
use git_astedit::change::FileChange;
use git_astedit::change::FileContent;
use git_astedit::change::FileMode;
use git_astedit::change::PreviewMeta;
use git_astedit::repo::Repo;

use crate::util::Output;
use crate::util::TestRepo;

const RECORD: &str = ".git/astedit-applying.json";

/// Stages `edits` (path, new bytes or None to delete) against the work tree as it is.
fn stage(t: &TestRepo, edits: &[(&str, Option<&str>)]) -> String {
    let repo = Repo::discover_from(t.path()).expect("open repo");
    let mut changes = ChangeSet::default();
    for (path, after) in edits {
        let abs = t.path().join(path);
        let before = std::fs::read(&abs).ok().map(|bytes| FileContent {
            bytes,
            mode: FileMode::Regular,
        });
        changes.changes.push(FileChange {
            path: path.to_string(),
            before,
            after: after.map(|a| FileContent {
                bytes: a.as_bytes().to_vec(),
                mode: FileMode::Regular,
            }),
        });
    }
    let meta = PreviewMeta {
        kind: git_astedit::change::PreviewKind::Edit,
        summary: format!("{} files", edits.len()),
        tool_version: git_astedit::VERSION.into(),
        ..PreviewMeta::default()
    };
    git_astedit::txn::stage(&repo, &changes, &meta)
        .expect("stage")
        .id
}

fn with_fault(t: &TestRepo, args: &[&str], point: &str) -> Output {
    t.run_with(".", args, &[("GIT_ASTEDIT_FAULT", point)], None)
}

/// Every file under `dir` with its bytes (a folder outside the tree must not change).
fn files_under(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).expect("read_dir").flatten() {
            let p = e.path();
            if p.symlink_metadata().expect("meta").is_dir() {
                stack.push(p);
            } else {
                let rel = p.strip_prefix(dir).expect("prefix").display().to_string();
                out.push((rel, std::fs::read(&p).unwrap_or_default()));
            }
        }
    }
    out.sort();
    out
}

fn events(t: &TestRepo) -> Vec<serde_json::Value> {
    let out = t.run(&["log", "--json"]);
    out.assert_code(0);
    out.json()["events"].as_array().cloned().unwrap_or_default()
}

/// Moves folder `dir` aside (to `<dir>.real`) and puts a symlink to `outside` in its place.
fn swap_for_symlink(t: &TestRepo, dir: &str, outside: &Path) {
    let real = t.path().join(format!("{dir}.real"));
    std::fs::rename(t.path().join(dir), &real).expect("move the folder aside");
    std::os::unix::fs::symlink(outside, t.path().join(dir)).expect("symlink");
}

fn mode_of(t: &TestRepo, path: &str) -> u32 {
    std::fs::symlink_metadata(t.path().join(path))
        .expect("meta")
        .permissions()
        .mode()
        & 0o7777
}

#[test]
fn recovery_never_writes_through_a_folder_swapped_for_a_symlink() {
    let t = TestRepo::new();
    t.write("d/f.js", "f();\n");
    t.write("a.js", "a();\n");
    t.commit_all("init");
    let outside = tempfile::tempdir().expect("tempdir");
    stage(&t, &[("d/f.js", Some("F();\n")), ("a.js", Some("A();\n"))]);
    let out = with_fault(&t, &["apply"], "after-commit");
    assert!(out.stderr.contains("fault injected"), "{}", out.stderr);
    swap_for_symlink(&t, "d", outside.path());

    // Read-only commands warn and run; nothing is written outside.
    let out = t.run(&["list"]);
    out.assert_code(0);
    assert!(out.stderr.contains("unfinished"), "{}", out.stderr);
    assert!(out.stderr.contains("is a symlink"), "{}", out.stderr);
    assert!(
        out.stderr.contains("d/.f.js.astedit-"),
        "the temp file's place is reported: {}",
        out.stderr
    );
    assert!(files_under(outside.path()).is_empty(), "written outside");
    assert_eq!(t.read_string("a.js"), "A();\n", "what can be done is done");
    assert_eq!(t.read_string("d.real/f.js"), "f();\n");
    assert!(t.exists(RECORD), "the record is kept");

    let status = t.run(&["recover", "--status", "--json"]);
    status.assert_code(0);
    let files = status.json()["unfinished"]["files"].clone();
    assert_eq!(files[0]["path"], "a.js");
    assert_eq!(files[0]["state"], "done");
    assert_eq!(files[1]["path"], "d/f.js");
    assert_eq!(files[1]["state"], "refused");

    // The user puts the folder back: the run finishes from its own temp file.
    std::fs::remove_file(t.path().join("d")).expect("rm symlink");
    std::fs::rename(t.path().join("d.real"), t.path().join("d")).expect("move back");
    t.run(&["recover", "--finish"]).assert_code(0);
    assert_eq!(t.read_string("d/f.js"), "F();\n");
    assert!(!t.exists(RECORD));
    let names: Vec<_> = std::fs::read_dir(t.path().join("d"))
        .expect("read_dir")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, vec!["f.js".to_string()], "no temp file left");
    let ev = events(&t);
    assert_eq!(ev[0]["event"], "recovered");
    assert_eq!(ev[0]["action"], "completed");
    assert_eq!(ev[1]["event"], "applied");
    assert_eq!(ev[2]["event"], "recovered");
    assert_eq!(ev[2]["action"], "partial");
    assert!(t.astedit_refs().is_empty());
    t.fsck();
}

#[test]
fn an_edit_made_after_the_crash_is_kept_and_blocks_writers_until_resolved() {
    let t = TestRepo::new();
    t.write("a.js", "a();\n");
    t.write("b.js", "b();\n");
    t.write("c.js", "c();\n");
    t.commit_all("init");
    let id = stage(
        &t,
        &[
            ("a.js", Some("A();\n")),
            ("b.js", Some("B();\n")),
            ("c.js", None),
        ],
    );
    with_fault(&t, &["apply"], "after-commit");
    t.write("a.js", "precious\n");

    let out = t.run(&["list"]);
    out.assert_code(0);
    assert!(out.stderr.contains("a.js"), "{}", out.stderr);
    assert!(out.stderr.contains("recover"), "{}", out.stderr);
    assert_eq!(t.read_string("a.js"), "precious\n", "silently overwritten");
    assert_eq!(t.read_string("b.js"), "B();\n");
    assert!(!t.exists("c.js"));
    assert!(t.exists(RECORD));

    // Commands that write refuse; read-only ones warn.
    let out = t.run(&["apply", "--json"]);
    out.assert_code(6);
    assert_eq!(out.json()["error"]["code"], "recovery-pending");
    t.run(&["undo"]).assert_code(6);
    t.run(&["discard", &id]).assert_code(6);
    t.run(&["edit", "-p", "b()", "-r", "x()"]).assert_code(6);
    t.run(&["log"]).assert_code(0);
    t.run(&["show", &id]).assert_code(0);

    // --finish does not overwrite it either.
    let out = t.run(&["recover", "--finish", "--json"]);
    out.assert_code(3);
    assert_eq!(out.json()["unresolved"][0]["path"], "a.js");
    assert_eq!(t.read_string("a.js"), "precious\n");

    // --abandon puts back what holds the after side, keeps the edit, drops the run.
    let out = t.run(&["recover", "--abandon"]);
    out.assert_code(0);
    assert!(out.stdout.contains("pending again"), "{}", out.stdout);
    assert_eq!(t.read_string("a.js"), "precious\n");
    assert_eq!(t.read_string("b.js"), "b();\n");
    assert_eq!(t.read_string("c.js"), "c();\n");
    assert!(!t.exists(RECORD));
    assert_eq!(t.astedit_refs(), vec![format!("refs/astedit/{id}")]);
    let ev = events(&t);
    assert_eq!(ev[0]["event"], "recovered");
    assert_eq!(ev[0]["action"], "abandoned");
    assert!(
        ev[0]["notes"][0].as_str().unwrap_or("").contains("a.js"),
        "{:?}",
        ev[0]
    );
    // Writers work again; the preview is stale because of the edit.
    t.run(&["apply", &id]).assert_code(3);
    t.run(&["recover", "--status"]).assert_code(0);
    t.run(&["recover", "--finish"]).assert_code(1);
    t.fsck();
}

/// The server runs the CLI's prelude (issue 40, item 5): while a run stays unfinished
/// its writing tools are refused as the CLI's writing commands are, with
/// `recovery-pending` and nothing written, and its reading tools go on with a note.
#[test]
fn the_server_refuses_writing_tools_while_a_run_stays_unfinished() {
    let t = TestRepo::new();
    t.write("a.js", "a();\n");
    t.write("b.js", "b();\n");
    t.commit_all("init");
    let id = stage(&t, &[("a.js", Some("A();\n")), ("b.js", Some("B();\n"))]);
    with_fault(&t, &["apply"], "after-commit");
    t.write("a.js", "precious\n");
    // `scan -i` stages what the person accepts: it writes, and is refused too.
    t.write(
        "astedit.toml",
        "[[rules]]\nid = \"b\"\nlanguage = \"javascript\"\nmessage = \"b\"\n\
         rule.pattern = \"b()\"\nfix = \"x()\"\n",
    );
    t.run(&["scan", "-i"]).assert_code(6);

    let mut s = crate::mcp::Server::start(&t);
    s.handshake("2025-06-18", "careful-agent");
    let before = t.snapshot();
    for (tool, args) in [
        (
            "ast_edit",
            serde_json::json!({"ops": [{"pattern": "b()", "rewrite": "x()"}]}),
        ),
        (
            "resolve",
            serde_json::json!({"action": "discard", "id": id, "reason": "no"}),
        ),
        ("undo", serde_json::json!({"reason": "no"})),
    ] {
        let refused = s.call(tool, args);
        assert_eq!(refused["isError"], true, "{tool}: {refused}");
        let block = refused["content"][1]["text"].as_str().unwrap_or_default();
        let err: serde_json::Value =
            serde_json::from_str(block).unwrap_or_else(|e| panic!("{e}: {block}"));
        assert_eq!(err["error"]["code"], "recovery-pending", "{tool}: {err}");
    }
    assert_eq!(t.snapshot(), before, "nothing written");
    let found = s.ok("ast_grep", serde_json::json!({"pattern": "B()"}));
    assert_eq!(found["matches"][0]["path"], "b.js", "{found}");
    s.finish();
    assert_eq!(t.read_string("a.js"), "precious\n");
    assert!(t.exists(RECORD));
}

#[test]
fn finish_completes_once_the_user_makes_the_file_hold_a_side() {
    let t = TestRepo::new();
    t.write("a.js", "a();\n");
    t.write("b.js", "b();\n");
    t.commit_all("init");
    stage(&t, &[("a.js", Some("A();\n")), ("b.js", Some("B();\n"))]);
    with_fault(&t, &["apply"], "after-rename:1");
    t.write("b.js", "mine\n");
    t.run(&["list"]).assert_code(0);
    assert_eq!(t.read_string("b.js"), "mine\n");
    // Back to the before side: --finish writes the after side.
    t.write("b.js", "b();\n");
    t.run(&["recover", "--finish"]).assert_code(0);
    assert_eq!(t.read_string("a.js"), "A();\n");
    assert_eq!(t.read_string("b.js"), "B();\n");
    assert!(!t.exists(RECORD));
    t.run(&["undo"]).assert_code(0);
    assert_eq!(t.read_string("b.js"), "b();\n");
}

/// The fault points of a run, and whether each lies past the point of no return.
const POINTS: [(&str, bool); 10] = [
    ("after-record", false),
    ("after-mkdir", false),
    ("after-tempfiles", false),
    ("after-commit", true),
    ("after-rename:1", true),
    ("after-rename:2", true),
    ("after-rename:3", true),
    ("after-renames", true),
    ("after-deletes", true),
    ("after-journal", true),
];

/// The crash test of the issue, for one fault point of an apply (or of the undo of an
/// applied preview): a touched folder is swapped for a symlink to a folder outside the
/// tree (holding files of the same names) and a touched file is edited before recovery
/// runs. Nothing outside may be written and the edit may not be overwritten, whether
/// recovery finishes, rolls back or is abandoned.
fn crash_with_a_symlink_and_an_edit(op: &str, point: &str, committed: bool) {
    let t = TestRepo::new();
    t.write("a.js", "a();\n");
    t.write("d/f.js", "f();\n");
    t.write("d/gone.js", "gone();\n");
    t.commit_all("init");
    let outside = tempfile::tempdir().expect("tempdir");
    for name in ["f.js", "gone.js", "new.js", "keep.txt"] {
        std::fs::write(outside.path().join(name), "outside\n").expect("write");
    }
    let outside_before = files_under(outside.path());
    stage(
        &t,
        &[
            ("a.js", Some("A();\n")),
            ("d/f.js", Some("F();\n")),
            ("d/gone.js", None),
            ("d/new.js", Some("new();\n")),
            ("n/new.js", Some("new();\n")),
        ],
    );
    if op == "undo" {
        t.run(&["apply"]).assert_code(0);
    }
    let out = with_fault(&t, &[op], point);
    assert!(
        out.stderr.contains("fault injected"),
        "{op} {point}: {}",
        out.stderr
    );
    swap_for_symlink(&t, "d", outside.path());
    t.write("a.js", "precious\n");

    let out = t.run(&["list"]);
    out.assert_code(0);
    let case = format!("{op} {point}");
    assert_eq!(
        files_under(outside.path()),
        outside_before,
        "{case}: written outside the tree"
    );
    assert_eq!(t.read_string("a.js"), "precious\n", "{case}: overwritten");
    // The moved folder holds either side of each file, never anything torn.
    let f = t.read_string("d.real/f.js");
    assert!(f == "f();\n" || f == "F();\n", "{case}: {f:?}");
    if !committed || point == "after-journal" {
        assert!(!t.exists(RECORD), "{case}: {}", out.stderr);
        return;
    }
    assert!(t.exists(RECORD), "{case}: the record is kept");
    assert!(out.stderr.contains("unfinished"), "{case}: {}", out.stderr);
    // Finishing and abandoning reach through nothing either.
    t.run(&["recover", "--finish"]).assert_code(3);
    t.run(&["recover", "--abandon"]).assert_code(0);
    assert_eq!(files_under(outside.path()), outside_before, "{case}");
    assert_eq!(t.read_string("a.js"), "precious\n", "{case}");
    // n/new.js is back on the run's starting side: absent before an apply, present
    // before an undo.
    assert_eq!(t.exists("n/new.js"), op == "undo", "{case}");
    assert!(!t.exists(RECORD), "{case}");
    t.fsck();
}

#[test]
fn at_every_fault_point_of_an_apply_no_write_outside_and_no_silent_overwrite() {
    for (point, committed) in POINTS {
        crash_with_a_symlink_and_an_edit("apply", point, committed);
    }
}

#[test]
fn at_every_fault_point_of_an_undo_no_write_outside_and_no_silent_overwrite() {
    for (point, committed) in POINTS {
        crash_with_a_symlink_and_an_edit("undo", point, committed);
    }
}

#[test]
fn an_undo_interrupted_then_edited_is_left_alone_too() {
    let t = TestRepo::new();
    t.write("a.js", "a();\n");
    t.write("b.js", "b();\n");
    t.commit_all("init");
    stage(&t, &[("a.js", Some("A();\n")), ("b.js", Some("B();\n"))]);
    t.run(&["apply"]).assert_code(0);
    with_fault(&t, &["undo"], "after-commit");
    t.write("b.js", "mine\n");
    let out = t.run(&["log"]);
    out.assert_code(0);
    assert!(out.stderr.contains("undo"), "{}", out.stderr);
    assert_eq!(t.read_string("a.js"), "a();\n");
    assert_eq!(t.read_string("b.js"), "mine\n");
    t.run(&["recover", "--abandon"]).assert_code(0);
    assert_eq!(t.read_string("a.js"), "A();\n", "back to the applied side");
    assert_eq!(t.read_string("b.js"), "mine\n");
}

fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| "unknown".into())
}

/// The start time of a process, field 22 of /proc/<pid>/stat.
fn start_time(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).expect("stat");
    let rest = &stat[stat.rfind(')').expect(")") + 1..];
    rest.split_whitespace()
        .nth(19)
        .and_then(|f| f.parse().ok())
        .expect("start time")
}

#[test]
fn a_lock_of_a_dead_process_is_broken_and_journalled() {
    let t = TestRepo::new();
    t.write("a.txt", "a\n");
    t.commit_all("init");
    let id = stage(&t, &[("a.txt", Some("b\n"))]);
    let lock = t.path().join(".git/astedit.lock");
    let host = hostname();
    // A pid that is not running.
    let dead = format!(
        "{{\"pid\":{},\"host\":\"{host}\",\"time\":0,\"op\":\"apply\"}}",
        u32::MAX - 3
    );
    std::fs::write(&lock, dead).expect("write lock");
    t.run(&["apply", &id]).assert_code(0);
    assert_eq!(t.read_string("a.txt"), "b\n");
    assert!(!lock.exists());
    let ev = events(&t);
    assert_eq!(ev[0]["event"], "applied");
    let note = ev[0]["notes"][0].as_str().unwrap_or("").to_string();
    assert!(note.starts_with("lock-broken:"), "{:?}", ev[0]);
    assert!(note.contains(&format!("pid {}", u32::MAX - 3)), "{note}");
    assert!(!t.path().join(".git/astedit-notes.pending").exists());
}

#[test]
fn a_live_holder_keeps_its_lock_but_a_reused_pid_or_another_boot_does_not() {
    let t = TestRepo::new();
    t.write("a.txt", "a\n");
    t.commit_all("init");
    stage(&t, &[("a.txt", Some("b\n"))]);
    let lock = t.path().join(".git/astedit.lock");
    let host = hostname();
    let me = std::process::id();
    let start = start_time(me);
    // This test process, alive, with its true start time: the lock holds.
    let live = format!(
        "{{\"pid\":{me},\"host\":\"{host}\",\"start\":{start},\"time\":0,\"op\":\"apply\"}}"
    );
    std::fs::write(&lock, &live).expect("write lock");
    let out = t.run(&["apply", "--json"]);
    out.assert_code(6);
    assert_eq!(out.json()["error"]["code"], "locked");
    // The same without a start time (an old lock): not provably gone, it holds too.
    let old = format!("{{\"pid\":{me},\"host\":\"{host}\",\"time\":0,\"op\":\"apply\"}}");
    std::fs::write(&lock, &old).expect("write lock");
    t.run(&["apply"]).assert_code(6);
    // Another host: it cannot be judged from here.
    let elsewhere = format!(
        "{{\"pid\":{},\"host\":\"not-{host}\",\"time\":0,\"op\":\"apply\"}}",
        u32::MAX - 3
    );
    std::fs::write(&lock, &elsewhere).expect("write lock");
    t.run(&["apply"]).assert_code(6);
    assert_eq!(t.read_string("a.txt"), "a\n");
    // Our pid with another start time: the pid was reused, the holder is gone.
    let reused = format!(
        "{{\"pid\":{me},\"host\":\"{host}\",\"start\":{},\"time\":0,\"op\":\"apply\"}}",
        start + 1
    );
    std::fs::write(&lock, &reused).expect("write lock");
    t.run(&["apply"]).assert_code(0);
    assert_eq!(t.read_string("a.txt"), "b\n");
    // A lock from another boot is gone whatever its pid.
    let rebooted = format!(
        "{{\"pid\":{me},\"host\":\"{host}\",\"start\":{start},\"boot\":\"another-boot\",\"time\":0,\"op\":\"undo\"}}"
    );
    std::fs::write(&lock, &rebooted).expect("write lock");
    t.run(&["undo"]).assert_code(0);
    assert_eq!(t.read_string("a.txt"), "a\n");
}

/// Many processes at once find the same dead lock: exactly one apply wins, the others
/// exit 6 (never two holders).
#[test]
fn a_dead_lock_is_broken_by_exactly_one_of_many() {
    let t = TestRepo::new();
    t.write("a.txt", "a\n");
    t.commit_all("init");
    stage(&t, &[("a.txt", Some("b\n"))]);
    let dead = format!(
        "{{\"pid\":{},\"host\":\"{}\",\"time\":0,\"op\":\"apply\"}}",
        u32::MAX - 3,
        hostname()
    );
    std::fs::write(t.path().join(".git/astedit.lock"), dead).expect("write lock");
    let children: Vec<_> = (0..6)
        .map(|_| {
            t.command(".", &["apply"])
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .spawn()
                .expect("spawn")
        })
        .collect();
    let codes: Vec<_> = children
        .into_iter()
        .map(|c| c.wait_with_output().expect("wait").status.code())
        .collect();
    assert_eq!(
        codes.iter().filter(|c| **c == Some(0)).count(),
        1,
        "{codes:?}"
    );
    assert!(
        codes
            .iter()
            .all(|c| matches!(c, Some(0) | Some(1) | Some(6))),
        "{codes:?}"
    );
    assert_eq!(t.read_string("a.txt"), "b\n");
    let applied = events(&t)
        .iter()
        .filter(|e| e["event"] == "applied")
        .count();
    assert_eq!(applied, 1);
}

/// A file saved after the point of no return, before its rename: left alone and
/// reported (exit 3), the rest applied, the run kept for `recover`. `settle` lets the
/// files age so that the stat stamp (not a re-read) is what catches it.
fn save_during_the_renames(settle: std::time::Duration) {
    let t = TestRepo::new();
    t.write("a.txt", "a\n");
    t.write("b.txt", "b\n");
    t.commit_all("init");
    std::thread::sleep(settle);
    let id = stage(&t, &[("a.txt", Some("A\n")), ("b.txt", Some("B\n"))]);
    let child = t
        .command(".", &["apply", &id])
        .env("GIT_ASTEDIT_FAULT", "pause:after-commit:1500")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn");
    // The record's phase turns `committed` right before the pause.
    let record = t.path().join(RECORD);
    let start = std::time::Instant::now();
    while !std::fs::read_to_string(&record).is_ok_and(|r| r.contains("\"committed\""))
        && start.elapsed().as_secs() < 30
    {
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    t.write("b.txt", "saved meanwhile\n");
    let out = child.wait_with_output().expect("wait");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(stderr.contains("b.txt"), "{stderr}");
    assert!(stderr.contains("recover"), "{stderr}");
    assert_eq!(t.read_string("b.txt"), "saved meanwhile\n");
    assert_eq!(t.read_string("a.txt"), "A\n");
    assert!(t.exists(RECORD));
    assert!(
        !t.snapshot().iter().any(|(p, ..)| p.contains("astedit")),
        "temp file left: {:?}",
        t.snapshot()
    );
    let status = t.run(&["recover", "--status", "--json"]);
    assert_eq!(status.json()["unfinished"]["files"][1]["state"], "changed");
    t.run(&["recover", "--abandon"]).assert_code(0);
    assert_eq!(t.read_string("a.txt"), "a\n");
    assert_eq!(t.read_string("b.txt"), "saved meanwhile\n");
}

#[test]
fn a_file_saved_after_the_point_of_no_return_is_reported_not_overwritten() {
    save_during_the_renames(std::time::Duration::ZERO);
}

#[test]
fn a_settled_file_saved_after_the_point_of_no_return_is_caught_by_its_stamp() {
    save_during_the_renames(std::time::Duration::from_millis(2200));
}

/// How a test saves a file while a run is paused right after its last look at it.
#[derive(Clone, Copy, Debug)]
enum Save {
    /// Truncate and write the file itself, as most editors and `>` do.
    InPlace,
    /// Write a temp file and rename it over the target, as careful editors do.
    Rename,
}

impl Save {
    fn to(self, t: &TestRepo, path: &str, content: &str) {
        match self {
            Save::InPlace => t.write(path, content),
            Save::Rename => {
                let tmp = format!("{path}.editor-tmp");
                t.write(&tmp, content);
                std::fs::rename(t.path().join(&tmp), t.path().join(path)).expect("rename");
            }
        }
    }
}

/// Runs `args` paused at `point`, saves `path` there with `save`, and lets it go on.
fn save_in_the_last_instant(
    t: &TestRepo,
    args: &[&str],
    point: &str,
    path: &str,
    save: Save,
) -> Output {
    save_in_the_last_instant_with(t, args, point, path, save, &[])
}

/// [`save_in_the_last_instant`] with more environment for the run.
fn save_in_the_last_instant_with(
    t: &TestRepo,
    args: &[&str],
    point: &str,
    path: &str,
    save: Save,
    env: &[(&str, &str)],
) -> Output {
    use std::io::BufRead;
    let mut child = t
        .command(".", args)
        .envs(env.iter().copied())
        .env("GIT_ASTEDIT_FAULT", format!("pause:{point}:1500"))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn");
    let stderr = child.stderr.take().expect("stderr");
    let mut lines = std::io::BufReader::new(stderr).lines();
    let mut seen = Vec::new();
    for line in lines.by_ref() {
        let line = line.expect("stderr line");
        let paused = line.contains(&format!("paused at {point}"));
        seen.push(line);
        if paused {
            break;
        }
    }
    assert!(
        seen.iter().any(|l| l.contains("paused at")),
        "never paused at {point}: {seen:?}"
    );
    save.to(t, path, "saved in the last instant\n");
    let rest: Vec<String> = lines.map_while(Result::ok).collect();
    seen.extend(rest);
    let out = child.wait_with_output().expect("wait");
    Output {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: seen.join("\n"),
    }
}

/// The instant between the last look at a target and its replacement: a save made
/// there is never lost. The target is exchanged atomically with the new file, what it
/// held is looked at, and a save found there is put back (exit 3, the path named, the
/// run kept for `recover`). Both save styles, a settled stamp and a fresh one, a
/// rewrite and a removal.
#[test]
fn a_save_between_the_last_look_and_the_rename_is_put_back_and_named() {
    for (save, settle) in [
        (Save::InPlace, false),
        (Save::Rename, false),
        (Save::InPlace, true),
        (Save::Rename, true),
    ] {
        for removal in [false, true] {
            let t = TestRepo::new();
            t.write("a.txt", "a\n");
            t.write("b.txt", "b\n");
            t.commit_all("init");
            if settle {
                std::thread::sleep(std::time::Duration::from_millis(2200));
            }
            let b = if removal { None } else { Some("B\n") };
            let id = stage(&t, &[("a.txt", Some("A\n")), ("b.txt", b)]);
            let point = if removal {
                "before-remove:b.txt"
            } else {
                "before-rename:b.txt"
            };
            let case = format!("{save:?}, settled {settle}, removal {removal}");
            let out = save_in_the_last_instant(&t, &["apply", &id], point, "b.txt", save);
            assert_eq!(out.code, 3, "{case}: {}", out.stderr);
            assert!(out.stderr.contains("b.txt"), "{case}: {}", out.stderr);
            assert!(out.stderr.contains("put back"), "{case}: {}", out.stderr);
            assert_eq!(
                t.read_string("b.txt"),
                "saved in the last instant\n",
                "{case}: the save was lost"
            );
            assert_eq!(t.read_string("a.txt"), "A\n", "{case}");
            assert!(t.exists(RECORD), "{case}: the run waits for recover");
            assert!(
                !t.snapshot()
                    .iter()
                    .any(|(p, ..)| p.contains("astedit") || p.contains("editor-tmp")),
                "{case}: temp file left: {:?}",
                t.snapshot()
            );
            let status = t.run(&["recover", "--status", "--json"]);
            assert_eq!(
                status.json()["unfinished"]["files"][1]["state"],
                "changed",
                "{case}"
            );
            t.run(&["recover", "--abandon"]).assert_code(0);
            assert_eq!(t.read_string("a.txt"), "a\n", "{case}");
            assert_eq!(t.read_string("b.txt"), "saved in the last instant\n");
            t.git(&["fsck", "--no-progress"]);
        }
    }
}

/// Where the system has no atomic exchange, the old file is held open across the plain
/// rename: a save written into it in place in the last instant is found through the
/// descriptor, kept in `.git/astedit-saved/<id>/` and named (exit 3), never lost.
#[test]
fn without_an_exchange_a_save_in_the_last_instant_is_kept_and_named() {
    let t = TestRepo::new();
    t.write("a.txt", "a\n");
    t.write("b.txt", "b\n");
    t.commit_all("init");
    let id = stage(&t, &[("a.txt", Some("A\n")), ("b.txt", Some("B\n"))]);
    let out = save_in_the_last_instant_with(
        &t,
        &["apply", &id],
        "before-rename:b.txt",
        "b.txt",
        Save::InPlace,
        &[("GIT_ASTEDIT_NO_EXCHANGE", "1")],
    );
    assert_eq!(out.code, 3, "{}", out.stderr);
    assert!(
        out.stderr.contains("b.txt") && out.stderr.contains("kept at"),
        "{}",
        out.stderr
    );
    let kept = t.path().join(format!(".git/astedit-saved/{id}/b.txt"));
    assert_eq!(
        std::fs::read_to_string(&kept).expect("kept"),
        "saved in the last instant\n"
    );
    assert_eq!(t.read_string("a.txt"), "A\n");
    assert!(t.exists(RECORD), "the run waits for recover");
}

/// A run killed right after it exchanged a target with its new content, before looking
/// at what it replaced: recovery finds the displaced file beside the target and, since
/// it holds neither side (a save made in that instant), keeps it and says where.
#[test]
fn recovery_keeps_a_displaced_save_it_finds_beside_a_target() {
    let t = TestRepo::new();
    t.write("a.txt", "a\n");
    t.commit_all("init");
    let id = stage(&t, &[("a.txt", Some("A\n"))]);
    // The state a kill leaves after the exchange: the target holds the new content,
    // the temp name what the target held, which here is a save of the user's.
    with_fault(&t, &["apply", &id], "after-commit");
    let temp = format!(".a.txt.astedit-{id}.tmp");
    assert!(t.exists(&temp), "the run's temp file");
    std::fs::rename(t.path().join(&temp), t.path().join("a.txt")).expect("rename");
    t.write(&temp, "a save of the user's\n");
    // Every command recovers first.
    let out = t.run(&["list"]);
    out.assert_code(0);
    assert_eq!(t.read_string("a.txt"), "A\n");
    assert!(!t.exists(&temp));
    let kept = t.path().join(format!(".git/astedit-saved/{id}/a.txt"));
    assert_eq!(
        std::fs::read_to_string(&kept).expect("kept"),
        "a save of the user's\n"
    );
    assert!(out.stderr.contains("astedit-saved"), "{}", out.stderr);
    let recovered = t.run(&["--json", "log"]).json();
    assert!(
        recovered.to_string().contains("astedit-saved"),
        "the journal names the kept file: {recovered}"
    );
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

#[test]
fn status_of_a_run_interrupted_before_its_point_of_no_return() {
    let t = TestRepo::new();
    t.write("a.js", "a();\n");
    t.commit_all("init");
    let id = stage(&t, &[("a.js", Some("A();\n"))]);
    with_fault(&t, &["apply"], "after-tempfiles");
    // `recover` looks without rolling anything first.
    let out = t.run(&["recover", "--status", "--json"]);
    out.assert_code(0);
    let s = out.json()["unfinished"].clone();
    assert_eq!(s["id"], id.as_str());
    assert_eq!(s["op"], "apply");
    assert_eq!(s["phase"], "prepared");
    assert_eq!(s["running"], false);
    assert_eq!(s["files"][0]["state"], "untouched");
    assert!(t.exists(RECORD));
    let out = t.run(&["recover", "--finish", "--json"]);
    out.assert_code(0);
    assert_eq!(out.json()["action"], "rolled-back");
    assert_eq!(t.read_string("a.js"), "a();\n");
    assert!(!t.snapshot().iter().any(|(p, ..)| p.contains("astedit")));
    let out = t.run(&["recover", "--json"]);
    out.assert_code(0);
    assert_eq!(out.json()["unfinished"], serde_json::Value::Null);
}
