//! Integration tests: the MCP `replace` and `write` tools (issue 40 items 1–2): Claude
//! Code's Edit/MultiEdit and Write shapes, staged as previews; failures that show the
//! closest region and a next call that works.

use serde_json::json;
use serde_json::Value;

use crate::mcp::Server;
use crate::util::TestRepo;

const A: &str = "fn main() {\n    foo(1);\n    foo(2);\n    foo(3);\n}\n\nfn other() {\n    let total = compute(1, 2);\n    report(total);\n}\n";

fn repo() -> TestRepo {
    let t = TestRepo::new();
    t.write("src/a.rs", A);
    t.commit_all("init");
    t
}

fn start(t: &TestRepo) -> Server {
    let mut s = Server::start(t);
    s.handshake("2025-06-18", "replace-client");
    s
}

#[track_caller]
fn ok(s: &mut Server, tool: &str, args: Value) -> Value {
    let r = s.call(tool, args);
    assert_eq!(r["isError"], false, "{tool}: {r}");
    r["structuredContent"].clone()
}

/// A failed call's text and its JSON error report.
#[track_caller]
fn fails(s: &mut Server, tool: &str, args: Value) -> (String, Value) {
    let r = s.call(tool, args);
    assert_eq!(r["isError"], true, "{tool}: {r}");
    let text = r["content"][0]["text"].as_str().expect("text").to_string();
    let json: Value =
        serde_json::from_str(r["content"][1]["text"].as_str().expect("json")).expect("json");
    (text, json)
}

fn apply(s: &mut Server, id: &str) {
    ok(
        s,
        "resolve",
        json!({"action": "apply", "id": id, "reason": "test"}),
    );
}

#[test]
fn replace_unique_stages_and_applies() {
    let t = repo();
    let mut s = start(&t);
    let v = ok(
        &mut s,
        "replace",
        json!({"path": "src/a.rs", "old_string": "foo(2)", "new_string": "bar(2)",
               "reason": "rename"}),
    );
    assert_eq!(v["kind"], "replace", "{v}");
    assert_eq!(v["staged"], true);
    assert_eq!(v["replacements"], 1);
    assert!(
        v["diff"].as_str().expect("diff").contains("+    bar(2);"),
        "{v}"
    );
    // Staged only.
    assert_eq!(t.read_string("src/a.rs"), A);
    apply(&mut s, v["id"].as_str().expect("id"));
    assert_eq!(t.read_string("src/a.rs"), A.replace("foo(2)", "bar(2)"));
    // Claude Code's own argument name and an absolute path are accepted.
    let abs = t.path().join("src/a.rs");
    let v = ok(
        &mut s,
        "replace",
        json!({"file_path": abs.to_str().expect("utf-8"), "old_string": "foo(3)",
               "new_string": "bar(3)", "apply": true}),
    );
    assert_eq!(v["staged"], true, "{v}");
    assert_eq!(
        t.read_string("src/a.rs"),
        A.replace("foo(2)", "bar(2)").replace("foo(3)", "bar(3)")
    );
    t.fsck();
}

#[test]
fn replace_not_unique_names_every_line_and_replace_all_changes_them() {
    let t = repo();
    let mut s = start(&t);
    let (text, json) = fails(
        &mut s,
        "replace",
        json!({"path": "src/a.rs", "old_string": "foo(", "new_string": "bar("}),
    );
    let first = text.lines().next().unwrap_or_default();
    assert!(
        first.contains("src/a.rs") && first.contains("matches 3 places (lines 2, 3, 4)"),
        "{text}"
    );
    let err = &json["error"];
    assert_eq!(err["code"], "text-not-unique", "{json}");
    assert_eq!(err["details"]["count"], 3);
    assert_eq!(err["details"]["lines"], json!([2, 3, 4]));
    assert_eq!(json["error"]["next"]["tool"], "replace", "{json}");
    assert_eq!(
        json["error"]["next"]["arguments"]["replace_all"], true,
        "{json}"
    );
    assert!(t.astedit_refs().is_empty(), "nothing staged");

    let v = ok(
        &mut s,
        "replace",
        json!({"path": "src/a.rs", "old_string": "foo(", "new_string": "bar(",
               "replace_all": true}),
    );
    assert_eq!(v["replacements"], 3, "{v}");
    apply(&mut s, v["id"].as_str().expect("id"));
    assert_eq!(t.read_string("src/a.rs"), A.replace("foo(", "bar("));
}

#[test]
fn replace_not_found_shows_the_closest_region_and_a_next_call_that_works() {
    let t = repo();
    let mut s = start(&t);
    // The model remembers the call with other arguments.
    let wrong = "    let total = compute(1, 3);\n    report(total);";
    let (text, json) = fails(
        &mut s,
        "replace",
        json!({"path": "src/a.rs", "old_string": wrong,
               "new_string": "    let total = compute(2, 3);\n    report(total);"}),
    );
    assert!(
        text.lines().next().unwrap_or_default().contains("src/a.rs"),
        "{text}"
    );
    assert!(
        text.contains("closest: lines 8-9; first difference at line 8"),
        "{text}"
    );
    assert!(
        text.contains("expected:     let total = compute(1, 3);"),
        "{text}"
    );
    assert!(
        text.contains("found:        let total = compute(1, 2);"),
        "{text}"
    );
    assert!(
        text.contains("-    let total = compute(1, 3);\n+    let total = compute(1, 2);"),
        "{text}"
    );
    let err = &json["error"];
    assert_eq!(err["code"], "text-not-found", "{json}");
    let near = &err["details"]["near"];
    assert_eq!(
        (near["start"].as_u64(), near["end"].as_u64()),
        (Some(8), Some(9))
    );
    assert_eq!(near["diverges_at"], 8);
    // `next` is a replace whose old_string is the file's actual text: filled in, it works.
    let next = &json["error"]["next"];
    assert_eq!(next["tool"], "replace", "{json}");
    let mut args = next["arguments"].clone();
    assert_eq!(
        args["old_string"],
        "    let total = compute(1, 2);\n    report(total);"
    );
    args["new_string"] = json!("    let total = compute(2, 3);\n    report(total);");
    let v = ok(&mut s, "replace", args);
    apply(&mut s, v["id"].as_str().expect("id"));
    assert!(t.read_string("src/a.rs").contains("compute(2, 3)"));

    // Nothing like it at all: the next call is a read.
    let (text, json) = fails(
        &mut s,
        "replace",
        json!({"path": "src/a.rs", "old_string": "zzzz qqqq wwww", "new_string": "x"}),
    );
    assert!(text.contains("no line of old_string occurs"), "{text}");
    assert_eq!(json["error"]["next"]["tool"], "read", "{json}");
}

#[test]
fn multi_edits_are_all_or_nothing_and_a_pinned_blob_merges() {
    let t = repo();
    let mut s = start(&t);
    let (text, _) = fails(
        &mut s,
        "replace",
        json!({"path": "src/a.rs", "edits": [
            {"old_string": "foo(1)", "new_string": "one()"},
            {"old_string": "nope(9)", "new_string": "x"}]}),
    );
    assert!(text.contains("edit 2 of 2"), "{text}");
    assert!(t.astedit_refs().is_empty(), "nothing staged");
    // Read, then someone else edits another function; the pinned edit still lands,
    // and their edit is kept.
    let r = ok(&mut s, "read", json!({"path": "src/a.rs"}));
    let blob = r["blob"].as_str().expect("blob").to_string();
    t.write("src/a.rs", A.replace("report(total)", "log(total)"));
    let v = ok(
        &mut s,
        "replace",
        json!({"path": "src/a.rs", "blob": blob, "edits": [
            {"old_string": "foo(1)", "new_string": "one()"},
            {"old_string": "foo(2)", "new_string": "two()"}]}),
    );
    assert_eq!(v["replacements"], 2, "{v}");
    assert!(v["warnings"].to_string().contains("three-way merge"), "{v}");
    apply(&mut s, v["id"].as_str().expect("id"));
    let now = t.read_string("src/a.rs");
    assert!(
        now.contains("one();") && now.contains("two();") && now.contains("log(total)"),
        "{now}"
    );
}

#[test]
fn write_creates_and_replaces_and_a_stale_write_keeps_the_other_edit() {
    let t = repo();
    let mut s = start(&t);
    let v = ok(
        &mut s,
        "write",
        json!({"path": "src/new.rs", "content": "fn new() {}\n", "reason": "add"}),
    );
    assert_eq!(v["kind"], "write", "{v}");
    assert!(!t.exists("src/new.rs"), "staged only");
    apply(&mut s, v["id"].as_str().expect("id"));
    assert_eq!(t.read_string("src/new.rs"), "fn new() {}\n");
    // Replace an existing file whole, undo it.
    let v = ok(
        &mut s,
        "write",
        json!({"path": "src/new.rs", "content": "fn newer() {}\n"}),
    );
    let id = v["id"].as_str().expect("id").to_string();
    apply(&mut s, &id);
    assert_eq!(t.read_string("src/new.rs"), "fn newer() {}\n");
    ok(&mut s, "undo", json!({"id": id, "reason": "back"}));
    assert_eq!(t.read_string("src/new.rs"), "fn new() {}\n");

    // A write from a stale read: another agent changed a line elsewhere since. Pinned
    // to the blob read, the other change is merged in, not dropped.
    let r = ok(&mut s, "read", json!({"path": "src/a.rs"}));
    let blob = r["blob"].as_str().expect("blob").to_string();
    t.write("src/a.rs", A.replace("report(total)", "log(total)"));
    let mine = A.replace("foo(1)", "one()");
    let v = ok(
        &mut s,
        "write",
        json!({"path": "src/a.rs", "content": mine, "blob": blob}),
    );
    apply(&mut s, v["id"].as_str().expect("id"));
    let now = t.read_string("src/a.rs");
    assert!(now.contains("one()") && now.contains("log(total)"), "{now}");
    // Where the two collide, nothing is staged; the error shows what changed.
    let r = ok(&mut s, "read", json!({"path": "src/a.rs"}));
    let blob = r["blob"].as_str().expect("blob").to_string();
    t.write("src/a.rs", now.replace("one()", "uno()"));
    let (text, json) = fails(
        &mut s,
        "write",
        json!({"path": "src/a.rs", "content": now.replace("one()", "eins()"), "blob": blob}),
    );
    assert_eq!(json["error"]["code"], "stale-read", "{json}");
    assert!(text.contains("-    one();\n+    uno();"), "{text}");
    assert_eq!(json["error"]["next"]["tool"], "read", "{json}");
    assert!(t.read_string("src/a.rs").contains("uno()"));
}

#[test]
fn apply_patch_no_match_carries_the_closest_region_and_a_replace() {
    let t = repo();
    let mut s = start(&t);
    let patch = "*** Begin Patch\n*** Update File: src/a.rs\n@@\n fn other() {\n-    let total = compute(1, 3);\n+    let total = compute(5, 5);\n*** End Patch\n";
    let (text, json) = fails(&mut s, "apply_patch", json!({"patch": patch}));
    assert!(text.contains("first difference at line 8"), "{text}");
    let err = &json["error"];
    assert_eq!(err["code"], "no-match", "{json}");
    assert_eq!(err["details"]["near"]["start"], 7, "{json}");
    assert_eq!(json["error"]["next"]["tool"], "replace", "{json}");
    assert_eq!(
        json["error"]["next"]["arguments"]["old_string"],
        "fn other() {\n    let total = compute(1, 2);"
    );
}

/// Writes a repository lock held by a live process (this test), as another writer's.
fn hold_lock(t: &TestRepo) -> std::path::PathBuf {
    let lock = t.path().join(".git/astedit.lock");
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| "unknown".into());
    let me = format!(
        "{{\"pid\":{},\"host\":\"{host}\",\"time\":0,\"op\":\"apply\"}}",
        std::process::id()
    );
    std::fs::write(&lock, me).expect("write lock");
    lock
}

#[test]
fn two_sessions_resolving_at_once_both_succeed() {
    let t = repo();
    t.write("src/b.rs", "fn b() {}\n");
    t.commit_all("b");
    let mut one = start(&t);
    let mut two = start(&t);
    let a = ok(
        &mut one,
        "replace",
        json!({"path": "src/a.rs", "old_string": "foo(1)", "new_string": "one()"}),
    );
    let b = ok(
        &mut two,
        "write",
        json!({"path": "src/b.rs", "content": "fn b() { two(); }\n"}),
    );
    // Another writer holds the lock while both resolve: they wait instead of failing.
    let lock = hold_lock(&t);
    let (a_id, b_id) = (
        a["id"].as_str().expect("id").to_string(),
        b["id"].as_str().expect("id").to_string(),
    );
    let first = std::thread::spawn(move || {
        let r = one.call(
            "resolve",
            json!({"action": "apply", "id": a_id, "reason": "one"}),
        );
        (one, r)
    });
    let second = std::thread::spawn(move || {
        let r = two.call(
            "resolve",
            json!({"action": "apply", "id": b_id, "reason": "two"}),
        );
        (two, r)
    });
    std::thread::sleep(std::time::Duration::from_millis(600));
    std::fs::remove_file(&lock).expect("release");
    let (_one, r1) = first.join().expect("first");
    let (_two, r2) = second.join().expect("second");
    assert_eq!(r1["isError"], false, "{r1}");
    assert_eq!(r2["isError"], false, "{r2}");
    assert!(t.read_string("src/a.rs").contains("one()"));
    assert_eq!(t.read_string("src/b.rs"), "fn b() { two(); }\n");
    // The command line still fails at once (a person is not made to wait).
    let lock = hold_lock(&t);
    let out = t.run(&["--json", "undo", "--reason", "x"]);
    out.assert_code(6);
    assert_eq!(out.json()["error"]["code"], "locked");
    std::fs::remove_file(&lock).expect("release");
}

#[test]
fn past_the_wait_bound_the_error_carries_retry_after() {
    let t = repo();
    let mut s = Server::start_with(&t, ".", &[("GIT_ASTEDIT_LOCK_WAIT", "0.3")]);
    s.handshake("2025-06-18", "bound-client");
    let v = ok(
        &mut s,
        "replace",
        json!({"path": "src/a.rs", "old_string": "foo(1)", "new_string": "one()"}),
    );
    let lock = hold_lock(&t);
    let (text, json) = fails(
        &mut s,
        "resolve",
        json!({"action": "apply", "id": v["id"], "reason": "x"}),
    );
    std::fs::remove_file(&lock).expect("release");
    assert!(text.contains("waited"), "{text}");
    let err = &json["error"];
    assert_eq!(err["code"], "locked", "{json}");
    assert_eq!(err["details"]["retry_after"], 2, "{json}");
    assert_eq!(err["next"]["retry_after_seconds"], 2, "{json}");
    assert_eq!(t.read_string("src/a.rs"), A, "nothing written");
}

/// The whole result of a call: its text and its structured content.
#[track_caller]
fn ok_text(s: &mut Server, tool: &str, args: Value) -> (String, Value) {
    let r = s.call(tool, args);
    assert_eq!(r["isError"], false, "{tool}: {r}");
    let text = r["content"][0]["text"].as_str().expect("text").to_string();
    (text, r["structuredContent"].clone())
}

// Issue 54 item 5: `apply: true` says what it did. A current blob is applied and the
// text says so; an outdated one is merged, staged and never applied, and the result
// says `applied: false` with the reason.
#[test]
fn apply_true_is_applied_only_from_a_current_read_and_says_which() {
    let t = repo();
    let mut s = start(&t);
    // Per tool: the edit applied at once, the other writer's change, the late edit.
    for (tool, first, theirs, late) in [
        (
            "replace",
            ("foo(1)", "one(1)"),
            ("report(total)", "log(total)"),
            ("foo(3)", "three(3)"),
        ),
        (
            "write",
            ("foo(2)", "two(2)"),
            ("log(total)", "trace(total)"),
            ("fn main", "fn start"),
        ),
    ] {
        let args = |blob: &str, base: &str, (old, new): (&str, &str)| match tool {
            "replace" => json!({"path": "src/a.rs", "blob": blob, "apply": true,
                                "old_string": old, "new_string": new, "reason": "r"}),
            _ => json!({"path": "src/a.rs", "blob": blob, "apply": true,
                        "content": base.replacen(old, new, 1), "reason": "r"}),
        };
        let r = ok(&mut s, "read", json!({"path": "src/a.rs"}));
        let blob = r["blob"].as_str().expect("blob").to_string();
        let base = t.read_string("src/a.rs");
        let (text, v) = ok_text(&mut s, tool, args(&blob, &base, first));
        assert_eq!(
            (&v["staged"], &v["applied"]),
            (&json!(true), &json!(true)),
            "{v}"
        );
        assert!(v.get("not_applied").is_none(), "{v}");
        assert!(text.contains("Staged and applied"), "{tool}: {text}");
        assert!(!text.contains("work tree is unchanged"), "{tool}: {text}");
        assert_eq!(
            t.read_string("src/a.rs"),
            base.replacen(first.0, first.1, 1)
        );

        // Read, someone else changes another line, then the edit from that read.
        let r = ok(&mut s, "read", json!({"path": "src/a.rs"}));
        let blob = r["blob"].as_str().expect("blob").to_string();
        let base = t.read_string("src/a.rs");
        let other = base.replacen(theirs.0, theirs.1, 1);
        t.write("src/a.rs", &other);
        let (text, v) = ok_text(&mut s, tool, args(&blob, &base, late));
        assert_eq!(
            (&v["staged"], &v["applied"]),
            (&json!(true), &json!(false)),
            "{v}"
        );
        let why = v["not_applied"].as_str().expect("not_applied");
        assert!(why.contains("changed since the read"), "{why}");
        assert!(text.contains("Not applied"), "{tool}: {text}");
        assert!(
            text.contains("the work tree is unchanged"),
            "{tool}: {text}"
        );
        assert_eq!(t.read_string("src/a.rs"), other, "{tool}: not applied");
        // Pending: resolved by id, it holds both changes.
        apply(&mut s, v["id"].as_str().expect("id"));
        assert_eq!(t.read_string("src/a.rs"), other.replacen(late.0, late.1, 1));
    }
}
