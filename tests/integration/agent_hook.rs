//! Integration tests: `git astedit agent-hook` (issue 40 item 3): Claude Code's and
//! OpenCode's hook events, fed to the command as the harnesses send them.

use serde_json::json;
use serde_json::Value;

use crate::util::Output;
use crate::util::TestRepo;

const A: &str = "fn a() {\n    one();\n}\n";

fn repo() -> TestRepo {
    let t = TestRepo::new();
    t.write("src/a.rs", A);
    t.commit_all("init");
    t
}

/// A Claude Code hook event, as it arrives on the command's stdin.
fn claude(
    t: &TestRepo,
    session: &str,
    event: &str,
    tool: &str,
    input: Value,
    response: Value,
) -> Value {
    let mut ev = json!({
        "session_id": session,
        "transcript_path": format!("/tmp/{session}.jsonl"),
        "cwd": t.path().to_str().expect("utf-8"),
        "permission_mode": "default",
        "hook_event_name": event,
        "tool_name": tool,
        "tool_input": input,
        "tool_use_id": "toolu_01",
    });
    if event == "PostToolUse" {
        ev["tool_response"] = response;
    }
    ev
}

fn hook(t: &TestRepo, harness: &str, event: &Value) -> Output {
    let out = t.run_with(
        ".",
        &["agent-hook", harness],
        &[],
        Some(event.to_string().as_bytes()),
    );
    assert_eq!(out.code, 0, "{out:?}");
    out
}

fn abs(t: &TestRepo, path: &str) -> String {
    t.path().join(path).to_str().expect("utf-8").to_string()
}

/// Session `s` reads `path` (the PostToolUse event of Read).
fn read(t: &TestRepo, s: &str, path: &str) {
    let content = t.read_string(path);
    let out = hook(
        t,
        "claude-code",
        &claude(
            t,
            s,
            "PostToolUse",
            "Read",
            json!({"file_path": abs(t, path)}),
            json!({"type": "text", "file": {"filePath": abs(t, path), "content": content}}),
        ),
    );
    assert_eq!(out.stdout, "", "a read is answered with nothing");
}

/// The PreToolUse decision for a Write of `path` by session `s`: the deny reason, if any.
fn pre_write(t: &TestRepo, s: &str, path: &str, content: &str) -> Option<String> {
    let out = hook(
        t,
        "claude-code",
        &claude(
            t,
            s,
            "PreToolUse",
            "Write",
            json!({"file_path": abs(t, path), "content": content}),
            Value::Null,
        ),
    );
    if out.stdout.trim().is_empty() {
        return None;
    }
    let v: Value = serde_json::from_str(&out.stdout).expect("json answer");
    let h = &v["hookSpecificOutput"];
    assert_eq!(h["hookEventName"], "PreToolUse", "{v}");
    assert_eq!(h["permissionDecision"], "deny", "{v}");
    h["permissionDecisionReason"].as_str().map(str::to_string)
}

#[test]
fn a_stale_write_is_refused_and_allowed_after_a_fresh_read() {
    let t = repo();
    read(&t, "s1", "src/a.rs");
    read(&t, "s2", "src/a.rs");
    // Session 2 edits the file (its own Write tool, then the PostToolUse event).
    assert_eq!(
        pre_write(&t, "s2", "src/a.rs", "fn a() {\n    two();\n}\n"),
        None
    );
    t.write("src/a.rs", "fn a() {\n    two();\n}\n");
    hook(
        &t,
        "claude-code",
        &claude(
            &t,
            "s2",
            "PostToolUse",
            "Write",
            json!({"file_path": abs(&t, "src/a.rs"), "content": "fn a() {\n    two();\n}\n"}),
            json!({"type": "update", "filePath": abs(&t, "src/a.rs")}),
        ),
    );
    // Session 1 still has the old content in mind: its write would drop session 2's.
    let reason = pre_write(
        &t,
        "s1",
        "src/a.rs",
        "fn a() {\n    one();\n    more();\n}\n",
    )
    .expect("a stale write is refused");
    assert!(
        reason.contains("src/a.rs") && reason.contains("since this session last read it"),
        "{reason}"
    );
    assert!(reason.contains("Read src/a.rs again"), "{reason}");
    // After reading it again, the write goes through.
    read(&t, "s1", "src/a.rs");
    assert_eq!(pre_write(&t, "s1", "src/a.rs", "x"), None);
    // (Its tool then fails: the turn the check gave it ends.)
    hook(
        &t,
        "claude-code",
        &claude(
            &t,
            "s1",
            "PostToolUseFailure",
            "Write",
            json!({"file_path": abs(&t, "src/a.rs"), "content": "x"}),
            Value::Null,
        ),
    );
    // A session that never read the file is not refused (the harness has its rule).
    assert_eq!(pre_write(&t, "s3", "src/a.rs", "x"), None);
    // Files outside the work tree are not ours.
    let out = hook(
        &t,
        "claude-code",
        &claude(
            &t,
            "s1",
            "PreToolUse",
            "Write",
            json!({"file_path": "/tmp/elsewhere.txt", "content": "x"}),
            Value::Null,
        ),
    );
    assert_eq!(out.stdout, "");
}

#[test]
fn an_edit_is_journalled_and_undo_reverts_it() {
    let t = repo();
    read(&t, "sess-9", "src/a.rs");
    let input = json!({"file_path": abs(&t, "src/a.rs"), "old_string": "one();",
                       "new_string": "uno();", "replace_all": false});
    let out = hook(
        &t,
        "claude-code",
        &claude(
            &t,
            "sess-9",
            "PreToolUse",
            "Edit",
            input.clone(),
            Value::Null,
        ),
    );
    assert_eq!(out.stdout, "", "allowed: {out:?}");
    // Claude Code's Edit tool writes the file.
    t.write("src/a.rs", A.replace("one();", "uno();"));
    hook(
        &t,
        "claude-code",
        &claude(
            &t,
            "sess-9",
            "PostToolUse",
            "Edit",
            input,
            json!({"filePath": abs(&t, "src/a.rs"), "oldString": "one();", "newString": "uno();",
               "originalFile": A, "structuredPatch": [], "userModified": false, "replaceAll": false}),
        ),
    );
    let log = t.run(&["--json", "log"]);
    log.assert_code(0);
    let events = log.json();
    let applied = events["events"]
        .as_array()
        .expect("events")
        .iter()
        .find(|e| e["event"] == "applied")
        .cloned()
        .unwrap_or_else(|| panic!("an applied event: {events}"));
    assert_eq!(applied["agent"], "claude-code/session:sess-9", "{applied}");
    assert_eq!(applied["kind"], "hook", "{applied}");
    assert_eq!(applied["files"], json!(["src/a.rs"]));
    let text = t.run(&["log"]).stdout;
    assert!(text.contains("claude-code/session:sess-9"), "{text}");
    // Undo takes the edit back.
    t.run(&["undo", "--reason", "revert the agent's edit"])
        .assert_code(0);
    assert_eq!(t.read_string("src/a.rs"), A);
    t.fsck();
}

#[test]
fn a_created_file_is_journalled_and_opencode_is_answered_in_its_shape() {
    let t = repo();
    let path = abs(&t, "src/new.rs");
    let oc = |hook_name: &str, tool: &str, args: Value| {
        json!({"hook": hook_name, "tool": tool, "sessionID": "ses_1", "callID": "c1",
               "args": args, "directory": t.path().to_str().expect("utf-8")})
    };
    let out = hook(
        &t,
        "opencode",
        &oc(
            "tool.execute.before",
            "write",
            json!({"filePath": path, "content": "fn n() {}\n"}),
        ),
    );
    let v: Value = serde_json::from_str(&out.stdout).expect("json");
    assert_eq!(v["decision"], "allow", "{v}");
    t.write("src/new.rs", "fn n() {}\n");
    let out = hook(
        &t,
        "opencode",
        &oc(
            "tool.execute.after",
            "write",
            json!({"filePath": path, "content": "fn n() {}\n"}),
        ),
    );
    let v: Value = serde_json::from_str(&out.stdout).expect("json");
    assert!(v["journalled"].is_string(), "{v}");
    // Someone changes the file; OpenCode's session, which wrote it, is refused.
    t.write("src/new.rs", "fn n() { changed(); }\n");
    let out = hook(
        &t,
        "opencode",
        &oc(
            "tool.execute.before",
            "edit",
            json!({"filePath": path, "oldString": "n()", "newString": "m()"}),
        ),
    );
    let v: Value = serde_json::from_str(&out.stdout).expect("json");
    assert_eq!(v["decision"], "deny", "{v}");
    // Undo of the creation is refused while the file holds other content (stale),
    // and works once it holds what was written.
    t.run(&["undo", "--reason", "x"]).assert_code(3);
    t.write("src/new.rs", "fn n() {}\n");
    t.run(&["undo", "--reason", "x"]).assert_code(0);
    assert!(!t.exists("src/new.rs"));
}

#[test]
fn install_merges_claude_settings_and_writes_the_opencode_plugin() {
    let t = repo();
    t.write(
        ".claude/settings.json",
        r#"{"permissions": {"allow": ["Bash(ls)"]}, "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "mine"}]}]}}"#,
    );
    let out = t.run(&["agent-hook", "install", "claude-code"]);
    out.assert_code(0);
    let v: Value = serde_json::from_str(&t.read_string(".claude/settings.json")).expect("json");
    assert_eq!(v["permissions"]["allow"], json!(["Bash(ls)"]));
    let pre = v["hooks"]["PreToolUse"].as_array().expect("pre");
    assert_eq!(pre.len(), 2, "{v}");
    assert_eq!(pre[0]["hooks"][0]["command"], "mine");
    assert_eq!(pre[1]["matcher"], "Edit|MultiEdit|Write|Bash");
    assert_eq!(
        pre[1]["hooks"][0]["command"],
        "git astedit agent-hook claude-code"
    );
    assert_eq!(
        v["hooks"]["PostToolUse"][0]["matcher"],
        "Read|Edit|MultiEdit|Write|Bash"
    );
    // An install of before the shell hooks gets Bash added to its matchers, once.
    let old = t
        .read_string(".claude/settings.json")
        .replace("|Bash\"", "\"");
    t.write(".claude/settings.json", &old);
    t.run(&["agent-hook", "install", "claude-code"])
        .assert_code(0);
    let v: Value = serde_json::from_str(&t.read_string(".claude/settings.json")).expect("json");
    assert_eq!(
        v["hooks"]["PreToolUse"][1]["matcher"],
        "Edit|MultiEdit|Write|Bash"
    );
    assert_eq!(v["hooks"]["PreToolUse"].as_array().map(Vec::len), Some(2));
    // Twice changes nothing.
    let before = t.read_string(".claude/settings.json");
    let out = t.run(&["agent-hook", "install", "claude-code"]);
    assert!(out.stdout.contains("nothing changed"), "{out:?}");
    assert_eq!(t.read_string(".claude/settings.json"), before);
    // Broken settings are refused, not replaced.
    t.write(".claude/settings.json", "{ not json");
    t.run(&["agent-hook", "install", "claude-code"])
        .assert_code(2);
    assert_eq!(t.read_string(".claude/settings.json"), "{ not json");

    t.run(&["agent-hook", "install", "opencode"]).assert_code(0);
    let plugin = t.read_string(".opencode/plugin/git-astedit.js");
    assert!(
        plugin.contains("tool.execute.before") && plugin.contains("agent-hook"),
        "{plugin}"
    );
}

#[test]
fn a_bad_event_never_blocks_the_agent() {
    let t = repo();
    let out = t.run_with(".", &["agent-hook", "claude-code"], &[], Some(b"not json"));
    // 1 is a non-blocking error to Claude Code; 2 would block the tool call.
    assert_eq!(out.code, 1, "{out:?}");
    assert!(out.stderr.contains("agent-hook"), "{out:?}");
    // Other tools and events are ignored.
    let out = hook(
        &t,
        "claude-code",
        &claude(
            &t,
            "s",
            "PreToolUse",
            "WebFetch",
            json!({"url": "https://example.com"}),
            Value::Null,
        ),
    );
    assert_eq!(out.stdout, "");
}

#[test]
fn the_opencode_plugin_runs_under_node() {
    if std::process::Command::new("node")
        .arg("--version")
        .output()
        .is_err()
    {
        eprintln!("skipped: no node");
        return;
    }
    let t = TestRepo::new();
    t.write("a.txt", "one\n");
    t.commit_all("init");
    t.run(&["agent-hook", "install", "opencode"]).assert_code(0);
    // Loaded as an ES module, as OpenCode (Bun) loads it.
    let plugin = t.path().join("plugin.mjs");
    std::fs::copy(t.path().join(".opencode/plugin/git-astedit.js"), &plugin).expect("copy");
    let script =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/js/opencode-plugin.mjs");
    let bin_dir = crate::util::bin().parent().expect("bin dir").to_path_buf();
    let path = format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut cmd = std::process::Command::new("node");
    t.env(&mut cmd);
    cmd.env("PATH", path).arg(script).arg(&plugin).arg(t.path());
    let out = crate::util::run_command(cmd);
    assert_eq!(out.code, 0, "{out:?}");
    let log = t.run(&["log"]).stdout;
    assert!(
        log.contains("opencode/session:s2") && log.contains("opencode/session:s1"),
        "{log}"
    );
    assert_eq!(t.read_string("a.txt"), "two\nthree\n");
}

/// A Claude Code event for session `s`'s Edit of `src/a.rs` (one → uno).
fn edit_event(t: &TestRepo, s: &str, event: &str) -> Value {
    let input = json!({"file_path": abs(t, "src/a.rs"), "old_string": "one();",
                       "new_string": "uno();", "replace_all": false});
    let mut ev = claude(t, s, event, "Edit", input, Value::Null);
    match event {
        "PostToolUse" => {
            ev["tool_response"] = json!({"filePath": abs(t, "src/a.rs"), "oldString": "one();",
                "newString": "uno();", "originalFile": A, "structuredPatch": [],
                "userModified": false, "replaceAll": false});
        }
        "PostToolUseFailure" => {
            ev["error"] = json!("File has been modified since read");
        }
        _ => {}
    }
    ev
}

/// A preview of `src/a.rs` staged from the file as it is now: `one()` → `eins()`.
fn stage_eins(t: &TestRepo) -> String {
    let out = t.run(&[
        "--json", "edit", "-p", "one()", "-r", "eins()", "--lang", "rust",
    ]);
    out.assert_code(0);
    out.json()["id"].as_str().expect("id").to_string()
}

#[test]
fn an_apply_takes_its_turn_after_a_hook_allowed_write() {
    // The lost update the stress harness found: an apply landing between the hook's
    // check and the write it allowed, which then overwrote the applied change.
    let t = repo();
    let id = stage_eins(&t);
    read(&t, "s1", "src/a.rs");
    let out = hook(&t, "claude-code", &edit_event(&t, "s1", "PreToolUse"));
    assert_eq!(out.stdout, "", "allowed: {out:?}");
    // The session's turn: an apply waits for it (a command that does not wait is
    // told who holds the repository) and writes nothing.
    let out = t.run(&["apply", &id, "--reason", "r"]);
    out.assert_code(6);
    assert!(
        out.stderr.contains("agent-hook") && out.stderr.contains("src/a.rs"),
        "{out:?}"
    );
    assert_eq!(t.read_string("src/a.rs"), A);
    // Claude Code's Edit writes; its PostToolUse journals the edit and ends the turn.
    t.write("src/a.rs", A.replace("one();", "uno();"));
    hook(&t, "claude-code", &edit_event(&t, "s1", "PostToolUse"));
    // The apply now sees the agent's write: stale, nothing overwritten.
    t.run(&["apply", &id, "--reason", "r"]).assert_code(3);
    assert_eq!(t.read_string("src/a.rs"), A.replace("one();", "uno();"));
    assert!(!t.path().join(".git/astedit.lock").exists());
    t.fsck();
}

#[test]
fn a_failed_tool_ends_the_turn_and_journals_nothing() {
    let t = repo();
    let id = stage_eins(&t);
    read(&t, "s1", "src/a.rs");
    assert_eq!(
        hook(&t, "claude-code", &edit_event(&t, "s1", "PreToolUse")).stdout,
        ""
    );
    // Claude Code's own tool refused (the file changed since its read): it sends
    // PostToolUseFailure; the turn ends there, not at its bound.
    let out = hook(
        &t,
        "claude-code",
        &edit_event(&t, "s1", "PostToolUseFailure"),
    );
    assert_eq!(out.stdout, "");
    assert!(!t.path().join(".git/astedit.lock").exists());
    t.run(&["apply", &id, "--reason", "r"]).assert_code(0);
    assert_eq!(t.read_string("src/a.rs"), A.replace("one()", "eins()"));
    let log = t.run(&["--json", "log"]).json();
    let hooks = log["events"]
        .as_array()
        .expect("events")
        .iter()
        .filter(|e| e["kind"] == "hook")
        .count();
    assert_eq!(hooks, 0, "{log}");
}

#[test]
fn a_hook_finishes_a_killed_apply_before_it_checks() {
    let t = repo();
    let id = stage_eins(&t);
    read(&t, "s1", "src/a.rs");
    // An apply killed past its commit point: its lock and record stay behind.
    t.kill_at(&["apply", &id, "--reason", "r"], "after-commit");
    assert!(t.path().join(".git/astedit.lock").exists());
    // The hook completes the apply first; the session's read is then stale: refused,
    // not written over.
    let out = hook(&t, "claude-code", &edit_event(&t, "s1", "PreToolUse"));
    let v: Value = serde_json::from_str(&out.stdout).expect("json answer");
    assert_eq!(v["hookSpecificOutput"]["permissionDecision"], "deny", "{v}");
    assert_eq!(t.read_string("src/a.rs"), A.replace("one()", "eins()"));
    let status = t.run(&["recover", "--status"]);
    assert!(status.stdout.contains("Nothing to recover"), "{status:?}");
    assert!(!t.path().join(".git/astedit.lock").exists());
    t.fsck();
}
