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
