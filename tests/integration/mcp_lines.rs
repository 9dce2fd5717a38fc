//! Integration tests: the MCP `read` and `edit_lines` tools (issue 24 item 5): edits
//! addressed by a blob id and line ranges, staged as previews; stale reads refused
//! before anything is written, moved ranges re-placed by the three-way merge.

use serde_json::json;
use serde_json::Value;

use crate::mcp::Server;
use crate::util::TestRepo;

const A: &str = "fn main() {\n    foo(1);\n    foo(2);\n    foo(3);\n}\n";

fn repo() -> TestRepo {
    let t = TestRepo::new();
    t.write("src/a.rs", A);
    t.commit_all("init");
    t
}

fn start(t: &TestRepo) -> Server {
    let mut s = Server::start(t);
    s.handshake("2025-06-18", "lines-client");
    s
}

#[track_caller]
fn ok(s: &mut Server, tool: &str, args: Value) -> Value {
    let r = s.call(tool, args);
    assert_eq!(r["isError"], false, "{tool}: {r}");
    r
}

#[test]
fn read_then_edit_lines_round_trips_through_a_preview() {
    let t = repo();
    let mut s = start(&t);
    let r = ok(
        &mut s,
        "read",
        json!({"path": "src/a.rs", "start": 2, "end": 3}),
    );
    let v = &r["structuredContent"];
    assert_eq!(v["text"], "    foo(1);\n    foo(2);\n", "{v}");
    assert_eq!((v["start"].as_u64(), v["end"].as_u64()), (Some(2), Some(3)));
    assert_eq!(v["total_lines"], 5);
    let blob = v["blob"].as_str().expect("blob").to_string();
    assert_eq!(blob, t.git(&["hash-object", "src/a.rs"]).trim());
    let text = r["content"][0]["text"].as_str().expect("text");
    assert!(text.contains("     2\t    foo(1);\n"), "{text}");
    assert!(text.starts_with(&format!("src/a.rs blob {blob}")), "{text}");

    let r = ok(
        &mut s,
        "edit_lines",
        json!({"path": "src/a.rs", "blob": blob, "reason": "rename",
               "edits": [{"start": 2, "end": 3, "text": "    bar(1);\n    bar(2);"},
                         {"start": 5, "end": 4, "text": "    done();"}]}),
    );
    let v = &r["structuredContent"];
    assert_eq!(v["kind"], "lines", "{v}");
    assert_eq!(v["staged"], true);
    assert!(
        v["diff"].as_str().expect("diff").contains("+    bar(2);"),
        "{v}"
    );
    let id = v["id"].as_str().expect("id").to_string();
    // Staging writes no work-tree file.
    assert_eq!(t.read_string("src/a.rs"), A);
    let shown = ok(&mut s, "previews", json!({"action": "show", "id": id}));
    assert_eq!(shown["structuredContent"]["preview"]["kind"], "lines");
    ok(
        &mut s,
        "resolve",
        json!({"action": "apply", "id": id, "reason": "rename"}),
    );
    assert_eq!(
        t.read_string("src/a.rs"),
        "fn main() {\n    bar(1);\n    bar(2);\n    foo(3);\n    done();\n}\n"
    );
    // Bad input: a range outside the blob, overlapping ranges, a malformed blob id.
    let blob = t.git(&["hash-object", "src/a.rs"]).trim().to_string();
    for (args, code) in [
        (
            json!({"path": "src/a.rs", "blob": blob, "edits": [{"start": 9, "end": 9, "text": ""}]}),
            "bad-range",
        ),
        (
            json!({"path": "src/a.rs", "blob": blob, "edits": [
                {"start": 2, "end": 3, "text": ""}, {"start": 3, "end": 3, "text": ""}]}),
            "bad-range",
        ),
        (
            json!({"path": "src/a.rs", "blob": "xyz", "edits": [{"start": 1, "end": 1, "text": ""}]}),
            "bad-blob",
        ),
        (
            json!({"path": "src/nope.rs", "blob": blob, "edits": [{"start": 1, "end": 1, "text": ""}]}),
            "not-readable",
        ),
    ] {
        let r = s.call("edit_lines", args);
        assert_eq!(r["isError"], true, "{r}");
        let all = r.to_string();
        assert!(all.contains(code), "{code}: {r}");
        assert!(all.contains("src/"), "the error names the file: {r}");
    }
    let r = s.call("read", json!({"path": "../outside"}));
    assert_eq!(r["isError"], true, "{r}");
    assert!(r.to_string().contains("unsafe-path"), "{r}");
    t.fsck();
}

#[test]
fn a_stale_read_is_refused_before_anything_is_staged() {
    let t = repo();
    let mut s = start(&t);
    let r = ok(&mut s, "read", json!({"path": "src/a.rs"}));
    let blob = r["structuredContent"]["blob"]
        .as_str()
        .expect("blob")
        .to_string();
    // Another writer changes the very line the edit replaces.
    let theirs = A.replace("foo(2)", "foo(22)");
    t.write("src/a.rs", &theirs);
    let r = s.call(
        "edit_lines",
        json!({"path": "src/a.rs", "blob": blob,
               "edits": [{"start": 3, "end": 3, "text": "    bar(2);"}]}),
    );
    assert_eq!(r["isError"], true, "{r}");
    let text = r["content"][0]["text"].as_str().expect("text");
    let first = text.lines().next().unwrap_or_default();
    assert!(
        first.contains("src/a.rs") && first.contains("changed since it was read"),
        "{text}"
    );
    let all = r.to_string();
    assert!(all.contains("stale-read"), "{r}");
    assert!(
        all.contains("\\\"tool\\\":\\\"read\\\"") || all.contains("\"tool\":\"read\""),
        "next names read: {r}"
    );
    assert_eq!(t.read_string("src/a.rs"), theirs);
    assert!(t.astedit_refs().is_empty(), "nothing staged");
    // A blob the repository never held.
    let r = s.call(
        "edit_lines",
        json!({"path": "src/a.rs", "blob": "0123456789abcdef0123456789abcdef01234567",
               "edits": [{"start": 3, "end": 3, "text": "x"}]}),
    );
    assert_eq!(r["isError"], true, "{r}");
    assert!(r.to_string().contains("unknown-blob"), "{r}");
    assert!(t.astedit_refs().is_empty(), "nothing staged");
}

#[test]
fn a_moved_range_is_re_placed_by_the_three_way_merge() {
    let t = repo();
    let mut s = start(&t);
    let r = ok(
        &mut s,
        "read",
        json!({"path": "src/a.rs", "start": 3, "end": 3}),
    );
    let blob = r["structuredContent"]["blob"]
        .as_str()
        .expect("blob")
        .to_string();
    // Lines added above: the range's line now sits two lines lower.
    let moved = format!("use std::io;\nuse std::fs;\n{A}");
    t.write("src/a.rs", &moved);
    let r = ok(
        &mut s,
        "edit_lines",
        json!({"path": "src/a.rs", "blob": blob,
               "edits": [{"start": 3, "end": 3, "text": "    bar(2);"}]}),
    );
    let v = &r["structuredContent"];
    assert!(
        v["warnings"]
            .to_string()
            .contains("re-placed by a three-way merge"),
        "{v}"
    );
    let id = v["id"].as_str().expect("id").to_string();
    ok(
        &mut s,
        "resolve",
        json!({"action": "apply", "id": id, "reason": "r"}),
    );
    assert_eq!(t.read_string("src/a.rs"), moved.replace("foo(2)", "bar(2)"));
}

#[test]
fn a_concurrent_writer_after_staging_is_caught_at_apply_and_refreshed() {
    let t = repo();
    let mut s = start(&t);
    let r = ok(&mut s, "read", json!({"path": "src/a.rs"}));
    let blob = r["structuredContent"]["blob"]
        .as_str()
        .expect("blob")
        .to_string();
    let r = ok(
        &mut s,
        "edit_lines",
        json!({"path": "src/a.rs", "blob": blob,
               "edits": [{"start": 2, "end": 2, "text": "    bar(1);"}]}),
    );
    let id = r["structuredContent"]["id"]
        .as_str()
        .expect("id")
        .to_string();
    // Another process writes the file (another line) between staging and apply.
    let theirs = A.replace("foo(3)", "foo(33)");
    t.write("src/a.rs", &theirs);
    let r = s.call(
        "resolve",
        json!({"action": "apply", "id": id, "reason": "r"}),
    );
    assert_eq!(r["isError"], true, "{r}");
    assert!(r.to_string().contains("stale"), "{r}");
    assert_eq!(t.read_string("src/a.rs"), theirs, "nothing written");
    let r = ok(
        &mut s,
        "resolve",
        json!({"action": "apply", "id": id, "reason": "r", "refresh": true}),
    );
    assert_eq!(
        r["structuredContent"]["refreshed"]["files"][0]["how"], "merged",
        "{r}"
    );
    assert_eq!(
        t.read_string("src/a.rs"),
        theirs.replace("foo(1)", "bar(1)")
    );

    // Two servers racing on one file: both read the same blob, both stage, the first
    // apply wins and the second is stale (and refreshes into a merge of both).
    let mut s2 = start(&t);
    let r = ok(&mut s, "read", json!({"path": "src/a.rs"}));
    let blob = r["structuredContent"]["blob"]
        .as_str()
        .expect("blob")
        .to_string();
    let one = ok(
        &mut s,
        "edit_lines",
        json!({"path": "src/a.rs", "blob": blob, "edits": [{"start": 3, "end": 3, "text": "    two();"}]}),
    );
    let two = ok(
        &mut s2,
        "edit_lines",
        json!({"path": "src/a.rs", "blob": blob, "edits": [{"start": 1, "end": 1, "text": "fn main2() {"}]}),
    );
    let one = one["structuredContent"]["id"]
        .as_str()
        .expect("id")
        .to_string();
    let two = two["structuredContent"]["id"]
        .as_str()
        .expect("id")
        .to_string();
    ok(
        &mut s,
        "resolve",
        json!({"action": "apply", "id": one, "reason": "r"}),
    );
    let r = s2.call(
        "resolve",
        json!({"action": "apply", "id": two, "reason": "r"}),
    );
    assert_eq!(r["isError"], true, "{r}");
    ok(
        &mut s2,
        "resolve",
        json!({"action": "apply", "id": two, "reason": "r", "refresh": true}),
    );
    assert_eq!(
        t.read_string("src/a.rs"),
        "fn main2() {\n    bar(1);\n    two();\n    foo(33);\n}\n"
    );
    t.fsck();
}

#[test]
fn read_pages_a_large_file_at_the_byte_budget() {
    let t = TestRepo::new();
    let big: String = (1..=2000)
        .map(|n| format!("line number {n:05} of a long file\n"))
        .collect();
    t.write("big.txt", &big);
    t.commit_all("init");
    let mut s = start(&t);
    let r = ok(
        &mut s,
        "read",
        json!({"path": "big.txt", "max_bytes": 4096}),
    );
    let v = &r["structuredContent"];
    assert_eq!(v["truncated"], true, "{v}");
    let next = v["next_start"].as_u64().expect("next_start");
    assert_eq!(next, v["end"].as_u64().expect("end") + 1);
    assert!(r.to_string().len() < 4096 + 1024, "{}", r.to_string().len());
    let text = r["content"][0]["text"].as_str().expect("text");
    assert!(text.contains(&format!("start {next}")), "{text}");
    let r = ok(
        &mut s,
        "read",
        json!({"path": "big.txt", "start": next, "end": next}),
    );
    assert_eq!(
        r["structuredContent"]["text"],
        format!("line number {next:05} of a long file\n")
    );
}

#[test]
fn a_formatters_blanks_next_to_the_range_do_not_make_a_read_stale() {
    let t = repo();
    let mut s = start(&t);
    let r = ok(&mut s, "read", json!({"path": "src/a.rs"}));
    let blob = r["structuredContent"]["blob"]
        .as_str()
        .expect("blob")
        .to_string();
    // Trailing blanks on the line above, the line re-indented: whitespace only.
    let formatted = A
        .replace("foo(1);\n", "foo(1);  \n")
        .replace("    foo(2);", "  foo(2);");
    t.write("src/a.rs", &formatted);
    let r = ok(
        &mut s,
        "edit_lines",
        json!({"path": "src/a.rs", "blob": blob,
               "edits": [{"start": 3, "end": 3, "text": "    bar(2);"}]}),
    );
    let v = &r["structuredContent"];
    assert!(
        v["warnings"].to_string().contains("merged line by line"),
        "{v}"
    );
    let id = v["id"].as_str().expect("id").to_string();
    ok(
        &mut s,
        "resolve",
        json!({"action": "apply", "id": id, "reason": "r"}),
    );
    assert_eq!(
        t.read_string("src/a.rs"),
        "fn main() {\n    foo(1);  \n    bar(2);\n    foo(3);\n}\n"
    );
}
