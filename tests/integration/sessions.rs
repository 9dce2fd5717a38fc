//! Agents' sessions (issue 54, issue 52 item 7): one spelling, named by a unique prefix
//! wherever a session is named (`log --session`, `undo --session`, the MCP `log`).

use crate::util::TestRepo;

/// A Claude Code hook event (the shape its hooks reference documents) for `session`,
/// on stdin of `agent-hook claude-code`; returns the answer.
pub fn claude(repo: &TestRepo, ev: serde_json::Value) -> crate::util::Output {
    let out = repo.run_with(
        ".",
        &["agent-hook", "claude-code"],
        &[],
        Some(ev.to_string().as_bytes()),
    );
    out.assert_code(0);
    out
}

/// Read, Edit (before and after, the edit made between them) of `path` by `session`,
/// as Claude Code's own tools do it behind the hook.
pub fn hook_edit(repo: &TestRepo, session: &str, path: &str, old: &str, new: &str) {
    let abs = repo.path().join(path).to_str().expect("utf-8").to_string();
    let cwd = repo.path().to_str().expect("utf-8").to_string();
    let ev = |event: &str, tool: &str| {
        serde_json::json!({
            "session_id": session,
            "transcript_path": "/home/u/.claude/projects/p/t.jsonl",
            "cwd": cwd,
            "permission_mode": "default",
            "hook_event_name": event,
            "tool_name": tool,
            "tool_input": {"file_path": abs, "old_string": old, "new_string": new},
            "tool_use_id": "toolu_01",
        })
    };
    claude(repo, ev("PostToolUse", "Read"));
    claude(repo, ev("PreToolUse", "Edit"));
    let text = repo.read_string(path);
    assert!(text.contains(old), "{path} holds {text:?}");
    repo.write(path, text.replacen(old, new, 1));
    claude(repo, ev("PostToolUse", "Edit"));
}

fn events(repo: &TestRepo, args: &[&str]) -> Vec<(String, String, String)> {
    let mut all = vec!["log", "--json"];
    all.extend_from_slice(args);
    let out = repo.run(&all);
    out.assert_code(0);
    out.json()["events"]
        .as_array()
        .expect("events")
        .iter()
        .map(|e| {
            (
                e["event"].as_str().unwrap_or("").to_string(),
                e["agent"].as_str().unwrap_or("").to_string(),
                e["files"][0].as_str().unwrap_or("").to_string(),
            )
        })
        .collect()
}

#[test]
fn log_names_a_session_whole_or_by_a_unique_prefix() {
    let repo = TestRepo::new();
    repo.write("a.py", "x = 1\n");
    repo.write("b.py", "y = 1\n");
    repo.commit_all("init");
    hook_edit(&repo, "3f2a-aaaa", "a.py", "x = 1", "x = 2");
    hook_edit(&repo, "3f9b-bbbb", "b.py", "y = 1", "y = 2");
    let a = vec![(
        "applied".to_string(),
        "claude-code/session:3f2a-aaaa".to_string(),
        "a.py".to_string(),
    )];
    assert_eq!(events(&repo, &["--session", "3f2a"]), a);
    assert_eq!(
        events(&repo, &["--session", "claude-code/session:3f2a-aaaa"]),
        a
    );
    assert_eq!(
        events(&repo, &["--session", "claude-code/session:3f9"])[0].2,
        "b.py"
    );
    // A prefix of two sessions is refused, naming both; an unknown one lists the known.
    let out = repo.run(&["log", "--session", "3f"]);
    out.assert_code(2);
    assert!(
        out.stderr.contains("ambiguous-session") || out.stderr.contains("names 2 sessions"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr.contains("claude-code/session:3f2a-aaaa"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr.contains("claude-code/session:3f9b-bbbb"),
        "{}",
        out.stderr
    );
    let out = repo.run(&["log", "--json", "--session", "zz"]);
    out.assert_code(2);
    let err = out.json();
    assert_eq!(err["error"]["code"], "unknown-session");
    assert_eq!(
        err["error"]["details"]["sessions"].as_array().map(Vec::len),
        Some(2)
    );
}

// ------------------------------------------------------------------ shell commands

/// A Claude Code `Bash` hook event as its hooks reference shows one (PreToolUse; the
/// PostToolUse adds `tool_response`).
fn bash_event(repo: &TestRepo, session: &str, event: &str, command: &str) -> serde_json::Value {
    let mut ev = serde_json::json!({
        "session_id": session,
        "transcript_path": "/home/u/.claude/projects/p/00893aaf-19fa-41d2-8238-13269b9b3ca0.jsonl",
        "cwd": repo.path().to_str().expect("utf-8"),
        "permission_mode": "default",
        "hook_event_name": event,
        "tool_name": "Bash",
        "tool_input": {"command": command, "description": "Rewrite the files", "timeout": 120000},
        "tool_use_id": format!("toolu_{session}_{}", command.len()),
    });
    if event == "PostToolUse" {
        ev["tool_response"] =
            serde_json::json!({"stdout": "", "stderr": "", "interrupted": false, "isImage": false});
    }
    ev
}

/// Runs `command` as the agent's Bash tool would, through `sh -c` in the work tree,
/// with `AST` naming our binary.
fn sh(repo: &TestRepo, command: &str) {
    let mut cmd = std::process::Command::new("sh");
    repo.env(&mut cmd);
    cmd.current_dir(repo.path())
        .env("AST", crate::util::bin())
        .args(["-c", command]);
    let out = cmd.output().expect("sh");
    assert!(
        out.status.success(),
        "{command}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The Bash tool call of `session` around `command`: the PreToolUse answer's command
/// is what runs (the session in its environment); returns the PostToolUse answer.
fn bash(repo: &TestRepo, session: &str, command: &str) -> String {
    let pre = claude(repo, bash_event(repo, session, "PreToolUse", command));
    let answer: serde_json::Value = serde_json::from_str(&pre.stdout).expect("an answer");
    let out = &answer["hookSpecificOutput"];
    assert!(
        out.get("permissionDecision").is_none(),
        "never decides: {answer}"
    );
    assert_eq!(
        out["updatedInput"]["description"], "Rewrite the files",
        "{answer}"
    );
    let run = out["updatedInput"]["command"].as_str().expect("command");
    assert!(run.ends_with(command), "{run}");
    sh(repo, run);
    claude(repo, bash_event(repo, session, "PostToolUse", command)).stdout
}

#[test]
fn a_shell_commands_edits_are_one_transaction_that_undo_takes_back() {
    let repo = TestRepo::new();
    repo.write("a.py", "def f():\n    return 1\n");
    repo.write("b.py", "x  =  [1,2]\n");
    repo.write("notes.txt", "dirty before\n");
    repo.commit_all("init");
    repo.write("notes.txt", "dirty, not committed\n");
    let post = bash(
        &repo,
        "s1",
        "sed -i 's/return 1/return 2/' a.py && python3 -c \"import pathlib; p = pathlib.Path('b.py'); p.write_text(p.read_text().replace('  =  ', ' = '))\" && echo new > c.py && echo more >> notes.txt",
    );
    assert_eq!(post, "", "nothing to tell");
    let log = repo.run(&["log", "--json", "--session", "s1"]);
    let events = log.json()["events"].clone();
    assert_eq!(events.as_array().map(Vec::len), Some(1), "{events}");
    let e = &events[0];
    assert_eq!(e["event"], "applied");
    assert_eq!(e["agent"], "claude-code/session:s1");
    assert_eq!(
        e["files"],
        serde_json::json!(["a.py", "b.py", "c.py", "notes.txt"])
    );
    assert!(
        e["reason"]
            .as_str()
            .unwrap_or("")
            .starts_with("Bash by claude-code/session:s1: sed -i"),
        "{e}"
    );
    repo.run(&["undo"]).assert_code(0);
    assert_eq!(repo.read_string("a.py"), "def f():\n    return 1\n");
    assert_eq!(repo.read_string("b.py"), "x  =  [1,2]\n");
    assert_eq!(repo.read_string("notes.txt"), "dirty, not committed\n");
    assert!(!repo.exists("c.py"));
}

#[test]
fn a_path_another_session_wrote_in_the_window_is_left_out_and_reported_to_both() {
    let repo = TestRepo::new();
    repo.write("a.py", "a = 1\n");
    repo.write("b.py", "b = 1\nc = 1\n");
    repo.commit_all("init");
    let command = "sed -i 's/a = 1/a = 2/' a.py && sed -i 's/c = 1/c = 3/' b.py";
    let pre = claude(&repo, bash_event(&repo, "s1", "PreToolUse", command));
    let run: serde_json::Value = serde_json::from_str(&pre.stdout).expect("answer");
    // While the command runs, session s2 edits b.py through its own Edit tool.
    hook_edit(&repo, "s2", "b.py", "b = 1", "b = 2");
    sh(
        &repo,
        run["hookSpecificOutput"]["updatedInput"]["command"]
            .as_str()
            .expect("cmd"),
    );
    let post = claude(&repo, bash_event(&repo, "s1", "PostToolUse", command)).stdout;
    let answer: serde_json::Value = serde_json::from_str(&post).expect("a warning");
    let reason = answer["reason"].as_str().expect("reason");
    assert!(
        reason.contains("b.py (by claude-code/session:s2)"),
        "{reason}"
    );
    let log = repo.run(&["log", "--json", "--session", "s1"]).json();
    let e = &log["events"][0];
    assert_eq!(e["files"], serde_json::json!(["a.py"]), "{e}");
    assert!(
        e["notes"][0]
            .as_str()
            .unwrap_or("")
            .contains("b.py: changed both"),
        "{e}"
    );
    // s2 hears of it at its next hook call.
    let abs = repo.path().join("b.py");
    let next = claude(
        &repo,
        serde_json::json!({"session_id": "s2", "cwd": repo.path(), "hook_event_name": "PostToolUse",
                           "tool_name": "Read", "tool_input": {"file_path": abs}}),
    );
    assert!(
        next.stdout
            .contains("b.py was also changed by a shell command of claude-code/session:s1"),
        "{}",
        next.stdout
    );
    assert_eq!(repo.read_string("b.py"), "b = 2\nc = 3\n");
}

#[test]
fn a_command_that_moves_head_is_journalled_as_such_and_not_undone_as_an_edit() {
    let repo = TestRepo::new();
    repo.write("a.py", "a = 1\n");
    repo.commit_all("init");
    let post = bash(&repo, "s1", "sed -i 's/1/2/' a.py && git commit -qam two");
    assert!(post.contains("moved HEAD"), "{post}");
    let log = repo.run(&["log", "--json", "--session", "s1"]).json();
    let e = &log["events"][0];
    assert_eq!(e["event"], "head-moved", "{e}");
    assert_eq!(e["files"], serde_json::json!(["a.py"]));
    repo.run(&["undo"]).assert_code(1);
    assert_eq!(repo.read_string("a.py"), "a = 2\n");
}

/// Each event of a `log --json` as (event, files as JSON).
fn event_files(log: &serde_json::Value) -> Vec<(String, String)> {
    log["events"]
        .as_array()
        .expect("events")
        .iter()
        .map(|e| {
            (
                e["event"].as_str().unwrap_or("").into(),
                e["files"].to_string(),
            )
        })
        .collect()
}

#[test]
fn git_astedit_in_the_agents_shell_journals_under_its_session_and_once() {
    let repo = TestRepo::new();
    repo.write("a.js", "console.log(1);\n");
    repo.write("b.js", "x(1);\n");
    repo.commit_all("init");
    bash(
        &repo,
        "s9",
        "\"$AST\" edit -p 'console.log($A)' -r 'logger.info($A)' a.js >/dev/null && \"$AST\" apply --reason r >/dev/null && sed -i 's/1/2/' b.js",
    );
    let log = repo.run(&["log", "--json", "--session", "s9"]).json();
    let events = event_files(&log);
    // The shell transaction (b.js only: a.js was journalled by the apply), the apply,
    // the staging: all the session's.
    assert_eq!(
        events,
        [
            ("applied".to_string(), r#"["b.js"]"#.to_string()),
            ("applied".to_string(), r#"["a.js"]"#.to_string()),
            ("staged".to_string(), r#"["a.js"]"#.to_string()),
        ]
    );
}

/// The session's own `git astedit` creates a file in the command, which the command
/// then changes (and another it deletes): the shell transaction holds the command's
/// part only, from what the apply left, so undo takes the two back one at a time.
#[test]
fn a_file_the_sessions_git_astedit_created_in_the_command_is_the_commands_from_there() {
    let repo = TestRepo::new();
    repo.write("a.py", "a = 1\n");
    repo.commit_all("init");
    let add = "*** Begin Patch\n*** Add File: n.py\n+n = 1\n*** Add File: gone.py\n+g = 1\n*** End Patch\n";
    bash(
        &repo,
        "s7",
        &format!(
            "printf '{}' | \"$AST\" patch --apply - >/dev/null && sed -i 's/n = 1/n = 2/' n.py && rm gone.py",
            add.replace('\n', "\\n")
        ),
    );
    assert_eq!(repo.read_string("n.py"), "n = 2\n");
    let log = repo.run(&["log", "--json", "--session", "s7"]).json();
    let events = event_files(&log);
    assert_eq!(
        events,
        [
            ("applied".to_string(), r#"["gone.py","n.py"]"#.to_string()),
            ("applied".to_string(), r#"["gone.py","n.py"]"#.to_string()),
            ("staged".to_string(), r#"["gone.py","n.py"]"#.to_string()),
        ],
        "{log}"
    );
    // The command's part: n.py from the patch's text, gone.py deleted.
    repo.run(&["undo"]).assert_code(0);
    assert_eq!(repo.read_string("n.py"), "n = 1\n");
    assert_eq!(repo.read_string("gone.py"), "g = 1\n");
    // Then the patch's: neither file.
    let id = log["events"][1]["id"].as_str().expect("id").to_string();
    repo.run(&["undo", &id]).assert_code(0);
    assert!(!repo.exists("n.py") && !repo.exists("gone.py"));
}

#[test]
fn codex_apply_patch_is_journalled_under_its_session() {
    let repo = TestRepo::new();
    repo.write("src/m.py", "def m():\n    return 0\n");
    repo.commit_all("init");
    // Codex's PreToolUse/PostToolUse for apply_patch (its hook wire format: the patch
    // in tool_input.command).
    let patch = "*** Begin Patch\n*** Update File: src/m.py\n@@\n def m():\n-    return 0\n+    return 1\n*** End Patch\n";
    let ev = |event: &str| {
        serde_json::json!({
            "session_id": "019a-codex", "transcript_path": null,
            "cwd": repo.path(), "hook_event_name": event, "model": "gpt-5-codex",
            "turn_id": "1", "tool_name": "apply_patch", "tool_use_id": "call_1",
            "tool_input": {"command": patch},
        })
    };
    let codex = |ev: serde_json::Value| {
        let out = repo.run_with(
            ".",
            &["agent-hook", "codex"],
            &[],
            Some(ev.to_string().as_bytes()),
        );
        out.assert_code(0);
        out.stdout
    };
    assert_eq!(codex(ev("PreToolUse")), "", "allowed, nothing to say");
    repo.write("src/m.py", "def m():\n    return 1\n");
    assert_eq!(codex(ev("PostToolUse")), "");
    let log = repo.run(&["log", "--json", "--session", "019a"]).json();
    let e = &log["events"][0];
    assert_eq!(e["agent"], "codex/session:019a-codex", "{e}");
    assert_eq!(e["files"], serde_json::json!(["src/m.py"]));
    assert!(
        e["reason"]
            .as_str()
            .unwrap_or("")
            .starts_with("apply_patch by codex/session:019a-codex"),
        "{e}"
    );
    repo.run(&["undo"]).assert_code(0);
    assert_eq!(repo.read_string("src/m.py"), "def m():\n    return 0\n");
}

// ------------------------------------------------------------------ a session as a unit

/// s1 edits a.py with its Edit tool and b.py and c.py with a shell command; then s2
/// edits c.py on top.
fn two_sessions(repo: &TestRepo) {
    repo.write("a.py", "a = 1\n");
    repo.write("b.py", "b = 1\n");
    repo.write("c.py", "c = 1\nd = 1\n");
    repo.commit_all("init");
    hook_edit(repo, "s1", "a.py", "a = 1", "a = 2");
    bash(
        repo,
        "s1",
        "sed -i 's/1/2/' b.py && sed -i 's/c = 1/c = 2/' c.py",
    );
    hook_edit(repo, "s2", "c.py", "d = 1", "d = 3");
}

#[test]
fn undo_session_reverts_all_it_did_newest_first_unless_another_sits_on_top() {
    let repo = TestRepo::new();
    two_sessions(&repo);
    let out = repo.run(&["undo", "--session", "s1"]);
    out.assert_code(4);
    assert!(out.stderr.contains("c.py"), "{}", out.stderr);
    assert!(
        out.stderr.contains("claude-code/session:s2"),
        "{}",
        out.stderr
    );
    assert_eq!(repo.read_string("a.py"), "a = 2\n", "nothing undone");
    assert_eq!(repo.read_string("c.py"), "c = 2\nd = 3\n");
    repo.run(&["undo", "--session", "s2"]).assert_code(0);
    let out = repo.run(&["undo", "--json", "--session", "s1"]);
    out.assert_code(0);
    let undone: Vec<Vec<String>> = out.json()["undone"]
        .as_array()
        .expect("undone")
        .iter()
        .map(|r| serde_json::from_value(r["written"].clone()).expect("paths"))
        .collect();
    assert_eq!(undone, [vec!["b.py", "c.py"], vec!["a.py"]], "newest first");
    assert_eq!(repo.read_string("a.py"), "a = 1\n");
    assert_eq!(repo.read_string("b.py"), "b = 1\n");
    assert_eq!(repo.read_string("c.py"), "c = 1\nd = 1\n");
    let out = repo.run(&["undo", "--session", "s1"]);
    out.assert_code(1);
    assert!(out.stdout.contains("Nothing to undo"), "{}", out.stdout);
}

#[test]
fn log_session_gives_each_change_with_its_tool_files_lines_and_diff() {
    let repo = TestRepo::new();
    two_sessions(&repo);
    let log = repo.run(&["log", "--json", "-p", "--session", "s1"]).json();
    let e = &log["events"][0];
    assert_eq!(e["tool"], "Bash", "{e}");
    assert_eq!(e["changes"][0]["path"], "b.py");
    assert_eq!(
        (
            &e["changes"][0]["added_lines"],
            &e["changes"][0]["removed_lines"]
        ),
        (&serde_json::json!(1), &serde_json::json!(1))
    );
    let diff = e["diff"].as_str().expect("diff");
    assert!(
        diff.contains("-b = 1\n+b = 2\n") && diff.contains("+c = 2"),
        "{diff}"
    );
    assert_eq!(log["events"][1]["tool"], "Edit");
    let text = repo.run(&["log", "--session", "s1"]).stdout;
    assert!(
        text.contains("tool: Bash") && text.contains("\n    b.py  +1 -1"),
        "{text}"
    );
    assert!(!text.contains("+b = 2"), "the diff only with -p: {text}");
    // The MCP `log` tool gives the same.
    let mut s = crate::mcp::Server::start(&repo);
    s.handshake("2025-06-18", "log-client");
    let r = s.call("log", serde_json::json!({"session": "s1", "diff": true}));
    assert_eq!(r["isError"], false, "{r}");
    let v = &r["structuredContent"];
    assert_eq!(v["events"][0]["tool"], "Bash", "{v}");
    assert!(
        v["events"][0]["diff"]
            .as_str()
            .unwrap_or("")
            .contains("+b = 2"),
        "{v}"
    );
    assert!(
        r["content"][0]["text"]
            .as_str()
            .unwrap_or("")
            .contains("tool: Edit"),
        "{r}"
    );
}
