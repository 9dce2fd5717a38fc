//! Integration tests: `git astedit lane` (issue 54 item 2): one linked worktree per
//! agent, its own turn lock, and lanes merged back by syntax node.

use std::path::PathBuf;

use serde_json::json;
use serde_json::Value;

use crate::util::Output;
use crate::util::TestRepo;

/// Two functions with no line between them: a change at the end of one and one at the
/// start of the other touch, so a line merge conflicts.
const LIB: &str = "def alpha():\n    return 1\ndef beta():\n    return 2\n";

fn repo() -> TestRepo {
    let t = TestRepo::new();
    t.write("src/lib.py", LIB);
    t.write("README", "lanes\n");
    t.commit_all("init");
    t
}

/// `lane start NAME`: the lane's folder, as printed.
fn start(t: &TestRepo, name: &str) -> PathBuf {
    let out = t.run(&["lane", "start", name]);
    out.assert_code(0);
    let path = PathBuf::from(out.stdout.trim_end());
    assert!(path.is_absolute(), "{out:?}");
    path
}

fn lane_ref(t: &TestRepo, name: &str) -> Option<String> {
    let out = t.git_output(&[
        "rev-parse",
        "--verify",
        "-q",
        &format!("refs/astedit-lanes/{name}"),
    ]);
    (out.code == 0).then(|| out.stdout.trim().to_string())
}

fn worktrees(t: &TestRepo) -> String {
    t.git(&["worktree", "list", "--porcelain"])
}

#[test]
fn lane_start_list_and_drop_make_and_remove_the_worktree_and_its_ref() {
    let t = repo();
    let head = t.git(&["rev-parse", "HEAD"]).trim().to_string();
    let a = start(&t, "a");
    let git_dir = t.path().join(".git").canonicalize().expect("git dir");
    assert_eq!(a, git_dir.join("astedit/lanes/a"));
    assert!(a.join(".git").is_file(), "a linked worktree");
    assert_eq!(
        std::fs::read_to_string(a.join("src/lib.py")).expect("file"),
        LIB
    );
    assert_eq!(lane_ref(&t, "a").as_deref(), Some(head.as_str()));
    assert!(worktrees(&t).contains(a.to_str().expect("utf-8")));
    // The main tree does not see it.
    assert_eq!(t.git(&["status", "--porcelain"]), "");

    // A second start of the name, and names that are options or paths: refused,
    // nothing made.
    t.run(&["--json", "lane", "start", "a"]).assert_code(2);
    for bad in ["-x", "../x", "x/y", "a..b", ".hidden", "x.lock", ""] {
        let out = t.run(&["--json", "lane", "start", "--", bad]);
        out.assert_code(2);
        assert_eq!(
            out.json()["error"]["code"],
            "bad-lane-name",
            "{bad}: {out:?}"
        );
    }
    let refs = t.git(&["for-each-ref", "--format=%(refname)", "refs/astedit-lanes/"]);
    assert_eq!(refs, "refs/astedit-lanes/a\n");

    // What the lane changed: a tracked file and a new one.
    std::fs::write(a.join("src/lib.py"), LIB.replace("return 1", "return 10")).expect("write");
    std::fs::write(a.join("NEW"), "new\n").expect("write");
    let list = t.run(&["--json", "lane", "list"]);
    list.assert_code(0);
    let v = list.json();
    crate::contract::validate(&t, "lane", &v);
    assert_eq!(v["action"], "list");
    assert_eq!(v["lanes"][0]["name"], "a");
    assert_eq!(v["lanes"][0]["base"], head.as_str());
    assert_eq!(v["lanes"][0]["changed"], json!(["NEW", "src/lib.py"]));
    assert_eq!(v["lanes"][0]["unmerged"], json!(["NEW", "src/lib.py"]));

    // Not merged here: drop refuses and says what would be lost.
    let out = t.run(&["--json", "lane", "drop", "a"]);
    out.assert_code(4);
    let e = &out.json()["error"];
    assert_eq!(e["code"], "lane-unmerged");
    assert_eq!(e["details"]["paths"], json!(["NEW", "src/lib.py"]));
    assert!(a.join("NEW").exists() && lane_ref(&t, "a").is_some());

    // Held here (the same change made in the main tree): only NEW is not merged.
    t.write("src/lib.py", LIB.replace("return 1", "return 10"));
    let v = t.run(&["--json", "lane", "list"]).json();
    assert_eq!(v["lanes"][0]["unmerged"], json!(["NEW"]));

    let out = t.run(&["--json", "lane", "drop", "--force", "a"]);
    out.assert_code(0);
    assert_eq!(out.json()["lanes"][0]["unmerged"], json!(["NEW"]));
    assert!(!a.exists());
    assert_eq!(lane_ref(&t, "a"), None);
    assert!(!worktrees(&t).contains("astedit/lanes/a"));

    // The hook configuration the main tree holds uncommitted is copied into a new lane,
    // and, the same here, is no change to keep: the lane drops without --force.
    let settings = "{\"hooks\": {}}\n";
    t.write(".claude/settings.json", settings);
    let b = start(&t, "b");
    let copied = std::fs::read_to_string(b.join(".claude/settings.json")).expect("copied");
    assert_eq!(copied, settings);
    t.run(&["lane", "drop", "b"]).assert_code(0);
    assert!(!b.exists() && lane_ref(&t, "b").is_none());
    let v = t.run(&["--json", "lane", "list"]).json();
    assert_eq!(v["lanes"], json!([]));
}

/// A Claude Code event from a session working in `dir`.
fn event(dir: &std::path::Path, session: &str, name: &str, tool: &str, file: &str) -> Value {
    let path = dir.join(file);
    let content = std::fs::read_to_string(&path).unwrap_or_default();
    let mut ev = json!({
        "session_id": session,
        "cwd": dir.to_str().expect("utf-8"),
        "hook_event_name": name,
        "tool_name": tool,
        "tool_input": {"file_path": path.to_str().expect("utf-8"), "content": content},
    });
    if name == "PostToolUse" {
        ev["tool_response"] = json!({"type": "update", "filePath": path.to_str().expect("utf-8")});
    }
    ev
}

fn hook_in(t: &TestRepo, dir: &std::path::Path, ev: &Value) -> Output {
    let out = t.run_with(
        dir.to_str().expect("utf-8"),
        &["agent-hook", "claude-code"],
        // No waiting: a lock held elsewhere would refuse at once.
        &[("GIT_ASTEDIT_LOCK_WAIT", "0")],
        Some(ev.to_string().as_bytes()),
    );
    assert_eq!(out.code, 0, "{out:?}");
    out
}

#[test]
fn a_lanes_hook_writes_while_the_main_tree_holds_a_turn() {
    let t = repo();
    let lane = start(&t, "l");
    let main = t.path().to_path_buf();
    // The main tree's session takes its turn (PreToolUse) and keeps it.
    hook_in(
        &t,
        &main,
        &event(&main, "m", "PostToolUse", "Read", "src/lib.py"),
    );
    let out = hook_in(
        &t,
        &main,
        &event(&main, "m", "PreToolUse", "Write", "src/lib.py"),
    );
    assert_eq!(out.stdout, "", "allowed");
    let main_lock = t.path().join(".git/astedit.lock");
    assert!(main_lock.exists(), "the main tree's turn is held");

    // The lane's session reads, checks and writes meanwhile: never refused as busy.
    hook_in(
        &t,
        &lane,
        &event(&lane, "l", "PostToolUse", "Read", "src/lib.py"),
    );
    let out = hook_in(
        &t,
        &lane,
        &event(&lane, "l", "PreToolUse", "Write", "src/lib.py"),
    );
    assert_eq!(out.stdout, "", "the lane's write is allowed: {out:?}");
    std::fs::write(
        lane.join("src/lib.py"),
        LIB.replace("return 2", "return 20"),
    )
    .expect("write");
    let out = hook_in(
        &t,
        &lane,
        &event(&lane, "l", "PostToolUse", "Write", "src/lib.py"),
    );
    assert_eq!(out.stdout, "", "{out:?}");
    assert!(main_lock.exists(), "the main tree's turn is still held");

    // Journalled in the repository's one journal, as the lane's session.
    let log = t.run_in(lane.to_str().expect("utf-8"), &["--json", "log"]);
    log.assert_code(0);
    let events = log.json()["events"].clone();
    let first = &events[0];
    assert_eq!(first["event"], "applied", "{events}");
    assert_eq!(first["agent"], "claude-code/session:l", "{events}");
    // The main tree's tool fails: its turn ends. Then the lane's edit is undone in the
    // lane, where it was made (an undo takes the main tree's lock too).
    hook_in(
        &t,
        &main,
        &event(&main, "m", "PostToolUseFailure", "Write", "src/lib.py"),
    );
    assert!(!main_lock.exists());
    let undo = t.run_in(
        lane.to_str().expect("utf-8"),
        &["undo", first["id"].as_str().expect("id")],
    );
    undo.assert_code(0);
    assert_eq!(
        std::fs::read_to_string(lane.join("src/lib.py")).expect("read"),
        LIB
    );
    assert_eq!(t.read_string("src/lib.py"), LIB);
}

/// Writes `content` to `path` in the lane.
fn edit(lane: &std::path::Path, path: &str, content: &str) {
    std::fs::write(lane.join(path), content).expect("write");
}

#[test]
fn two_lanes_changing_touching_functions_merge_by_declaration_into_one_preview() {
    let t = repo();
    let x = start(&t, "x");
    let y = start(&t, "y");
    let xs = LIB.replace("return 1", "return 1 + 100");
    let ys = LIB.replace("def beta():", "def beta(x=0):");
    edit(&x, "src/lib.py", &xs);
    edit(&y, "src/lib.py", &ys);
    // Lane y also adds a file.
    edit(&y, "src/new.py", "def new():\n    pass\n");

    // A line merge of the two conflicts: their lines touch.
    let dir = tempfile::tempdir().expect("tempdir");
    for (name, text) in [("base", LIB), ("x", xs.as_str()), ("y", ys.as_str())] {
        std::fs::write(dir.path().join(name), text).expect("write");
    }
    let mut git = std::process::Command::new("git");
    git.current_dir(dir.path())
        .args(["merge-file", "-p", "x", "base", "y"]);
    let line = git.output().expect("git merge-file");
    assert_eq!(line.status.code(), Some(1), "one conflict by line");

    // Checked in a worktree of the merged preview (`--verify`, as `apply` does).
    let check = "grep -q 'return 1 + 100' src/lib.py && grep -q 'beta(x=0)' src/lib.py";
    let out = t.run(&["--json", "lane", "merge", "x", "y", "--verify", check]);
    out.assert_code(0);
    let v = out.json();
    crate::contract::validate(&t, "lane-merge", &v);
    assert_eq!(v["verify"]["passed"], true, "{v}");
    let id = v["id"].as_str().expect("a preview").to_string();
    assert_eq!(v["lanes"], json!(["x", "y"]));
    assert_eq!(
        v["files"],
        json!([
            {"path": "src/lib.py", "how": "by-node", "lanes": ["x", "y"]},
            {"path": "src/new.py", "how": "taken", "lanes": ["y"]},
        ])
    );
    let r = format!("refs/astedit/{id}");
    let both = "def alpha():\n    return 1 + 100\ndef beta(x=0):\n    return 2\n";
    assert_eq!(t.git(&["show", &format!("{r}:src/lib.py")]), both);
    assert_eq!(t.git(&["show", &format!("{r}~:src/lib.py")]), LIB);
    assert_eq!(
        t.git(&["show", &format!("{r}:src/new.py")]),
        "def new():\n    pass\n"
    );
    // Staged, not written.
    assert_eq!(t.read_string("src/lib.py"), LIB);
    t.run(&["apply", &id]).assert_code(0);
    assert_eq!(t.read_string("src/lib.py"), both);
    // Merged here now: the lanes drop without --force.
    t.run(&["lane", "drop", "x"]).assert_code(0);
    t.run(&["lane", "drop", "y"]).assert_code(0);
}

#[test]
fn the_same_function_changed_in_two_lanes_is_a_conflict_and_nothing_is_staged() {
    let t = repo();
    let x = start(&t, "x");
    let y = start(&t, "y");
    edit(&x, "src/lib.py", &LIB.replace("return 2", "return 2 + 1"));
    edit(
        &y,
        "src/lib.py",
        &LIB.replace("def beta():", "def beta(x=0):"),
    );
    let out = t.run(&["--json", "lane", "merge", "x", "y"]);
    out.assert_code(3);
    crate::contract::validate(&t, "error", &out.json());
    let e = &out.json()["error"];
    assert_eq!(e["code"], "lane-conflict", "{e}");
    let c = &e["details"]["conflicts"][0];
    assert_eq!(c["lane"], "y");
    assert_eq!(c["path"], "src/lib.py");
    assert_eq!(c["also_changed_by"], json!(["x"]));
    assert_eq!(
        c["nodes"],
        json!([{"kind": "function_definition", "name": "beta", "region": {"start": 3, "end": 4},
                "why": "changed on both sides"}])
    );
    assert!(t.astedit_refs().is_empty(), "nothing staged");
    let text = t.run(&["lane", "merge", "x", "y"]);
    text.assert_code(3);
    // A binary file both lanes changed is a conflict too, not a failure.
    edit(&x, "src/lib.py", LIB);
    edit(&y, "src/lib.py", LIB);
    std::fs::write(x.join("README"), b"x\0x").expect("write");
    std::fs::write(y.join("README"), b"y\0y").expect("write");
    let out = t.run(&["--json", "lane", "merge", "x", "y"]);
    out.assert_code(3);
    let c = &out.json()["error"]["details"]["conflicts"][0];
    assert_eq!(c["path"], "README");
    assert_eq!(c["why"], "a binary file changed on both sides");
    assert!(
        text.stderr
            .contains("function_definition beta (lines 3-4): changed on both sides"),
        "{}",
        text.stderr
    );
}

/// Session `session`'s hook-watched write of `content` to `file` in work tree `dir`:
/// Read, PreToolUse, the write, PostToolUse; journalled as an applied `hook` edit.
fn hook_write(t: &TestRepo, dir: &std::path::Path, session: &str, file: &str, content: &str) {
    hook_in(t, dir, &event(dir, session, "PostToolUse", "Read", file));
    let out = hook_in(t, dir, &event(dir, session, "PreToolUse", "Write", file));
    assert_eq!(out.stdout, "", "allowed: {out:?}");
    std::fs::write(dir.join(file), content).expect("write");
    let out = hook_in(t, dir, &event(dir, session, "PostToolUse", "Write", file));
    assert_eq!(out.stdout, "", "{out:?}");
}

/// Each journal event's (event, agent, worktree) as `log --json` gives them in `dir`.
fn log_in(t: &TestRepo, dir: &std::path::Path, args: &[&str]) -> Vec<(String, String, String)> {
    let mut all = vec!["--json", "log"];
    all.extend_from_slice(args);
    let out = t.run_in(dir.to_str().expect("utf-8"), &all);
    out.assert_code(0);
    let s = |v: &Value| v.as_str().unwrap_or("").to_string();
    out.json()["events"]
        .as_array()
        .expect("events")
        .iter()
        .map(|e| (s(&e["event"]), s(&e["agent"]), s(&e["worktree"])))
        .collect()
}

#[test]
fn an_id_less_undo_and_log_keep_to_the_work_tree_they_run_in() {
    let t = repo();
    let lane = start(&t, "l");
    let main = t.path().to_path_buf();
    // The main tree's session edits first, the lane's after: the lane's is the
    // journal's newest.
    hook_write(&t, &main, "m", "README", "main\n");
    hook_write(
        &t,
        &lane,
        "l",
        "src/lib.py",
        &LIB.replace("return 2", "return 20"),
    );

    // Each event says where it was made; `log` shows the events of its own tree.
    let applied = |v: Vec<(String, String, String)>| -> Vec<(String, String)> {
        v.into_iter()
            .filter(|(e, ..)| e == "applied")
            .map(|(_, a, w)| (a, w))
            .collect()
    };
    let m = ("claude-code/session:m".to_string(), String::new());
    let l = ("claude-code/session:l".to_string(), "l".to_string());
    assert_eq!(applied(log_in(&t, &main, &[])), std::slice::from_ref(&m));
    assert_eq!(applied(log_in(&t, &lane, &[])), std::slice::from_ref(&l));
    assert_eq!(applied(log_in(&t, &main, &["--all-worktrees"])), [l, m]);
    let text = t.run(&["log", "--all-worktrees"]);
    assert!(text.stdout.contains("  worktree: l"), "{}", text.stdout);

    // An undo without an id on the main tree takes back the main tree's edit, not the
    // lane's newer one (which the main tree does not hold: it would be refused).
    let out = t.run(&["--json", "undo"]);
    out.assert_code(0);
    assert_eq!(out.json()["written"], json!(["README"]), "{}", out.stdout);
    assert_eq!(t.read_string("README"), "lanes\n");
    assert_eq!(
        std::fs::read_to_string(lane.join("src/lib.py")).expect("read"),
        LIB.replace("return 2", "return 20"),
        "the lane's edit stays"
    );
    // Nothing of the main tree's is left to undo there; the lane's is undone in it.
    let out = t.run(&["--json", "undo"]);
    out.assert_code(1);
    assert_eq!(out.json()["error"]["code"], "nothing-to-undo");
    t.run_in(lane.to_str().expect("utf-8"), &["undo"])
        .assert_code(0);
    assert_eq!(
        std::fs::read_to_string(lane.join("src/lib.py")).expect("read"),
        LIB
    );
}

/// A lane dropped with a pending preview and an applied edit, then started again under
/// its name: the new lane is a work tree of its own in the journal, so nothing of the
/// old one is applied, undone or listed there.
#[test]
fn a_lane_started_again_after_drop_takes_nothing_of_the_dropped_ones() {
    let t = repo();
    let old = start(&t, "a");
    let in_lane =
        |dir: &std::path::Path, args: &[&str]| t.run_in(dir.to_str().expect("utf-8"), args);
    hook_write(&t, &old, "s", "README", "old lane\n");
    in_lane(
        &old,
        &["edit", "-p", "return 1", "-r", "return 10", "src/lib.py"],
    )
    .assert_code(0);
    assert_eq!(log_in(&t, &old, &[]).len(), 2);
    t.run(&["lane", "drop", "--force", "a"]).assert_code(0);

    let new = start(&t, "a");
    assert_eq!(new, old, "the same folder");
    assert_eq!(
        log_in(&t, &new, &[]),
        [],
        "none of the dropped lane's events"
    );
    let out = in_lane(&new, &["--json", "apply"]);
    out.assert_code(1);
    let out = in_lane(&new, &["--json", "undo"]);
    out.assert_code(1);
    assert_eq!(out.json()["error"]["code"], "nothing-to-undo");
    assert_eq!(
        std::fs::read_to_string(new.join("src/lib.py")).expect("read"),
        LIB
    );
    assert_eq!(
        std::fs::read_to_string(new.join("README")).expect("read"),
        "lanes\n"
    );

    // Its events are its own: another worktree name in the journal.
    hook_write(&t, &new, "s2", "README", "new lane\n");
    let mine = log_in(&t, &new, &[]);
    assert_eq!(mine.len(), 1, "{mine:?}");
    assert_eq!(mine[0].2, "a-2");
    assert!(worktrees(&t).contains(new.to_str().expect("utf-8")));
    in_lane(&new, &["undo"]).assert_code(0);
    assert_eq!(
        std::fs::read_to_string(new.join("README")).expect("read"),
        "lanes\n"
    );
    // It drops as any lane does; a third start gets a third name.
    t.run(&["lane", "drop", "a"]).assert_code(0);
    let third = start(&t, "a");
    hook_write(&t, &third, "s3", "README", "third\n");
    assert_eq!(log_in(&t, &third, &[])[0].2, "a-3");
}

/// A Claude Code `Bash` event of `session` in work tree `dir`.
fn bash_event(dir: &std::path::Path, session: &str, name: &str, command: &str) -> Value {
    let mut ev = json!({
        "session_id": session,
        "cwd": dir.to_str().expect("utf-8"),
        "hook_event_name": name,
        "tool_name": "Bash",
        "tool_input": {"command": command},
    });
    if name == "PostToolUse" {
        ev["tool_response"] = json!({"stdout": "", "stderr": "", "interrupted": false});
    }
    ev
}

#[test]
fn a_lanes_edit_of_the_same_path_is_not_taken_out_of_a_main_tree_shell_command() {
    let t = repo();
    let lane = start(&t, "l");
    let main = t.path().to_path_buf();
    let command = "sed -i 's/return 1/return 10/' src/lib.py";
    hook_in(&t, &main, &bash_event(&main, "m", "PreToolUse", command));
    // While the main tree's command runs, the lane's agent edits its own src/lib.py.
    hook_write(
        &t,
        &lane,
        "l",
        "src/lib.py",
        &LIB.replace("return 2", "return 20"),
    );
    std::fs::write(
        main.join("src/lib.py"),
        LIB.replace("return 1", "return 10"),
    )
    .expect("write");
    let post = hook_in(&t, &main, &bash_event(&main, "m", "PostToolUse", command));
    assert_eq!(post.stdout, "", "nothing written by two: {post:?}");
    let v = t.run(&["--json", "log", "--session", "m"]).json();
    let e = &v["events"][0];
    assert_eq!(e["event"], "applied", "{v}");
    assert_eq!(
        e["files"],
        json!(["src/lib.py"]),
        "journalled as the command's: {e}"
    );
    assert_eq!(e["worktree"], Value::Null, "{e}");
    t.run(&["undo"]).assert_code(0);
    assert_eq!(t.read_string("src/lib.py"), LIB);
}

#[test]
fn a_preview_whose_apply_was_interrupted_in_a_lane_is_not_applied_on_the_main_tree_too() {
    let t = repo();
    let lane = start(&t, "l");
    let lane_dir = lane.to_str().expect("utf-8");
    // Staged on the main tree: the preview is shared by every work tree.
    let regular = git_astedit::change::FileMode::Regular;
    let id = crate::apply::stage(&t, &[("README", Some(b"changed\n".as_slice()), regular)]);
    // The lane's apply is killed past its point of no return: its record stays in the
    // lane's git dir, the preview still pending.
    let out = t.run_with(
        lane_dir,
        &["apply", &id],
        &[("GIT_ASTEDIT_FAULT", "after-renames")],
        None,
    );
    assert!(out.stderr.contains("fault injected"), "{}", out.stderr);
    assert_eq!(t.astedit_refs().len(), 1, "still pending");

    // Neither an apply on the main tree nor one of its parts runs it a second time.
    for args in [
        vec!["--json", "apply", &id],
        vec!["--json", "apply", &id, "--", "README"],
    ] {
        let out = t.run(&args);
        out.assert_code(6);
        let e = &out.json()["error"];
        assert_eq!(e["code"], "unfinished-elsewhere", "{e}");
        assert_eq!(e["details"]["worktree"], lane_dir, "{e}");
        assert_eq!(e["details"]["op"], "apply", "{e}");
        assert_eq!(t.read_string("README"), "lanes\n", "nothing written here");
    }
    crate::contract::validate(&t, "error", &t.run(&["--json", "apply", &id]).json());

    // Recovered in the lane, it is applied there, once.
    t.run_in(lane_dir, &["recover", "--finish"]).assert_code(0);
    assert_eq!(
        std::fs::read_to_string(lane.join("README")).expect("read"),
        "changed\n"
    );
    let out = t.run(&["--json", "apply", &id]);
    assert_eq!(
        out.json()["error"]["code"],
        "already-applied",
        "{}",
        out.stdout
    );
    assert_eq!(t.read_string("README"), "lanes\n");
}

/// The text block of an MCP tool result.
fn mcp_text(result: &Value) -> String {
    result["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

#[test]
fn the_mcp_lane_tool_starts_lists_merges_and_drops_as_the_cli_does() {
    let t = repo();
    let mut s = crate::mcp::Server::start(&t);
    s.handshake("2025-06-18", "lanes-test");
    let started = s.ok("lane", json!({"action": "start", "name": "x"}));
    let x = PathBuf::from(started["lanes"][0]["path"].as_str().expect("path"));
    assert_eq!(started["action"], "start", "{started}");
    assert!(x.join(".git").is_file(), "a linked worktree: {started}");
    assert_eq!(lane_ref(&t, "x").as_deref().map(str::len), Some(40));
    let y = PathBuf::from(
        s.ok("lane", json!({"action": "start", "name": "y"}))["lanes"][0]["path"]
            .as_str()
            .expect("path"),
    );
    edit(&x, "src/lib.py", &LIB.replace("return 1", "return 1 + 100"));
    edit(
        &y,
        "src/lib.py",
        &LIB.replace("def beta():", "def beta(x=0):"),
    );

    // `list` is `lane list --json`'s report, and its text the CLI's.
    let listed = s.call("lane", json!({}));
    assert_eq!(
        listed["structuredContent"]["lanes"],
        t.run(&["--json", "lane", "list"]).json()["lanes"]
    );
    assert_eq!(mcp_text(&listed), t.run(&["lane", "list"]).stdout);

    // A bad call is a tool error with the CLI's code.
    let bad = s.call("lane", json!({"action": "drop"}));
    assert_eq!(bad["isError"], true, "{bad}");
    assert_eq!(crate::mcp::error_json(&bad)["error"]["code"], "usage");
    let bad = s.call("lane", json!({"action": "start", "name": "-x"}));
    assert_eq!(
        crate::mcp::error_json(&bad)["error"]["code"],
        "bad-lane-name"
    );

    // `drop` of an unmerged lane is refused, naming its files.
    let refused = s.call("lane", json!({"action": "drop", "name": "x"}));
    let e = crate::mcp::error_json(&refused);
    assert_eq!(e["error"]["code"], "lane-unmerged", "{e}");
    assert_eq!(e["error"]["details"]["paths"], json!(["src/lib.py"]));
    assert!(x.exists());

    // `merge` stages one preview here, merged by declaration; `resolve` applies it.
    let merged = s.ok(
        "lane",
        json!({"action": "merge", "names": ["x", "y"], "reason": "bring both back"}),
    );
    let id = merged["id"].as_str().expect("a preview").to_string();
    assert_eq!(
        merged["files"],
        json!([{"path": "src/lib.py", "how": "by-node", "lanes": ["x", "y"]}])
    );
    assert_eq!(t.read_string("src/lib.py"), LIB, "staged, not written");
    s.ok(
        "resolve",
        json!({"action": "apply", "id": id, "reason": "merged lanes"}),
    );
    let both = "def alpha():\n    return 1 + 100\ndef beta(x=0):\n    return 2\n";
    assert_eq!(t.read_string("src/lib.py"), both);
    let dropped = s.ok("lane", json!({"action": "drop", "name": "x"}));
    assert_eq!(dropped["action"], "drop", "{dropped}");
    assert!(!x.exists() && lane_ref(&t, "x").is_none());

    // One function changed in two lanes: a conflict naming it, nothing staged.
    let z = PathBuf::from(
        s.ok("lane", json!({"action": "start", "name": "z"}))["lanes"][0]["path"]
            .as_str()
            .expect("path"),
    );
    edit(&y, "src/lib.py", &both.replace("return 2", "return 3"));
    edit(&z, "src/lib.py", &both.replace("return 2", "return 4"));
    let before = t.astedit_refs();
    let c = s.call("lane", json!({"action": "merge", "names": ["y", "z"]}));
    let e = crate::mcp::error_json(&c);
    assert_eq!(e["error"]["code"], "lane-conflict", "{e}");
    assert_eq!(
        e["error"]["details"]["conflicts"][0]["nodes"][0]["name"],
        "beta"
    );
    assert_eq!(t.astedit_refs(), before, "nothing staged");
    s.finish();
}
