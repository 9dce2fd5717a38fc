//! The protocol: tool schemas (the CLI's report schemas, integer counts, aliases, the
//! seeds' calls), malformed and oversized messages, faults and untrusted client names.

use std::process::Stdio;
use std::time::Duration;

use serde_json::json;
use serde_json::Value;

use super::error_json;
use super::journal;
use super::repo_with_code;
use super::text;
use super::ts_repo;
use super::Server;
use crate::util::TestRepo;

/// The tools' output schemas are the CLI's report schemas (`git astedit schema`):
/// same title, same properties, same required fields.
#[test]
fn tool_output_schemas_are_the_cli_report_schemas() {
    let t = repo_with_code();
    let mut s = Server::start(&t);
    s.handshake("2025-06-18", "schema-check");
    let tools = s.request("tools/list", json!({}));
    let tool = |name: &str| -> Value {
        tools["tools"]
            .as_array()
            .expect("tools")
            .iter()
            .find(|t| t["name"] == name)
            .unwrap_or_else(|| panic!("no tool {name}"))["outputSchema"]
            .clone()
    };
    for (tool_name, command) in [
        ("ast_grep", "grep"),
        ("ast_edit", "edit"),
        ("apply_patch", "patch"),
        ("resolve", "apply"),
        ("undo", "undo"),
        ("pr", "pr"),
    ] {
        let out = tool(tool_name);
        let cli = t.run(&["schema", command]).json();
        let report = &cli["anyOf"][0];
        assert_eq!(out["title"], report["title"], "{tool_name}");
        let keys = |v: &Value| -> Vec<String> {
            let mut k: Vec<String> = v["properties"]
                .as_object()
                .map(|o| o.keys().cloned().collect())
                .unwrap_or_default();
            k.sort();
            k
        };
        assert_eq!(keys(&out), keys(report), "{tool_name}");
        assert_eq!(out["required"], report["required"], "{tool_name}");
        // Standard formats only.
        assert!(!out.to_string().contains("\"uint"), "{tool_name}: {out}");
        assert!(!tool_name.is_empty());
    }
    // The input schemas too.
    for t in tools["tools"].as_array().expect("tools") {
        assert!(
            !t["inputSchema"].to_string().contains("\"uint"),
            "{}",
            t["inputSchema"]
        );
    }
}

/// Runs `git astedit mcp` with `input` on stdin; returns its stdout lines as JSON and
/// the exit code.
fn mcp_with_input(t: &TestRepo, input: &[u8]) -> (Vec<Value>, i32) {
    use std::io::Write;
    let mut child = t
        .command(".", &["mcp"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn git-astedit mcp");
    let mut stdin = child.stdin.take().expect("stdin");
    let input = input.to_vec();
    let feeder = std::thread::spawn(move || {
        let _ = stdin.write_all(&input);
    });
    let out = child.wait_with_output().expect("wait");
    let _ = feeder.join();
    let lines = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect();
    (lines, out.status.code().unwrap_or(-1))
}

#[test]
fn garbage_before_initialize_gets_a_parse_error() {
    let t = repo_with_code();
    let (lines, code) = mcp_with_input(&t, b"this is not json\n{\"jsonrpc\": \"2.0\", \"id\n");
    assert_eq!(code, 0);
    assert_eq!(lines.len(), 2, "{lines:?}");
    for l in &lines {
        assert_eq!(l["error"]["code"], -32700, "{l}");
        assert_eq!(l["id"], Value::Null, "{l}");
    }
}

#[test]
fn an_oversized_message_is_refused_and_the_session_goes_on() {
    let t = repo_with_code();
    let mut input = Vec::new();
    // 17 MiB of one line, then a real handshake and a tool list.
    input.extend_from_slice(
        b"{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"ping\",\"params\":{\"x\":\"",
    );
    input.extend(std::iter::repeat_n(b'a', 17 * 1024 * 1024));
    input.extend_from_slice(b"\"}}\n");
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "big", "version": "1"}}});
    input.extend_from_slice(format!("{init}\n").as_bytes());
    input.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n");
    input.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}\n");
    let (lines, code) = mcp_with_input(&t, &input);
    assert_eq!(code, 0);
    assert_eq!(lines[0]["error"]["code"], -32600, "{:?}", lines[0]);
    assert!(lines[0]["error"]["message"]
        .as_str()
        .is_some_and(|m| m.contains("16 MiB")));
    assert!(
        lines
            .iter()
            .any(|l| l["id"] == 2 && l["result"]["tools"].is_array()),
        "{lines:?}"
    );
}

/// Count arguments are declared plain `integer` with their default (clients such as
/// the MCP Inspector convert only what is declared `integer`), and a count sent as
/// text is taken; a bad one says what was expected, not a Rust type.
#[test]
fn count_arguments_are_integers_with_defaults() {
    let t = repo_with_code();
    let mut s = Server::start(&t);
    s.handshake("2025-06-18", "inspector");
    let tools = s.request("tools/list", json!({}));
    let mut counts = 0;
    for tool in tools["tools"].as_array().expect("tools") {
        let props = tool["inputSchema"]["properties"]
            .as_object()
            .expect("props");
        for (name, prop) in props {
            let ty = &prop["type"];
            let integer = ty == "integer"
                || ty
                    .as_array()
                    .is_some_and(|a| a.iter().any(|t| t == "integer"));
            if integer {
                counts += 1;
                assert_eq!(ty, "integer", "{}.{name}: {prop}", tool["name"]);
                assert!(
                    prop["default"].is_u64(),
                    "{}.{name} has no default: {prop}",
                    tool["name"]
                );
            }
        }
    }
    assert!(counts >= 4, "{counts} integer arguments");
    let grep = s.ok(
        "ast_grep",
        json!({"pattern": "foo($A)", "max_results": "1"}),
    );
    assert_eq!(grep["matches"].as_array().map(Vec::len), Some(1), "{grep}");
    let bad = s.call(
        "ast_grep",
        json!({"pattern": "foo($A)", "max_results": "many"}),
    );
    assert_eq!(bad["isError"], true);
    let message = text(&bad);
    assert!(message.contains("non-negative whole number"), "{message}");
    assert!(!message.contains("usize"), "{message}");
    s.finish();
}

/// The seed-style names the server accepts are declared in the advertised input
/// schemas (as deprecated properties and values), so a client that validates its
/// arguments first can send them; each call below passes the schema and succeeds.
#[test]
fn aliases_in_the_schemas_are_accepted() {
    let t = repo_with_code();
    let mut s = Server::start(&t);
    s.handshake("2025-06-18", "validating-client");
    let tools = s.request("tools/list", json!({}));
    let schema_of = |name: &str| -> Value {
        tools["tools"]
            .as_array()
            .expect("tools")
            .iter()
            .find(|t| t["name"] == name)
            .map(|t| t["inputSchema"].clone())
            .unwrap_or_else(|| panic!("no tool {name}"))
    };
    let mut call = |s: &mut Server, tool: &str, args: Value| -> Value {
        let schema = schema_of(tool);
        let validator = jsonschema::draft202012::options()
            .build(&schema)
            .unwrap_or_else(|e| panic!("{tool}'s input schema does not compile: {e}"));
        let errors: Vec<String> = validator
            .iter_errors(&args)
            .map(|e| e.to_string())
            .collect();
        assert!(errors.is_empty(), "{tool} {args}: {errors:?}");
        s.ok(tool, args)
    };
    let grep = call(
        &mut s,
        "ast_grep",
        json!({"pat": "foo($A)", "path": ["src"], "limit": 1, "skip": 0}),
    );
    assert_eq!(grep["matches"].as_array().map(Vec::len), Some(1));
    let stage = |s: &mut Server, call: &mut dyn FnMut(&mut Server, &str, Value) -> Value| {
        call(
            s,
            "ast_edit",
            json!({"ops": [{"pat": "foo($A)", "out": "bar($A)"}], "path": ["src/b.rs"]}),
        )["id"]
            .as_str()
            .expect("id")
            .to_string()
    };
    let id = stage(&mut s, &mut call);
    call(
        &mut s,
        "ast_apply",
        json!({"action": "reject", "previewId": id, "reason": "seed style"}),
    );
    let id = stage(&mut s, &mut call);
    call(
        &mut s,
        "ast_edit",
        json!({"action": "reject", "stagedId": id}),
    );
    let id = stage(&mut s, &mut call);
    call(
        &mut s,
        "ast_edit",
        json!({"action": "reject", "staged_id": id}),
    );
    let id = stage(&mut s, &mut call);
    call(
        &mut s,
        "resolve",
        json!({"action": "reject", "reason": "seed style", "extra": {"previewId": id}}),
    );
    assert!(t.astedit_refs().is_empty(), "{:?}", t.astedit_refs());
    // `pr` needs a forge; its alias is declared all the same.
    assert_eq!(
        schema_of("pr")["properties"]["previewId"]["deprecated"],
        true
    );
    s.finish();
}

fn paths_of(grep: &Value) -> Vec<String> {
    let mut p: Vec<String> = grep["matches"]
        .as_array()
        .expect("matches")
        .iter()
        .map(|m| m["path"].as_str().unwrap_or_default().to_string())
        .collect();
    p.dedup();
    p
}

/// The seed tools' argument shapes work on the first try and mean what the canonical
/// ones do; `**` globs are git's `:(glob)`; ast_grep pages with offset/limit.
#[test]
fn seed_style_calls_are_accepted_unchanged() {
    let t = ts_repo();
    let mut s = Server::start(&t);
    s.handshake("2025-06-18", "seed-agent");

    // `src/**/*.ts` finds what git's glob magic lists.
    let listed = t.git_output(&["ls-files", ":(glob)src/**/*.ts"]).stdout;
    let listed: Vec<String> = listed.lines().map(str::to_string).collect();
    assert_eq!(listed, ["src/a.ts", "src/lib/deep/b.ts"]);
    let canonical = s.ok(
        "ast_grep",
        json!({"pattern": "foo($A)", "paths": ["src/**/*.ts"]}),
    );
    assert_eq!(paths_of(&canonical), listed);
    assert_eq!(canonical["files_searched"], 2);
    let seed = s.ok("ast_grep", json!({"pat": "foo($A)", "glob": "src/**/*.ts"}));
    assert_eq!(seed["matches"], canonical["matches"]);
    let seed = s.ok(
        "ast_grep",
        json!({"pat": "foo($A)", "path": "src/a.ts; top.ts"}),
    );
    assert_eq!(paths_of(&seed), ["src/a.ts", "top.ts"]);

    // Paging: offset/skip with limit.
    let all = s.ok("ast_grep", json!({"pattern": "foo($A)"}));
    assert_eq!(all["total"], 5);
    let page = s.ok(
        "ast_grep",
        json!({"pat": "foo($A)", "limit": 2, "offset": 2}),
    );
    assert_eq!(page["matches"].as_array().map(Vec::len), Some(2));
    assert_eq!(page["matches"][0], all["matches"][2]);
    assert_eq!(page["capped"], true);
    let result = s.call("ast_grep", json!({"pat": "foo($A)", "limit": 2, "skip": 4}));
    assert_eq!(result["structuredContent"]["matches"][0], all["matches"][4]);
    assert_eq!(result["structuredContent"]["capped"], false);
    let page = s.call("ast_grep", json!({"pat": "foo($A)", "limit": 2}));
    assert!(
        text(&page).contains("call again with offset 2"),
        "{}",
        text(&page)
    );

    // ast_edit ops [{pat, out}] stages the same preview as the canonical call.
    let canonical = s.ok(
        "ast_edit",
        json!({"ops": [{"pattern": "foo($A)", "rewrite": "bar($A)"}], "paths": ["src/**/*.ts"]}),
    );
    let seed = s.ok(
        "ast_edit",
        json!({"ops": [{"pat": "foo($A)", "out": "bar($A)"}], "paths": ["src/**/*.ts"]}),
    );
    assert_eq!(seed["summary"], "3 replacements in 2 files");
    for key in ["summary", "files", "diff", "replacements"] {
        assert_eq!(seed[key], canonical[key], "{key}");
    }
    let (first, second) = (
        canonical["id"].as_str().expect("id").to_string(),
        seed["id"].as_str().expect("id").to_string(),
    );
    // DSH: reject by stagedId; resolve: action reject, extra.previewId.
    let rejected = s.ok("ast_edit", json!({"action": "reject", "stagedId": first}));
    assert_eq!(rejected["action"], "discarded");
    assert_eq!(rejected["id"], first.as_str());
    let applied = s.ok(
        "resolve",
        json!({"action": "apply", "reason": "seed", "extra": {"previewId": second}}),
    );
    assert_eq!(applied["id"], second.as_str());
    assert_eq!(t.read_string("src/a.ts"), "const r = bar(1);\n");
    assert_eq!(t.read_string("top.ts"), "foo(5);\n");
    s.ok("undo", json!({"id": second}));

    // DSH: preview, then apply by stagedId.
    let staged = s.ok(
        "ast_edit",
        json!({"action": "preview", "ops": [{"pat": "foo($A)", "out": "baz($A)"}], "path": "top.ts"}),
    );
    let id = staged["id"].as_str().expect("id").to_string();
    let applied = s.ok("ast_edit", json!({"action": "apply", "stagedId": id}));
    assert_eq!(applied["action"], "applied");
    assert_eq!(t.read_string("top.ts"), "baz(5);\n");
    s.ok("undo", json!({"id": id}));

    // The harness's one-step form.
    let both = s.ok(
        "ast_edit",
        json!({"ops": [{"pat": "foo($A)", "out": "qux($A)"}], "paths": ["src/c.js"], "apply": true}),
    );
    assert_eq!(both["applied"], true);
    assert_eq!(both["apply"]["action"], "applied");
    assert_eq!(t.read_string("src/c.js"), "qux(4);\n");

    // resolve action reject; the legacy ast_apply tool.
    let a = s.ok(
        "ast_edit",
        json!({"ops": [{"pat": "foo($A)", "out": "one($A)"}], "path": "src/a.ts"}),
    );
    let dropped = s.ok(
        "resolve",
        json!({"action": "reject", "reason": "no", "id": a["id"]}),
    );
    assert_eq!(dropped["action"], "discarded");
    let b = s.ok(
        "ast_edit",
        json!({"ops": [{"pat": "foo($A)", "out": "two($A)"}], "path": "src/a.ts"}),
    );
    let legacy = s.ok(
        "ast_apply",
        json!({"action": "apply", "previewId": b["id"]}),
    );
    assert_eq!(legacy["action"], "applied");
    assert_eq!(t.read_string("src/a.ts"), "const r = two(1);\n");
    let j = journal(&t);
    assert_eq!(j[0]["event"], "applied");
    assert_eq!(j[0]["agent"], "seed-agent/1.0");

    // The schemas declare the aliases too, as deprecated (issue 24: a client that
    // validates its arguments first must be able to send them).
    let tools = s.request("tools/list", json!({}));
    let grep = tools["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .find(|t| t["name"] == "ast_grep")
        .expect("ast_grep")
        .clone();
    let props = grep["inputSchema"]["properties"]
        .as_object()
        .expect("props");
    assert!(props.contains_key("pattern"));
    assert_eq!(props["pat"]["deprecated"], true);
    assert_eq!(props["limit"]["deprecated"], true);
    assert!(props["max_results"].get("deprecated").is_none());
    s.finish();
}

/// Params that cannot fit answer -32602 with the request's own id; hints name the
/// tool's fields; a client name with control characters stays one line in the log.
#[test]
fn protocol_faults_and_untrusted_client_names() {
    let t = repo_with_code();
    let mut s = Server::start(&t);
    s.handshake("2025-06-18", "evil\nline");

    s.send(&json!({"jsonrpc": "2.0", "id": 90, "method": "tools/call",
                   "params": {"name": "ast_grep", "arguments": [1, 2]}}));
    let reply = s.response(90);
    assert_eq!(reply["error"]["code"], -32602, "{reply}");
    assert!(reply["error"]["message"]
        .as_str()
        .unwrap_or_default()
        .contains("arguments must be an object"));
    s.send(
        &json!({"jsonrpc": "2.0", "id": "str-id", "method": "tools/call",
                   "params": {"name": 5}}),
    );
    let reply = recv_id(&mut s, json!("str-id"));
    assert_eq!(reply["error"]["code"], -32602, "{reply}");
    s.send(&json!({"jsonrpc": "2.0", "id": "arr", "method": "tools/call", "params": []}));
    let reply = recv_id(&mut s, json!("arr"));
    assert_eq!(reply["error"]["code"], -32602, "{reply}");

    // Hints speak of the tool's fields, not CLI flags.
    let unknown = s.call(
        "resolve",
        json!({"action": "apply", "reason": "x", "id": "abc123"}),
    );
    let err = error_json(&unknown);
    assert_eq!(err["error"]["code"], "unknown-id");
    let hint = err["error"]["hint"].as_str().unwrap_or_default();
    assert!(
        hint.contains("previews") && !hint.contains("git astedit"),
        "{hint}"
    );
    assert!(text(&unknown).contains(hint), "{}", text(&unknown));
    let bad = s.call("ast_grep", json!({"pattern": "fn (", "lang": "rust"}));
    let hint = error_json(&bad)["error"]["hint"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(
        !hint.contains("-l ") && !hint.contains("git astedit"),
        "{hint}"
    );

    s.ok(
        "ast_edit",
        json!({"ops": [{"pattern": "foo($A)", "rewrite": "bar($A)"}], "paths": ["src/b.rs"]}),
    );
    s.finish();
    let j = journal(&t);
    assert_eq!(j[0]["agent"], "evil\\nline/1.0");
    let log = t.run(&["log"]);
    let out = log.stdout.clone();
    let lines: Vec<&str> = out.lines().filter(|l| l.contains("evil")).collect();
    assert_eq!(lines.len(), 1, "{out}");
    assert!(lines[0].contains("evil\\nline"), "{out}");
    assert!(!out.lines().any(|l| l.starts_with("line")), "{out}");
}

/// The response with this (non-numeric) id.
fn recv_id(s: &mut Server, id: Value) -> Value {
    loop {
        let line = s
            .lines
            .recv_timeout(Duration::from_secs(60))
            .expect("a response");
        let msg: Value = serde_json::from_str(&line).expect("JSON");
        if msg["id"] == id {
            return msg;
        }
    }
}
