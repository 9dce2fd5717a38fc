//! A shell command's window recorded with Watchman (issue 54 item 1): the record before
//! a command asks Watchman what changed since the last record's clock instead of
//! looking at every file. These tests run a Watchman service of their own (its socket,
//! state and log in a temporary folder, named to our binary by `WATCHMAN_SOCK`) and
//! stop it at the end. `.ci/run` installs Watchman and sets ASTEDIT_REQUIRE_WATCHMAN=1;
//! elsewhere they are skipped without it.

use std::path::Path;
use std::path::PathBuf;
use std::process::Child;
use std::process::Command;
use std::process::Stdio;
use std::time::Duration;
use std::time::Instant;

use serde_json::json;
use serde_json::Value;

use crate::util::TestRepo;

/// A Watchman service of the test's own, stopped when dropped.
struct Watchman {
    child: Child,
    sock: PathBuf,
    _dir: tempfile::TempDir,
}

impl Watchman {
    /// Starts one, or `None` (skipped) where Watchman is not installed.
    fn start() -> Option<Watchman> {
        let installed = Command::new("watchman")
            .arg("--version")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if !installed {
            assert!(
                std::env::var_os("ASTEDIT_REQUIRE_WATCHMAN").is_none(),
                "watchman is required but not on PATH"
            );
            eprintln!("skipped: no watchman on PATH");
            return None;
        }
        let dir = tempfile::tempdir().expect("temp dir");
        let sock = dir.path().join("sock");
        let arg = |name: &str, file: &str| format!("--{name}={}", dir.path().join(file).display());
        let child = Command::new("watchman")
            .args(["--foreground", "--no-save-state"])
            .arg(format!("--sockname={}", sock.display()))
            .arg(arg("statefile", "state"))
            .arg(arg("logfile", "log"))
            .arg(arg("pidfile", "pid"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("watchman starts");
        let w = Watchman {
            child,
            sock,
            _dir: dir,
        };
        let start = Instant::now();
        while w.cli(&["get-pid"]).is_none() {
            assert!(
                start.elapsed() < Duration::from_secs(30),
                "watchman did not answer"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        Some(w)
    }

    fn cli(&self, args: &[&str]) -> Option<Value> {
        let out = Command::new("watchman")
            .arg(format!("--sockname={}", self.sock.display()))
            .args(["--no-spawn", "--no-local", "--no-pretty"])
            .args(args)
            .stdin(Stdio::null())
            .output()
            .ok()?;
        let v: Value = serde_json::from_slice(&out.stdout).ok()?;
        (out.status.success() && v.get("error").is_none()).then_some(v)
    }

    fn watch(&self, dir: &Path) {
        let root = dir.canonicalize().expect("root");
        let v = self.cli(&["watch", root.to_str().expect("utf-8")]);
        assert!(v.is_some(), "watchman watches {}", root.display());
    }
}

impl Drop for Watchman {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A repository of a few files, watched by `w`.
fn watched_repo(w: &Watchman) -> TestRepo {
    let t = TestRepo::new();
    t.write(".gitignore", "build/\n*.log\n");
    t.write("src/a.py", "a = 1\n");
    t.write("src/b.py", "b = 1\n");
    t.write("src/gone.py", "gone = 1\n");
    t.write("docs/x.md", "x\n");
    t.commit_all("init");
    w.watch(t.path());
    t
}

/// A Claude Code `Bash` event of session `s` (its hooks reference's shape).
fn bash_event(t: &TestRepo, event: &str, id: &str, command: &str) -> Value {
    let mut ev = json!({
        "session_id": "s", "transcript_path": "/home/u/.claude/projects/p/t.jsonl",
        "cwd": t.path().to_str().expect("utf-8"), "permission_mode": "default",
        "hook_event_name": event, "tool_name": "Bash",
        "tool_input": {"command": command, "description": "d"}, "tool_use_id": id,
    });
    if event == "PostToolUse" {
        ev["tool_response"] = json!({"stdout": "", "stderr": "", "interrupted": false});
    }
    ev
}

fn hook(t: &TestRepo, w: &Watchman, ev: &Value) {
    let sock = w.sock.to_str().expect("utf-8");
    let out = t.run_with(
        ".",
        &["agent-hook", "claude-code"],
        &[("WATCHMAN_SOCK", sock)],
        Some(ev.to_string().as_bytes()),
    );
    out.assert_code(0);
}

/// Runs `command` (`sh -c`) in the work tree as the agent's Bash tool, between the
/// hook's PreToolUse and PostToolUse; what `between` does runs after the record before
/// it and before the command.
fn bash(t: &TestRepo, w: &Watchman, id: &str, command: &str) {
    hook(t, w, &bash_event(t, "PreToolUse", id, command));
    let mut cmd = Command::new("sh");
    t.env(&mut cmd);
    let out = cmd
        .current_dir(t.path())
        .args(["-c", command])
        .output()
        .expect("sh");
    assert!(out.status.success(), "{command}: {out:?}");
    hook(t, w, &bash_event(t, "PostToolUse", id, command));
}

/// The newest journal event: its files, and how its records were taken (the hook's
/// `record` in the preview's metadata).
fn newest(t: &TestRepo) -> (Vec<String>, Value) {
    let log = t.run(&["log", "--json"]).json();
    let e = &log["events"][0];
    let files = e["files"]
        .as_array()
        .expect("files")
        .iter()
        .map(|f| f.as_str().unwrap_or("").to_string())
        .collect();
    let commit = e["commit"].as_str().expect("commit");
    let message = t.git(&["cat-file", "commit", commit]);
    let meta = message
        .split_once("--- astedit-meta v1 ---\n")
        .map(|(_, m)| m)
        .expect("metadata");
    let meta: Value = serde_json::Deserializer::from_str(meta)
        .into_iter()
        .next()
        .and_then(Result::ok)
        .expect("metadata JSON");
    (files, meta["meta"]["details"]["hook"]["record"].clone())
}

#[test]
fn a_window_recorded_with_watchman_journals_what_the_full_look_would() {
    let Some(w) = Watchman::start() else { return };
    let t = watched_repo(&w);
    // The first record has no clock to start from: it looks at every file and keeps
    // one; the second asks Watchman.
    bash(&t, &w, "t1", "sed -i 's/1/2/' src/a.py");
    let (files, record) = newest(&t);
    assert_eq!(files, ["src/a.py"]);
    assert_eq!(record, json!({"before": "stat", "after": "watchman"}));

    // Everything a command does to files: a tracked file written, one deleted, an
    // untracked one created in a new folder, ignored ones (not journalled), a
    // folder renamed with its file, a file made executable.
    bash(
        &t,
        &w,
        "t2",
        "echo 'b = 2' > src/b.py && rm src/gone.py && mkdir -p new/deep && echo n > new/deep/n.py \
         && mkdir -p build && echo o > build/o.txt && echo l > x.log \
         && mv docs moved && chmod +x src/a.py",
    );
    let (files, record) = newest(&t);
    assert_eq!(record, json!({"before": "watchman", "after": "watchman"}));
    assert_eq!(
        files,
        [
            "docs/x.md",
            "moved/x.md",
            "new/deep/n.py",
            "src/a.py",
            "src/b.py",
            "src/gone.py"
        ]
    );
    t.run(&["undo"]).assert_code(0);
    assert_eq!(t.read_string("src/b.py"), "b = 1\n");
    assert_eq!(t.read_string("src/gone.py"), "gone = 1\n");
    assert_eq!(t.read_string("docs/x.md"), "x\n");
    assert!(!t.exists("moved/x.md") && !t.exists("new/deep/n.py"));
    assert!(
        t.exists("build/o.txt"),
        "ignored: not the command's to take back"
    );
}

/// A write made between two records, outside any window (the user, an editor), is in
/// the next record: a command that then changes the file is journalled from what that
/// write left, so undoing the command keeps the write.
#[test]
fn a_write_between_two_records_is_never_missed() {
    let Some(w) = Watchman::start() else { return };
    let t = watched_repo(&w);
    bash(&t, &w, "t1", "true");
    for round in 0..3 {
        // Outside any window: after the last record, before the next.
        t.write("src/a.py", format!("a = {round} # by hand\n"));
        t.write(&format!("notes{round}.txt"), "by hand\n");
        bash(
            &t,
            &w,
            &format!("r{round}"),
            "sed -i 's/# by hand/# by the command/' src/a.py",
        );
        let (files, record) = newest(&t);
        assert_eq!(files, ["src/a.py"], "round {round}");
        assert_eq!(record, json!({"before": "watchman", "after": "watchman"}));
        t.run(&["undo"]).assert_code(0);
        assert_eq!(
            t.read_string("src/a.py"),
            format!("a = {round} # by hand\n"),
            "round {round}: the hand's write is kept"
        );
    }
}

/// The index rewritten with the same entries (new stat data) keeps the record asking
/// Watchman; with other entries (`git add`) the files the record did not look at may
/// not be what it thinks, so it looks at every one again.
#[test]
fn an_index_with_other_entries_makes_the_record_look_at_every_file() {
    let Some(w) = Watchman::start() else { return };
    let t = watched_repo(&w);
    bash(&t, &w, "t1", "true");
    // The index rewritten with other stat data only (as a `git status` that refreshes
    // it does): the same entries.
    let sum = |t: &TestRepo| t.git(&["hash-object", ".git/index"]);
    let index = sum(&t);
    t.git(&["read-tree", "HEAD"]);
    assert_ne!(sum(&t), index, "the index was rewritten");
    bash(&t, &w, "t1b", "sed -i 's/1/2/' src/a.py");
    let (files, record) = newest(&t);
    assert_eq!(files, ["src/a.py"]);
    assert_eq!(record, json!({"before": "watchman", "after": "watchman"}));
    t.write("src/b.py", "b = 3\n");
    t.git(&["add", "src/b.py"]);
    bash(&t, &w, "t2", "sed -i 's/3/4/' src/b.py");
    let (files, record) = newest(&t);
    assert_eq!(files, ["src/b.py"]);
    assert_eq!(record, json!({"before": "stat", "after": "watchman"}));
    t.run(&["undo"]).assert_code(0);
    assert_eq!(t.read_string("src/b.py"), "b = 3\n");
    // `astedit.watchman = false`: never asked.
    t.git(&["config", "astedit.watchman", "false"]);
    bash(&t, &w, "t3", "sed -i 's/3/5/' src/b.py");
    let (_, record) = newest(&t);
    assert_eq!(record, json!({"before": "stat", "after": "stat"}));
}
