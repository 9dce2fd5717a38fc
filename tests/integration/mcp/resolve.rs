//! The `resolve` tool: stale and concurrent resolves, what a resolve without an id
//! means, `commit` and `verify`.

use serde_json::json;
use serde_json::Value;

use super::error_json;
use super::journal;
use super::repo_with_code;
use super::text;
use super::Server;

#[test]
fn stale_resolve_is_a_tool_error_naming_the_file() {
    let t = repo_with_code();
    let mut s = Server::start(&t);
    s.handshake("2025-11-25", "stale-client");
    let staged = s.ok(
        "ast_edit",
        json!({"ops": [{"pattern": "foo($A)", "rewrite": "bar($A)"}], "paths": ["src/b.rs"]}),
    );
    let id = staged["id"].as_str().expect("id").to_string();
    t.write("src/b.rs", "fn b() { foo(3); } // edited meanwhile\n");

    let result = s.call(
        "resolve",
        json!({"action": "apply", "id": id, "reason": "go"}),
    );
    assert_eq!(result["isError"], true);
    let first = text(&result).lines().next().unwrap_or_default().to_string();
    assert!(first.contains("changed since the preview"), "{first}");
    assert!(
        first.contains("src/b.rs"),
        "the first line names the file: {first}"
    );
    assert!(
        text(&result).contains("src/b.rs: modified"),
        "{}",
        text(&result)
    );
    let err = &error_json(&result)["error"];
    assert_eq!(err["code"], "stale");
    assert_eq!(err["exit"], 3);
    assert_eq!(err["details"]["paths"][0]["path"], "src/b.rs");
    assert_eq!(error_json(&result)["schema_version"], 2);
    // The next call, for a machine, and hints in tool terms (no CLI command or flag).
    assert_eq!(err["next"]["tool"], "resolve", "{err}");
    assert_eq!(err["next"]["arguments"]["refresh"], true, "{err}");
    assert_eq!(err["next"]["arguments"]["id"], id.as_str(), "{err}");
    let hint = err["hint"].as_str().unwrap_or_default();
    assert!(
        hint.contains("refresh") && !hint.contains("git astedit") && !hint.contains(" --"),
        "{hint}"
    );
    for (tool, args) in [
        (
            "resolve",
            json!({"action": "apply", "id": "zzzz", "reason": "go"}),
        ),
        (
            "resolve",
            json!({"action": "apply", "id": "12", "reason": "go"}),
        ),
        (
            "ast_edit",
            json!({"ops": [{"pattern": "foo($A)", "rewrite": "bar($B)"}]}),
        ),
        (
            "apply_patch",
            json!({"patch": "*** Begin Patch\n*** Add File: ../out.txt\n+x\n*** End Patch\n"}),
        ),
    ] {
        let r = s.call(tool, args.clone());
        assert_eq!(r["isError"], true, "{tool} {args}");
        let e = &error_json(&r)["error"];
        let hint = e["hint"].as_str().unwrap_or_default();
        assert!(!hint.is_empty(), "{tool} {args}: no hint: {e}");
        assert!(
            !hint.contains("git astedit") && !hint.contains(" --"),
            "{tool} {args}: a CLI hint: {hint}"
        );
        assert!(e["next"]["tool"].is_string(), "{tool} {args}: no next: {e}");
    }
    assert_eq!(
        t.read_string("src/b.rs"),
        "fn b() { foo(3); } // edited meanwhile\n",
        "nothing written"
    );
    assert_eq!(t.astedit_refs(), vec![format!("refs/astedit/{id}")]);

    // Nothing to change stages nothing, and says so without an error.
    let none = s.ok(
        "ast_edit",
        json!({"ops": [{"pattern": "nothing_calls($A)", "rewrite": "x($A)"}]}),
    );
    assert_eq!(none["staged"], false);
    assert!(none["id"].is_null());
    // A pattern that parses nowhere is bad input, with the exit class spelled out.
    let bad_pattern = s.call("ast_grep", json!({"pattern": "foo($A", "lang": "rust"}));
    assert_eq!(bad_pattern["isError"], true);
    assert_eq!(error_json(&bad_pattern)["error"]["exit"], 2);
    assert!(
        text(&bad_pattern).contains("bad input"),
        "{}",
        text(&bad_pattern)
    );

    // Bad arguments are the model's to fix: a tool error, not a protocol fault.
    let bad = s.call("resolve", json!({"action": "apply"}));
    assert_eq!(bad["isError"], true);
    assert!(text(&bad).contains("reason"), "{}", text(&bad));
    let empty = s.call("resolve", json!({"action": "apply", "reason": "  "}));
    assert_eq!(empty["isError"], true);
    // An unknown tool is a protocol fault.
    let id = s.send_request("tools/call", json!({"name": "nope", "arguments": {}}));
    let fault = s.response(id);
    assert_eq!(fault["error"]["code"], -32602);
    s.finish();
}

#[test]
fn two_concurrent_resolves_of_one_preview_one_wins() {
    let t = repo_with_code();
    let mut s = Server::start(&t);
    s.handshake("2025-06-18", "racer");
    let staged = s.ok(
        "ast_edit",
        json!({"ops": [{"pattern": "foo($A)", "rewrite": "bar($A)"}]}),
    );
    let id = staged["id"].as_str().expect("id").to_string();
    let args =
        json!({"name": "resolve", "arguments": {"action": "apply", "id": id, "reason": "race"}});
    let first = s.send_request("tools/call", args.clone());
    let second = s.send_request("tools/call", args);
    let results = [s.response(first), s.response(second)];
    let winners: Vec<&Value> = results
        .iter()
        .filter(|r| r["result"]["isError"] == false)
        .collect();
    assert_eq!(winners.len(), 1, "{results:?}");
    let loser = results
        .iter()
        .find(|r| r["result"]["isError"] == true)
        .expect("a loser");
    let err = error_json(&loser["result"]);
    let code = err["error"]["code"].as_str().unwrap_or_default();
    assert!(
        [
            "locked",
            "already-applied",
            "unknown-id",
            "concurrent-update"
        ]
        .contains(&code),
        "{loser}"
    );
    let applied = journal(&t)
        .iter()
        .filter(|e| e["event"] == "applied")
        .count();
    assert_eq!(applied, 1);
    assert_eq!(t.read_string("src/b.rs"), "fn b() { bar(3); }\n");
    s.finish();
}

/// ast_edit → resolve apply → undo → a no-id resolve apply refuses, naming the undone
/// preview; named, it applies. Captures come back from ast_grep as in `grep --json`.
#[test]
fn an_undone_preview_is_not_reapplied_by_a_no_id_resolve() {
    let t = repo_with_code();
    let mut s = Server::start(&t);
    s.handshake("2025-06-18", "careful-agent");
    let grep = s.ok(
        "ast_grep",
        json!({"pattern": "foo($A)", "paths": ["src/b.rs"]}),
    );
    assert_eq!(
        grep["matches"][0]["meta_variables"]["single"]["A"]["text"],
        "3"
    );
    assert_eq!(grep["matches"][0]["start_byte"], 9);
    let staged = s.ok(
        "ast_edit",
        json!({"ops": [{"pattern": "foo($A)", "rewrite": "bar($A)"}], "paths": ["src/b.rs"]}),
    );
    let id = staged["id"].as_str().expect("id").to_string();
    s.ok("resolve", json!({"action": "apply", "reason": "try"}));
    let undone = s.ok("undo", json!({"reason": "not yet"}));
    assert_eq!(undone["state"], "pending");
    let before = t.snapshot();
    let refused = s.call("resolve", json!({"action": "apply", "reason": "again"}));
    assert_eq!(refused["isError"], true, "{refused}");
    let err = error_json(&refused);
    assert_eq!(err["error"]["code"], "only-undone-pending");
    assert_eq!(err["error"]["details"]["undone"][0], id.as_str());
    assert_eq!(t.snapshot(), before, "nothing written");
    let applied = s.ok(
        "resolve",
        json!({"action": "apply", "reason": "now", "id": id}),
    );
    assert_eq!(applied["state"], "applied");
    assert_eq!(t.read_string("src/b.rs"), "fn b() { bar(3); }\n");
    s.finish();
}

/// A session that staged nothing cannot apply another session's preview without naming
/// it: the error lists the pending previews. Staging nothing says so first, with no id;
/// undo says the preview is pending again.
#[test]
fn a_no_id_resolve_only_means_this_sessions_preview() {
    let t = repo_with_code();
    let mut other = Server::start(&t);
    other.handshake("2025-06-18", "other-agent");
    let staged = other.ok(
        "ast_edit",
        json!({"ops": [{"pattern": "foo($A)", "rewrite": "bar($A)"}], "paths": ["src/b.rs"]}),
    );
    let theirs = staged["id"].as_str().expect("id").to_string();
    other.finish();

    let mut s = Server::start(&t);
    s.handshake("2025-06-18", "careful-agent");
    let before = t.snapshot();
    let refused = s.call("resolve", json!({"action": "apply", "reason": "go"}));
    assert_eq!(refused["isError"], true, "{refused}");
    let words = text(&refused);
    assert!(words.contains("this session staged no preview"), "{words}");
    assert!(words.contains(&theirs), "{words}");
    assert!(words.contains("other-agent/1.0"), "{words}");
    assert!(words.contains("1 replacement in 1 file"), "{words}");
    let err = error_json(&refused);
    assert_eq!(err["error"]["code"], "id-required");
    assert_eq!(err["error"]["details"]["pending"][0]["id"], theirs.as_str());
    assert_eq!(err["error"]["details"]["pending"][0]["kind"], "edit");
    assert_eq!(t.snapshot(), before, "nothing written");

    let nothing = s.call(
        "ast_edit",
        json!({"ops": [{"pattern": "nothere($A)", "rewrite": "x($A)"}]}),
    );
    assert_eq!(nothing["isError"], false);
    let words = text(&nothing);
    assert!(
        words.starts_with("nothing staged: 0 matches in 2 files searched"),
        "{words}"
    );
    assert_eq!(nothing["structuredContent"]["id"], Value::Null);
    assert_eq!(nothing["structuredContent"]["staged"], false);
    // Still nothing of this session's to resolve.
    let refused = s.call("resolve", json!({"action": "discard", "reason": "tidy"}));
    assert_eq!(error_json(&refused)["error"]["code"], "id-required");

    // Named, it applies; undo says what the preview is left as.
    s.ok(
        "resolve",
        json!({"action": "apply", "reason": "named", "id": theirs}),
    );
    let undone = s.call("undo", json!({"id": theirs, "reason": "back"}));
    assert!(
        text(&undone).contains("is pending again"),
        "{}",
        text(&undone)
    );
    assert_eq!(undone["structuredContent"]["state"], "pending");
    s.finish();
}

/// `resolve` with `commit: true` applies and commits exactly the preview's changes with
/// the `Astedit-*` trailers, as `apply --commit`; the journal names the agent.
#[test]
fn resolve_commit_makes_an_audited_commit_of_exactly_the_preview() {
    let t = repo_with_code();
    // An unrelated edit stays out of the commit.
    t.write("notes.txt", "mine\n");
    let mut s = Server::start(&t);
    s.handshake("2025-06-18", "committing-agent");
    let staged = s.ok(
        "ast_edit",
        json!({"ops": [{"pattern": "foo($A)", "rewrite": "bar($A)"}], "paths": ["src/b.rs"],
               "reason": "rename"}),
    );
    let id = staged["id"].as_str().expect("id").to_string();
    let head_before = t
        .git_output(&["rev-parse", "HEAD"])
        .stdout
        .trim()
        .to_string();
    let done = s.ok(
        "resolve",
        json!({"action": "apply", "reason": "tests pass", "commit": true,
               "message": "Rename foo to bar in b"}),
    );
    let commit = done["commit"].as_str().expect("commit").to_string();
    assert_eq!(done["index"], true);
    let head = t
        .git_output(&["rev-parse", "HEAD"])
        .stdout
        .trim()
        .to_string();
    assert_eq!(head, commit);
    let parent = t
        .git_output(&["rev-parse", "HEAD~1"])
        .stdout
        .trim()
        .to_string();
    assert_eq!(parent, head_before);
    let body = t.git_output(&["log", "-1", "--format=%B"]).stdout;
    assert!(body.starts_with("Rename foo to bar in b\n"), "{body}");
    let trailers = t
        .git_output(&["log", "-1", "--format=%(trailers:only,unfold)"])
        .stdout;
    assert!(
        trailers.contains(&format!("Astedit-Id: {id}")),
        "{trailers}"
    );
    assert!(trailers.contains("Astedit-Kind: edit"), "{trailers}");
    assert!(
        trailers.contains("Astedit-Reason: tests pass"),
        "{trailers}"
    );
    assert!(
        trailers.contains("Astedit-Ops-Digest: sha256:"),
        "{trailers}"
    );
    assert!(
        trailers.contains("Astedit-Agent: committing-agent/1.0"),
        "{trailers}"
    );
    let changed = t
        .git_output(&["diff", "--name-only", "HEAD~1", "HEAD"])
        .stdout;
    assert_eq!(changed, "src/b.rs\n");
    let blob = t.git_output(&["show", "HEAD:src/b.rs"]).stdout;
    assert_eq!(blob, "fn b() { bar(3); }\n");
    assert_eq!(t.read_string("notes.txt"), "mine\n");
    let j = journal(&t);
    assert_eq!(j[0]["event"], "applied");
    assert_eq!(j[0]["agent"], "committing-agent/1.0");
    assert_eq!(t.git_output(&["fsck", "--strict"]).code, 0);

    let refused = s.call(
        "resolve",
        json!({"action": "discard", "reason": "x", "commit": true, "id": id}),
    );
    assert_eq!(error_json(&refused)["error"]["code"], "usage");
    s.finish();
}

/// `resolve` with `verify`: the command runs in a worktree of the preview; a failure
/// writes nothing and keeps the preview, a pass applies it with the check reported;
/// the journal names the agent that asked.
#[test]
fn resolve_verify_applies_only_what_passes() {
    let t = repo_with_code();
    // A verify command is a program: only a server started with --allow-run runs it.
    let mut s = Server::start_args(&t, &["--allow-run"]);
    s.handshake("2025-06-18", "verifying-agent");
    let staged = s.ok(
        "ast_edit",
        json!({"ops": [{"pattern": "foo($A)", "rewrite": "bar($A)"}], "paths": ["src/b.rs"]}),
    );
    let id = staged["id"].as_str().expect("id").to_string();
    let before = t.snapshot();
    let failed = s.call(
        "resolve",
        json!({"action": "apply", "reason": "check", "verify": "echo nope; grep -q foo src/b.rs"}),
    );
    assert_eq!(failed["isError"], true, "{failed}");
    let err = error_json(&failed);
    assert_eq!(err["error"]["code"], "verify-failed", "{err}");
    assert_eq!(err["error"]["details"]["output"], "nope\n");
    let hint = err["error"]["hint"].as_str().unwrap_or_default();
    assert!(
        !hint.contains("git astedit") && hint.contains(&id),
        "{hint}"
    );
    assert_eq!(t.snapshot(), before, "nothing written");
    assert_eq!(t.astedit_refs(), vec![format!("refs/astedit/{id}")]);
    let j = journal(&t);
    assert_eq!(j[0]["event"], "verified");
    assert_eq!(j[0]["agent"], "verifying-agent/1.0");
    // Out of time: killed, nothing written.
    let hung = s.call(
        "resolve",
        json!({"action": "apply", "reason": "check", "verify": "sleep 60", "verify_timeout": 1}),
    );
    assert_eq!(error_json(&hung)["error"]["code"], "verify-failed");
    assert_eq!(t.snapshot(), before, "nothing written");
    // Bad combinations are the model's to fix.
    for args in [
        json!({"action": "discard", "reason": "x", "verify": "true"}),
        json!({"action": "apply", "reason": "x", "verify_timeout": 5}),
        json!({"action": "apply", "reason": "x", "verify": "true", "paths": ["src/b.rs"]}),
    ] {
        let r = s.call("resolve", args.clone());
        assert_eq!(error_json(&r)["error"]["code"], "usage", "{args}: {r}");
    }
    let applied = s.ok(
        "resolve",
        json!({"action": "apply", "reason": "check", "verify": "grep -q bar src/b.rs"}),
    );
    assert_eq!(applied["verified"]["passed"], true, "{applied}");
    assert_eq!(t.read_string("src/b.rs"), "fn b() { bar(3); }\n");
    s.finish();
}
