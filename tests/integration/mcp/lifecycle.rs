//! The server's lifecycles: the `initialize` handshake and the stateless revision driven
//! through a whole cycle, and a call in flight cancelled (stdin closed, `notifications/cancelled`).

use serde_json::json;
use serde_json::Value;

use super::error_json;
use super::journal;
use super::repo_with_code;
use super::Server;
use super::STATELESS;
use crate::util::TestRepo;

/// grep → ast_edit → previews → resolve apply → undo, checking the work tree and
/// the journal after each step.
fn drive_cycle(t: &TestRepo, s: &mut Server, agent: &str) {
    let a_before = t.read_string("src/a.rs");

    let grep = s.ok(
        "ast_grep",
        json!({"pattern": "foo($A)", "paths": ["src/a.rs"]}),
    );
    assert_eq!(grep["total"], 3);
    assert_eq!(grep["capped"], false);
    assert_eq!(grep["matches"][0]["path"], "src/a.rs");
    assert_eq!(grep["matches"][0]["line"], 2);
    assert_eq!(grep["matches"][0]["column"], 5);
    let capped = s.ok("ast_grep", json!({"pattern": "foo($A)", "max_results": 1}));
    assert_eq!(capped["total"], 4);
    assert_eq!(capped["capped"], true);
    assert_eq!(capped["matches"].as_array().map(Vec::len), Some(1));
    assert!(journal(t).is_empty(), "a search writes nothing");

    let staged = s.ok(
        "ast_edit",
        json!({"ops": [{"pattern": "foo($A)", "rewrite": "bar($A)"}], "reason": "rename foo"}),
    );
    let id = staged["id"].as_str().expect("preview id").to_string();
    assert_eq!(staged["staged"], true);
    assert_eq!(staged["summary"], "4 replacements in 2 files");
    assert!(staged["diff"]
        .as_str()
        .unwrap_or_default()
        .contains("+    bar(bar(2));"));
    assert_eq!(
        t.read_string("src/a.rs"),
        a_before,
        "staging writes no file"
    );
    let j = journal(t);
    assert_eq!(j[0]["event"], "staged");
    assert_eq!(j[0]["id"], id.as_str());
    assert_eq!(j[0]["agent"], agent);
    assert_eq!(j[0]["reason"], "rename foo");

    let list = s.ok("previews", json!({}));
    assert_eq!(list["previews"][0]["id"], id.as_str());
    assert_eq!(list["previews"][0]["agent"], agent);
    let shown = s.ok(
        "previews",
        json!({"action": "show", "id": &id[..6], "max_diff_lines": 3}),
    );
    assert_eq!(shown["preview"]["id"], id.as_str());
    assert_eq!(shown["diff_truncated"], true);
    assert_eq!(shown["files"].as_array().map(Vec::len), Some(2));

    let applied = s.ok(
        "resolve",
        json!({"action": "apply", "reason": "tests pass"}),
    );
    assert_eq!(applied["id"], id.as_str());
    assert_eq!(applied["action"], "applied");
    assert_eq!(
        t.read_string("src/a.rs"),
        "fn main() {\n    bar(1);\n    bar(bar(2));\n}\n"
    );
    assert_eq!(t.read_string("src/b.rs"), "fn b() { bar(3); }\n");
    assert!(t.astedit_refs().is_empty(), "no longer pending");
    let j = journal(t);
    assert_eq!(j[0]["event"], "applied");
    assert_eq!(j[0]["agent"], agent);
    assert_eq!(j[0]["reason"], "tests pass");
    assert_eq!(j[0]["who"], "Test Committer <committer@example.com>");

    let undone = s.ok("undo", json!({"reason": "changed my mind"}));
    assert_eq!(undone["id"], id.as_str());
    assert_eq!(undone["action"], "undone");
    assert_eq!(t.read_string("src/a.rs"), a_before);
    let j = journal(t);
    assert_eq!(j[0]["event"], "undone");
    assert_eq!(j[0]["agent"], agent);
}

#[test]
fn initialize_handshake_drives_grep_edit_apply_undo() {
    let t = repo_with_code();
    let mut s = Server::start(&t);
    let init = s.handshake("2025-06-18", "handshake-client");
    assert_eq!(init["protocolVersion"], "2025-06-18");
    assert_eq!(init["serverInfo"]["name"], "git-astedit");
    assert!(init["capabilities"]["tools"].is_object());

    let tools = s.request("tools/list", json!({}));
    let names: Vec<&str> = tools["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert_eq!(
        names,
        [
            "ast_grep",
            "ast_edit",
            "apply_patch",
            "previews",
            "log",
            "lane",
            "review",
            "resolve",
            "undo",
            "pr",
            "read",
            "edit_lines",
            "replace",
            "write",
            "ast_apply",
            "ast_steps"
        ]
    );
    for tool in tools["tools"].as_array().expect("tools") {
        let a = &tool["annotations"];
        for hint in [
            "readOnlyHint",
            "destructiveHint",
            "idempotentHint",
            "openWorldHint",
        ] {
            assert!(a[hint].is_boolean(), "{} lacks {hint}", tool["name"]);
        }
        assert_eq!(tool["inputSchema"]["type"], "object");
        assert!(tool["outputSchema"].is_object());
        let read_only = matches!(
            tool["name"].as_str(),
            Some("ast_grep" | "previews" | "read" | "log")
        );
        assert_eq!(a["readOnlyHint"], read_only, "{}", tool["name"]);
        let destructive = matches!(
            tool["name"].as_str(),
            Some(
                "resolve" | "undo" | "ast_apply" | "ast_edit" | "pr" | "replace" | "write" | "lane"
            )
        );
        assert_eq!(a["destructiveHint"], destructive, "{}", tool["name"]);
        // Only `pr` reaches outside the repository (a remote, GitHub).
        assert_eq!(a["openWorldHint"], tool["name"] == "pr", "{}", tool["name"]);
    }
    let resolve = &tools["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .find(|t| t["name"] == "resolve")
        .expect("resolve")["inputSchema"];
    let required: Vec<&str> = resolve["required"]
        .as_array()
        .expect("required")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(required.contains(&"action") && required.contains(&"reason"));

    drive_cycle(&t, &mut s, "handshake-client/1.0");
    let seen = s.finish();
    assert!(!seen.is_empty());
}

#[test]
fn stateless_revision_needs_no_handshake() {
    let t = repo_with_code();
    // Started in a subfolder: paths stay relative to the repository root.
    let mut s = Server::start_in(&t, "src");
    s.stateless("stateless-client");
    let discover = s.request("server/discover", json!({}));
    let versions: Vec<&str> = discover["supportedVersions"]
        .as_array()
        .expect("supportedVersions")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(versions.contains(&STATELESS), "{versions:?}");
    assert!(versions.contains(&"2025-06-18"), "{versions:?}");
    assert!(discover["capabilities"]["tools"].is_object());

    drive_cycle(&t, &mut s, "stateless-client/2.0");

    // apply_patch stages too, with the same agent trail.
    let patch = "*** Begin Patch\n*** Update File: src/b.rs\n@@\n-fn b() { foo(3); }\n+fn b() { foo(4); }\n*** End Patch\n";
    let staged = s.ok("apply_patch", json!({"patch": patch, "reason": "bump"}));
    let id = staged["id"].as_str().expect("id").to_string();
    assert_eq!(staged["files"][0]["path"], "src/b.rs");
    assert!(staged["patch_digest"].as_str().is_some());
    assert_eq!(t.read_string("src/b.rs"), "fn b() { foo(3); }\n");
    let discarded = s.ok(
        "resolve",
        json!({"action": "discard", "id": id, "reason": "not needed"}),
    );
    assert_eq!(discarded["action"], "discarded");
    let j = journal(&t);
    assert_eq!(j[0]["event"], "discarded");
    assert_eq!(j[0]["agent"], "stateless-client/2.0");
    assert_eq!(j[1]["event"], "staged");
    assert_eq!(j[1]["kind"], "patch");
    s.finish();
}

/// A repository whose staging is slow (the test-only delay per staged file), so a
/// call can be cancelled while it runs.
fn slow_repo() -> TestRepo {
    let t = TestRepo::new();
    for i in 0..8 {
        t.write(
            &format!("src/f{i}.rs"),
            format!("fn f{i}() {{ foo({i}); }}\n"),
        );
    }
    t.commit_all("init");
    t
}

/// A minute per staged file: a staging that is not cancelled never ends in a test.
const SLOW: [(&str, &str); 1] = [("GIT_ASTEDIT_TEST_STAGE_DELAY_MS", "60000")];

/// stdin closing while a staging runs cancels it: the process exits at once (not
/// after the staging), the reply says cancelled, and no preview ref or journal entry
/// is left behind.
#[test]
fn closing_stdin_cancels_a_call_in_flight_and_leaves_nothing() {
    let t = slow_repo();
    let mut s = Server::start_with(&t, ".", &SLOW);
    s.handshake("2025-06-18", "leaving-agent");
    let id = s.send_request(
        "tools/call",
        json!({"name": "ast_edit",
               "arguments": {"ops": [{"pattern": "foo($A)", "rewrite": "bar($A)"}]}}),
    );
    drop(s.stdin.take());
    let status = s.wait_exit();
    assert!(status.success(), "server exited with {status}");
    // The call in flight was answered (a client may still read): cancelled.
    let replies: Vec<Value> = s
        .drain_after_exit()
        .into_iter()
        .filter_map(|l| serde_json::from_str(&l).ok())
        .collect();
    let reply = replies
        .iter()
        .find(|m| m["id"] == json!(id))
        .unwrap_or_else(|| panic!("no reply to the call in flight: {replies:?}"));
    assert_eq!(reply["result"]["isError"], true, "{reply}");
    assert_eq!(error_json(&reply["result"])["error"]["code"], "cancelled");
    assert!(t.astedit_refs().is_empty(), "no preview ref");
    assert!(journal(&t).is_empty(), "no journal entry");
    assert_eq!(t.read_string("src/f0.rs"), "fn f0() { foo(0); }\n");
    assert_eq!(t.git_output(&["fsck", "--strict"]).code, 0);
}

/// `notifications/cancelled` for a request stops it: no reply for it, nothing
/// staged, and the session goes on.
#[test]
fn a_cancelled_request_stops_and_the_session_goes_on() {
    let t = slow_repo();
    let mut s = Server::start_with(&t, ".", &SLOW);
    s.handshake("2025-06-18", "cancelling-agent");
    let id = s.send_request(
        "tools/call",
        json!({"name": "ast_edit",
               "arguments": {"ops": [{"pattern": "foo($A)", "rewrite": "bar($A)"}]}}),
    );
    s.notify(
        "notifications/cancelled",
        json!({"requestId": id, "reason": "user pressed stop"}),
    );
    // The session answers the next call; the cancelled one gets no reply.
    let list = s.ok("previews", json!({}));
    assert_eq!(list["previews"], json!([]));
    let seen = s.finish();
    assert!(
        !seen.iter().any(|m| m["id"] == json!(id)),
        "no reply to a cancelled request: {seen:?}"
    );
    assert!(t.astedit_refs().is_empty(), "no preview ref");
    assert!(journal(&t).is_empty(), "no journal entry");
    assert_eq!(t.git_output(&["fsck", "--strict"]).code, 0);
}
