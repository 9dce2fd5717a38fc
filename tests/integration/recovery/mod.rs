//! Integration tests: crash recovery that checks before it writes (folders swapped for
//! symlinks, files edited after the crash), `recover --status/--finish/--abandon`,
//! stale locks of dead processes, the rename window, disk-full leftovers, kept modes.

use std::path::Path;

use git_astedit::change::ChangeSet;
use git_astedit::change::FileChange;
use git_astedit::change::FileContent;
use git_astedit::change::FileMode;
use git_astedit::change::PreviewMeta;
use git_astedit::repo::Repo;

use crate::util::Output;
use crate::util::TestRepo;

mod fault_points;
mod locks;
mod saves;
mod writes;

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
