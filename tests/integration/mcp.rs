//! Integration tests: `mcp` (the Model Context Protocol server on stdio) and `pr`.
//!
//! The server is spawned as a real process and spoken to in JSON-RPC over its stdin
//! and stdout, in both lifecycles: the `initialize` handshake and the stateless
//! revision (no handshake, `server/discover`, client context in `_meta`).

use std::io::BufRead;
use std::io::BufReader;
use std::io::Write;
use std::process::Child;
use std::process::ChildStdin;
use std::process::Stdio;
use std::sync::mpsc;
use std::time::Duration;

use serde_json::json;
use serde_json::Value;

use crate::util::TestRepo;

const STATELESS: &str = "2026-07-28";

/// A running `git-astedit mcp` and the lines it wrote.
pub(crate) struct Server {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: mpsc::Receiver<String>,
    /// Every stdout line so far, to check that nothing but JSON-RPC was written.
    seen: Vec<Value>,
    /// Responses read while waiting for another id.
    pending: Vec<Value>,
    next_id: u64,
    /// `_meta` added to every request in the stateless style.
    meta: Option<Value>,
}

impl Server {
    pub(crate) fn start(t: &TestRepo) -> Server {
        Self::start_in(t, ".")
    }

    fn start_in(t: &TestRepo, subdir: &str) -> Server {
        Self::start_with(t, subdir, &[])
    }

    pub(crate) fn start_with(t: &TestRepo, subdir: &str, env: &[(&str, &str)]) -> Server {
        Self::start_full(t, subdir, env, &[])
    }

    /// Started with `args` after `mcp` (e.g. `--allow-run`).
    pub(crate) fn start_args(t: &TestRepo, args: &[&str]) -> Server {
        Self::start_full(t, ".", &[], args)
    }

    fn start_full(t: &TestRepo, subdir: &str, env: &[(&str, &str)], args: &[&str]) -> Server {
        let mut argv = vec!["mcp"];
        argv.extend_from_slice(args);
        let mut cmd = t.command(subdir, &argv);
        cmd.envs(env.iter().copied());
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn git-astedit mcp");
        let stdout = child.stdout.take().expect("stdout");
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Server {
            stdin: child.stdin.take(),
            child,
            lines: rx,
            seen: Vec::new(),
            pending: Vec::new(),
            next_id: 1,
            meta: None,
        }
    }

    /// Speaks the `initialize` handshake as `name/version`.
    pub(crate) fn handshake(&mut self, version: &str, name: &str) -> Value {
        let result = self.request(
            "initialize",
            json!({
                "protocolVersion": version,
                "capabilities": {},
                "clientInfo": {"name": name, "version": "1.0"}
            }),
        );
        self.notify("notifications/initialized", json!({}));
        result
    }

    /// Switches to the stateless style: every request carries the client context.
    fn stateless(&mut self, name: &str) {
        self.meta = Some(json!({
            "io.modelcontextprotocol/protocolVersion": STATELESS,
            "io.modelcontextprotocol/clientInfo": {"name": name, "version": "2.0"},
            "io.modelcontextprotocol/clientCapabilities": {}
        }));
    }

    fn send(&mut self, msg: &Value) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        writeln!(stdin, "{msg}").expect("write to server");
        stdin.flush().expect("flush");
    }

    fn notify(&mut self, method: &str, params: Value) {
        self.send(&json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    /// Sends a request without waiting; returns its id.
    fn send_request(&mut self, method: &str, mut params: Value) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        if let (Some(meta), Some(obj)) = (&self.meta, params.as_object_mut()) {
            obj.insert("_meta".into(), meta.clone());
        }
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        id
    }

    /// Waits for the response to `id` (result or error object, whole message).
    fn response(&mut self, id: u64) -> Value {
        if let Some(i) = self.pending.iter().position(|m| m["id"] == json!(id)) {
            return self.pending.remove(i);
        }
        loop {
            let line = self
                .lines
                .recv_timeout(Duration::from_secs(60))
                .unwrap_or_else(|e| panic!("no response to request {id}: {e}"));
            let msg: Value = serde_json::from_str(&line)
                .unwrap_or_else(|e| panic!("stdout line is not JSON ({e}): {line}"));
            assert_eq!(msg["jsonrpc"], "2.0", "not a JSON-RPC message: {line}");
            self.seen.push(msg.clone());
            if msg["id"] == json!(id) {
                return msg;
            }
            if msg.get("id").is_some() {
                self.pending.push(msg);
            }
        }
    }

    /// A request's result; panics on a JSON-RPC error.
    pub(crate) fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.send_request(method, params);
        let msg = self.response(id);
        assert!(
            msg.get("error").is_none(),
            "{method} failed: {}",
            msg["error"]
        );
        msg["result"].clone()
    }

    pub(crate) fn call(&mut self, tool: &str, arguments: Value) -> Value {
        self.request("tools/call", json!({"name": tool, "arguments": arguments}))
    }

    /// Calls a tool that must succeed; returns its structured content.
    #[track_caller]
    pub(crate) fn ok(&mut self, tool: &str, arguments: Value) -> Value {
        let result = self.call(tool, arguments);
        assert_eq!(result["isError"], false, "{tool} failed: {}", text(&result));
        result["structuredContent"].clone()
    }

    /// Closes stdin and waits for a clean exit.
    pub(crate) fn finish(mut self) -> Vec<Value> {
        drop(self.stdin.take());
        let status = self.wait_exit();
        assert!(status.success(), "server exited with {status}");
        for line in self.drain_after_exit() {
            let msg: Value = serde_json::from_str(&line)
                .unwrap_or_else(|e| panic!("stdout line is not JSON ({e}): {line}"));
            self.seen.push(msg);
        }
        std::mem::take(&mut self.seen)
    }
}

impl Server {
    /// Every line the exited server wrote that was not read yet. The reader thread may
    /// still be passing the last ones on after the exit (a loaded machine), so this
    /// waits for its end of file, not just for what already arrived.
    fn drain_after_exit(&self) -> Vec<String> {
        let mut lines = Vec::new();
        loop {
            match self.lines.recv_timeout(Duration::from_secs(60)) {
                Ok(line) => lines.push(line),
                Err(mpsc::RecvTimeoutError::Disconnected) => return lines,
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    panic!("the server's stdout stayed open a minute after it exited")
                }
            }
        }
    }

    /// Waits for the process to exit; a hang guard, far above any real run.
    fn wait_exit(&mut self) -> std::process::ExitStatus {
        for _ in 0..1200 {
            if let Some(status) = self.child.try_wait().expect("try_wait") {
                return status;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        panic!("the server did not exit within a minute after stdin closed");
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The JSON block of an `isError` result (its second text block); there is no
/// `structuredContent` on errors.
pub(crate) fn error_json(result: &Value) -> Value {
    assert!(result.get("structuredContent").is_none(), "{result}");
    let block = result["content"][1]["text"].as_str().unwrap_or_default();
    serde_json::from_str(block).unwrap_or_else(|e| panic!("{e}: {block}"))
}

fn text(result: &Value) -> String {
    result["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

/// Journal events, newest first.
fn journal(t: &TestRepo) -> Vec<Value> {
    // The chain's first parents are journal commits, except that the oldest one links
    // only its preview commit (whose message is not JSON).
    let out = t.git_output(&[
        "log",
        "--first-parent",
        "--format=%B%x00",
        "refs/astedit-journal",
    ]);
    if out.code != 0 {
        return Vec::new();
    }
    out.stdout
        .split('\0')
        .map(str::trim)
        .filter(|s| s.starts_with('{'))
        .map(|s| serde_json::from_str(s).unwrap_or_else(|e| panic!("journal entry {s}: {e}")))
        .collect()
}

fn repo_with_code() -> TestRepo {
    let t = TestRepo::new();
    t.write(
        "src/a.rs",
        "fn main() {\n    foo(1);\n    foo(foo(2));\n}\n",
    );
    t.write("src/b.rs", "fn b() { foo(3); }\n");
    t.commit_all("init");
    t
}

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

// ---------------------------------------------------------------- pr

/// A stand-in `gh` that records each argument vector (NUL-separated, one file per
/// call) and whether prompts were disabled, and answers like gh would.
const GH_STUB: &str = r#"#!/bin/sh
dir="$GH_STUB_DIR"
mkdir -p "$dir/calls"
n=$(ls "$dir/calls" | wc -l | tr -d ' ')
: > "$dir/calls/$n"
for a in "$@"; do printf '%s\0' "$a" >> "$dir/calls/$n"; done
printf '%s' "$GH_PROMPT_DISABLED" > "$dir/prompt.$n"
case "$1 $2" in
  "--version "*) echo "gh version 2.99.0 (stand-in)" ;;
  "auth status")
    if [ -f "$dir/offline" ]; then
      echo "error connecting to api.github.com" >&2
      echo "check your internet connection or https://githubstatus.com" >&2
      exit 1
    fi
    if [ -f "$dir/noauth" ]; then
      echo "You are not logged into any GitHub hosts. To log in, run: gh auth login" >&2
      exit 1
    fi ;;
  "pr list")
    if [ -f "$dir/created" ]; then
      echo "[{\"url\":\"https://github.com/acme/widgets/pull/7\",\"state\":\"OPEN\",\"isDraft\":$(cat "$dir/created"),\"isCrossRepository\":false,\"headRepositoryOwner\":{\"login\":\"acme\"}}]"
    else
      echo '[]'
    fi ;;
  "pr create")
    draft=false
    for a in "$@"; do [ "$a" = "--draft" ] && draft=true; done
    printf '%s' "$draft" > "$dir/created"
    echo "https://github.com/acme/widgets/pull/7" ;;
  *) echo "unexpected gh call: $*" >&2; exit 9 ;;
esac
"#;

pub(crate) struct GhStub {
    pub(crate) dir: tempfile::TempDir,
    pub(crate) remote: tempfile::TempDir,
}

impl GhStub {
    pub(crate) fn new(t: &TestRepo) -> GhStub {
        let stub = GhStub {
            dir: tempfile::tempdir().expect("tempdir"),
            remote: tempfile::tempdir().expect("tempdir"),
        };
        let bin = stub.dir.path().join("bin");
        std::fs::create_dir_all(&bin).expect("mkdir");
        let gh = bin.join("gh");
        std::fs::write(&gh, GH_STUB).expect("write gh");
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&gh, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        let remote = stub.remote.path().to_string_lossy().into_owned();
        t.git(&["init", "-q", "--bare", &remote]);
        t.git(&["remote", "add", "origin", &remote]);
        stub
    }

    pub(crate) fn path_env(&self) -> String {
        format!(
            "{}:{}",
            self.dir.path().join("bin").display(),
            std::env::var("PATH").unwrap_or_default()
        )
    }

    pub(crate) fn run(&self, t: &TestRepo, args: &[&str]) -> crate::util::Output {
        let path = self.path_env();
        let dir = self.dir.path().to_string_lossy().into_owned();
        t.run_with(
            ".",
            args,
            &[("PATH", path.as_str()), ("GH_STUB_DIR", dir.as_str())],
            None,
        )
    }

    /// Every recorded argument vector, in call order.
    fn calls(&self) -> Vec<Vec<String>> {
        let dir = self.dir.path().join("calls");
        let n = std::fs::read_dir(&dir).map(|d| d.count()).unwrap_or(0);
        (0..n)
            .map(|i| {
                let raw = std::fs::read(dir.join(i.to_string())).expect("call record");
                String::from_utf8(raw)
                    .expect("utf8")
                    .split_terminator('\0')
                    .map(str::to_string)
                    .collect()
            })
            .collect()
    }

    fn prompts_disabled(&self, call: usize) -> String {
        std::fs::read_to_string(self.dir.path().join(format!("prompt.{call}"))).unwrap_or_default()
    }

    fn remote_git(&self, t: &TestRepo, args: &[&str]) -> String {
        let gd = format!("--git-dir={}", self.remote.path().display());
        let mut all = vec![gd.as_str()];
        all.extend_from_slice(args);
        t.git(&all)
    }
}

#[test]
fn pr_pushes_a_branch_and_opens_a_draft_once() {
    let t = repo_with_code();
    let gh = GhStub::new(&t);
    let edited = t.run(&[
        "--json",
        "edit",
        "-p",
        "foo($A)",
        "-r",
        "bar($A)",
        "--reason",
        "rename foo to bar",
        "--apply",
    ]);
    edited.assert_code(0);
    let id = edited.json()["id"].as_str().expect("id").to_string();
    let head = t.git(&["rev-parse", "HEAD"]).trim().to_string();

    let first = gh.run(&t, &["pr"]);
    first.assert_code(0);
    assert!(
        first
            .stdout
            .contains("Opened draft pull request https://github.com/acme/widgets/pull/7"),
        "{}",
        first.stdout
    );
    let j = journal(&t);
    assert_eq!(j[0]["event"], "pr", "the run is journalled");
    assert_eq!(j[0]["id"], id.as_str());
    assert!(j[0].get("agent").is_none(), "no agent on the command line");
    let branch = format!("astedit/{id}");
    // Pushed with plain git: the remote branch holds exactly the applied change on
    // top of the commit it was staged on.
    assert_eq!(
        gh.remote_git(&t, &["show", &format!("{branch}:src/a.rs")]),
        "fn main() {\n    bar(1);\n    bar(bar(2));\n}\n"
    );
    assert_eq!(
        gh.remote_git(&t, &["rev-parse", &format!("{branch}~")])
            .trim(),
        head
    );
    let changed = gh.remote_git(&t, &["diff", "--name-only", &format!("{branch}~"), &branch]);
    assert_eq!(changed, "src/a.rs\nsrc/b.rs\n");

    let calls = gh.calls();
    assert_eq!(calls.len(), 4, "{calls:?}");
    assert_eq!(calls[0], ["--version"]);
    assert_eq!(calls[1], ["auth", "status"]);
    assert_eq!(
        calls[2],
        [
            "pr",
            "list",
            "--head",
            &branch,
            "--state",
            "all",
            "--json",
            "number,url,state,isDraft,statusCheckRollup,reviewDecision,latestReviews,author,\
             headRefOid,isCrossRepository,headRepositoryOwner"
        ]
    );
    let create = &calls[3];
    assert_eq!(create.len(), 7, "{create:?}");
    // The caller's values travel in `--opt=VALUE` form: none can become an option.
    assert_eq!(
        create[..5],
        [
            "pr",
            "create",
            "--head",
            &branch,
            "--title=rename foo to bar",
        ]
    );
    assert_eq!(create[6], "--draft");
    for i in 0..4 {
        assert_eq!(
            gh.prompts_disabled(i),
            "1",
            "prompts not disabled in call {i}"
        );
    }

    let body = create[5].strip_prefix("--body=").expect("--body=");
    assert!(body.starts_with("rename foo to bar\n"), "{body}");
    assert!(body.contains("`foo($A)` → `bar($A)`"), "{body}");
    assert!(body.contains("| `src/a.rs` | 3 | 2 | 2 |"), "{body}");
    assert!(body.contains("| `src/b.rs` | 1 | 1 | 1 |"), "{body}");
    assert!(body.contains(&format!("staged     {id}")), "{body}");
    assert!(body.contains(&format!("applied    {id}")), "{body}");
    let marker = body
        .split("<!-- astedit:")
        .nth(1)
        .and_then(|m| m.split(" -->").next())
        .expect("marker");
    let marker: Value = serde_json::from_str(marker).expect("marker is JSON");
    assert_eq!(marker["id"], id.as_str());
    assert_eq!(marker["state"], "applied");
    assert_eq!(marker["reason"], "rename foo to bar");
    assert_eq!(marker["ops"][0]["pattern"], "foo($A)");
    assert_eq!(marker["files"][0]["path"], "src/a.rs");
    assert_eq!(marker["files"][0]["count"], 3);

    // Idempotent: the existing pull request is reported, nothing is created again.
    let second = gh.run(&t, &["--json", "pr", &id[..7]]);
    second.assert_code(0);
    let v = second.json();
    assert_eq!(v["created"], false);
    assert_eq!(v["draft"], true, "the draft found is still a draft: {v}");
    assert_eq!(v["url"], "https://github.com/acme/widgets/pull/7");
    assert_eq!(v["branch"], branch.as_str());
    let calls = gh.calls();
    assert_eq!(calls.len(), 7, "{calls:?}");
    assert!(
        calls
            .iter()
            .filter(|c| c.get(1).map(String::as_str) == Some("create"))
            .count()
            == 1
    );
}

/// Issue 35 item 7: with no git identity at all (an empty HOME, no config, no
/// variables: a CI runner), `pr` makes, pushes and journals its branch as the fallback
/// committer instead of failing on the reflog.
#[test]
fn pr_without_a_git_identity_uses_the_fallback_committer() {
    let t = repo_with_code();
    let gh = GhStub::new(&t);
    let staged = t.run(&["--json", "edit", "-p", "foo($A)", "-r", "bar($A)"]);
    staged.assert_code(0);
    let id = staged.json()["id"].as_str().expect("id").to_string();
    let home = tempfile::tempdir().expect("tempdir");
    let mut cmd = t.command(".", &["--json", "pr", &id]);
    cmd.env("PATH", gh.path_env())
        .env("GH_STUB_DIR", gh.dir.path());
    crate::util::without_identity(&mut cmd, home.path());
    let out = crate::util::run_command(cmd);
    out.assert_code(0);
    let branch = format!("astedit/{id}");
    assert_eq!(out.json()["branch"], branch.as_str());
    let fallback = "git-astedit <git-astedit@localhost>";
    assert_eq!(
        gh.remote_git(&t, &["log", "-1", "--format=%cn <%ce>", &branch])
            .trim(),
        fallback
    );
    assert_eq!(
        t.git(&["reflog", "show", "--format=%gn <%ge>", &branch])
            .trim(),
        fallback
    );
    assert_eq!(journal(&t)[0]["event"], "pr");
}

#[test]
fn pr_without_gh_or_auth_says_how_to_fix_it_and_pushes_nothing() {
    let t = repo_with_code();
    let gh = GhStub::new(&t);
    let staged = t.run(&["--json", "edit", "-p", "foo($A)", "-r", "bar($A)"]);
    staged.assert_code(0);
    let id = staged.json()["id"].as_str().expect("id").to_string();

    // A PATH with git but no gh.
    let bare = tempfile::tempdir().expect("tempdir");
    let git = String::from_utf8(
        std::process::Command::new("sh")
            .args(["-c", "command -v git"])
            .output()
            .expect("which git")
            .stdout,
    )
    .expect("utf8");
    std::os::unix::fs::symlink(git.trim(), bare.path().join("git")).expect("symlink");
    let path = bare.path().to_string_lossy().into_owned();
    let missing = t.run_with(".", &["pr", &id], &[("PATH", path.as_str())], None);
    missing.assert_code(70);
    assert!(
        missing.stderr.contains("`gh` was not found"),
        "{}",
        missing.stderr
    );
    assert!(
        missing.stderr.contains("https://cli.github.com"),
        "{}",
        missing.stderr
    );

    std::fs::write(gh.dir.path().join("noauth"), "").expect("write");
    let noauth = gh.run(&t, &["--json", "pr", &id]);
    noauth.assert_code(70);
    let err = &noauth.json()["error"];
    assert_eq!(err["code"], "gh-auth");
    assert!(err["hint"]
        .as_str()
        .unwrap_or_default()
        .contains("gh auth login"));

    assert!(
        t.git_output(&[
            "rev-parse",
            "--verify",
            "-q",
            &format!("refs/heads/astedit/{id}")
        ])
        .code
            != 0,
        "no branch made"
    );
    assert!(
        gh.remote_git(&t, &["for-each-ref"]).is_empty(),
        "nothing pushed"
    );

    std::fs::write(gh.dir.path().join("offline"), "").expect("write");
    let offline = gh.run(&t, &["--json", "pr", &id]);
    offline.assert_code(70);
    assert_eq!(offline.json()["error"]["code"], "network");

    // With gh ready, a configured remote that cannot be reached fails the push, with
    // the fix.
    std::fs::remove_file(gh.dir.path().join("offline")).expect("rm");
    std::fs::remove_file(gh.dir.path().join("noauth")).expect("rm");
    t.git(&["remote", "add", "gone", "/nonexistent/astedit-remote.git"]);
    let push = gh.run(&t, &["--json", "pr", &id, "--remote", "gone"]);
    push.assert_code(70);
    let err = &push.json()["error"];
    assert_eq!(err["code"], "push-failed");
    assert!(err["hint"]
        .as_str()
        .unwrap_or_default()
        .contains("git remote -v"));
    assert!(
        gh.calls()
            .iter()
            .all(|c| c.get(1).map(String::as_str) != Some("create")),
        "no pull request without a pushed branch"
    );
}

/// A remote (or base) that would be an option of `git push`/`gh`, or that names no
/// configured remote, is refused before anything runs: no command of the caller's
/// choosing, no push to a place the repository never named. CLI and tool alike.
#[test]
fn pr_refuses_option_like_and_unconfigured_remotes() {
    let t = repo_with_code();
    let gh = GhStub::new(&t);
    let staged = t.run(&["--json", "edit", "-p", "foo($A)", "-r", "bar($A)"]);
    staged.assert_code(0);
    let id = staged.json()["id"].as_str().expect("id").to_string();
    let pwned = t.path().join("pwned");
    let hostile = format!("--receive-pack=touch {}; git-receive-pack", pwned.display());
    let other = tempfile::tempdir().expect("tempdir");
    t.git(&["init", "-q", "--bare", &other.path().to_string_lossy()]);
    let unknown = other.path().to_string_lossy().into_owned();
    for (args, what) in [
        (
            vec!["--json", "pr", &id, &format!("--remote={hostile}")],
            "remote",
        ),
        (vec!["--json", "pr", &id, "--remote=-v"], "remote"),
        (vec!["--json", "pr", &id, "--remote", "nosuch"], "remote"),
        (vec!["--json", "pr", &id, "--remote", &unknown], "remote"),
        (vec!["--json", "pr", &id, "--base=--help"], "base branch"),
    ] {
        let out = gh.run(&t, &args);
        out.assert_code(4);
        let err = &out.json()["error"];
        assert_eq!(err["code"], "unsafe-argument", "{args:?}: {err}");
        assert!(
            err["message"]
                .as_str()
                .unwrap_or_default()
                .starts_with(what),
            "{args:?}: {err}"
        );
    }
    let err = gh
        .run(&t, &["--json", "pr", &id, "--remote", "nosuch"])
        .json();
    assert!(
        err["error"]["hint"]
            .as_str()
            .unwrap_or_default()
            .contains("origin"),
        "the hint names the configured remotes: {err}"
    );

    let mut s = Server::start_with(
        &t,
        ".",
        &[
            ("PATH", gh.path_env().as_str()),
            ("GH_STUB_DIR", &gh.dir.path().to_string_lossy()),
        ],
    );
    s.handshake("2025-06-18", "hostile");
    let result = s.call("pr", json!({"id": id, "remote": hostile}));
    assert_eq!(result["isError"], true, "{result}");
    assert_eq!(error_json(&result)["error"]["code"], "unsafe-argument");
    drop(s);

    assert!(!pwned.exists(), "the hostile receive-pack ran");
    assert!(gh.calls().is_empty(), "gh ran: {:?}", gh.calls());
    assert!(
        gh.remote_git(&t, &["for-each-ref"]).is_empty(),
        "nothing pushed"
    );
    assert!(
        std::fs::read_dir(other.path().join("refs/heads"))
            .map(|d| d.count())
            .unwrap_or(0)
            == 0,
        "nothing pushed to the unconfigured place"
    );

    // The URL of a configured remote is as good as its name.
    let url = gh.remote.path().to_string_lossy().into_owned();
    let out = gh.run(&t, &["--json", "pr", &id, "--remote", &url]);
    out.assert_code(0);
    assert_eq!(out.json()["remote"], "origin");
}

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

/// A no-id `pr` never publishes a preview that was undone since (here by another
/// agent, through the CLI): as for `resolve`, the error is `only-undone-pending` and
/// names it, and nothing is pushed or asked of gh.
#[test]
fn a_no_id_pr_does_not_publish_an_undone_preview() {
    let t = repo_with_code();
    let gh = GhStub::new(&t);
    let mut s = Server::start_with(
        &t,
        ".",
        &[
            ("PATH", gh.path_env().as_str()),
            ("GH_STUB_DIR", &gh.dir.path().to_string_lossy()),
        ],
    );
    s.handshake("2025-06-18", "publisher");
    let staged = s.ok(
        "ast_edit",
        json!({"ops": [{"pattern": "foo($A)", "rewrite": "bar($A)"}]}),
    );
    let id = staged["id"].as_str().expect("id").to_string();
    s.ok(
        "resolve",
        json!({"action": "apply", "id": id, "reason": "publish later"}),
    );
    t.run(&["undo", &id, "--reason", "another agent took it back"])
        .assert_code(0);
    let refused = s.call("pr", json!({}));
    assert_eq!(refused["isError"], true, "{refused}");
    let err = error_json(&refused);
    assert_eq!(err["error"]["code"], "only-undone-pending", "{err}");
    assert!(err.to_string().contains(&id), "{err}");
    assert!(gh.calls().is_empty(), "gh ran: {:?}", gh.calls());
    assert!(gh.remote_git(&t, &["for-each-ref"]).is_empty());
    s.finish();
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

/// The bytes a tool result takes: its text blocks and its structured content.
fn result_bytes(result: &Value) -> usize {
    let text: usize = result["content"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|c| c["text"].as_str().map_or(0, str::len))
                .sum()
        })
        .unwrap_or(0);
    text + result
        .get("structuredContent")
        .map_or(0, |v| v.to_string().len())
}

/// Every result fits its byte budget (64 KiB by default, `max_bytes` per call): big
/// captures are cut like match text, the matches stop at the budget and the text says
/// which offset continues, the diff is sent once (structured), and a long list of
/// previews is cut with a note.
#[test]
fn tool_results_fit_the_byte_budget_and_say_what_was_cut() {
    let t = TestRepo::new();
    let mut big = String::from("class Big:\n");
    for i in 0..3000 {
        big.push_str(&format!(
            "    def m{i}(self):\n        print('method {i}', self.x{i})\n"
        ));
    }
    t.write("big.py", &big);
    let mut calls = String::new();
    for i in 0..4000 {
        calls.push_str(&format!("print('line {i}', value_{i}, other_{i})\n"));
    }
    t.write("calls.py", &calls);
    t.commit_all("init");
    let mut s = Server::start(&t);
    s.handshake("2025-06-18", "budget");

    let class = s.call("ast_grep", json!({"pattern": "class $C: $$$B"}));
    assert_eq!(class["isError"], false, "{}", text(&class));
    assert!(
        result_bytes(&class) <= 64 * 1024,
        "{}",
        result_bytes(&class)
    );
    let m = &class["structuredContent"]["matches"][0];
    assert!(m["meta_variables"]["multi"]["B"][0]["text"]
        .as_str()
        .is_some_and(|t| t.len() < 1000));

    let prints = s.call(
        "ast_grep",
        json!({"pattern": "print($$$A)", "max_results": 5000}),
    );
    assert!(
        result_bytes(&prints) <= 64 * 1024,
        "{}",
        result_bytes(&prints)
    );
    let out = &prints["structuredContent"];
    assert_eq!(out["capped"], true);
    let shown = out["shown"].as_u64().expect("shown");
    assert!(shown > 10 && shown < 7000, "{shown}");
    let said = text(&prints);
    assert!(
        said.contains(&format!("offset {shown}")) && said.contains("budget"),
        "{said}"
    );
    let small = s.call(
        "ast_grep",
        json!({"pattern": "print($$$A)", "max_bytes": 4096}),
    );
    assert!(result_bytes(&small) <= 4096, "{}", result_bytes(&small));

    // The diff is sent once: in the structured content, not in the text.
    let staged = s.call(
        "ast_edit",
        json!({"ops": [{"pattern": "print($$$A)", "rewrite": "log($$$A)"}], "paths": ["calls.py"]}),
    );
    assert!(
        result_bytes(&staged) <= 64 * 1024,
        "{}",
        result_bytes(&staged)
    );
    let id = staged["structuredContent"]["id"]
        .as_str()
        .expect("id")
        .to_string();
    let said = text(&staged);
    assert!(said.starts_with(&format!("Preview {id}: ")), "{said}");
    assert!(!said.contains("-print('line 0'"), "{said}");
    let diff = staged["structuredContent"]["diff"]
        .as_str()
        .unwrap_or_default();
    assert!(
        diff.contains("-print('line 0'"),
        "{}",
        &diff[..diff.len().min(2000)]
    );
    // A long list of previews is paged.
    for i in 0..4 {
        s.ok(
            "ast_edit",
            json!({"ops": [{"pattern": format!("print('line {i}', $$$A)"), "rewrite": "log($$$A)"}], "paths": ["calls.py"]}),
        );
    }
    let page = s.ok("previews", json!({"max_results": 2}));
    assert_eq!(page["total"], 5, "{page}");
    assert_eq!(page["previews"].as_array().map(Vec::len), Some(2));
    let next = s.call("previews", json!({"max_results": 2, "offset": 4}));
    assert!(
        text(&next).contains("1 of 5 pending previews, from offset 4"),
        "{}",
        text(&next)
    );
    let page = s.call("previews", json!({"max_results": 2}));
    assert!(
        text(&page).contains("more: call again with offset 2"),
        "{}",
        text(&page)
    );
    let shown = s.call(
        "previews",
        json!({"action": "show", "id": id, "max_diff_lines": 0}),
    );
    assert!(
        result_bytes(&shown) <= 64 * 1024,
        "{}",
        result_bytes(&shown)
    );
    assert!(!text(&shown).contains("-print('line 0'"));
    assert!(text(&shown).contains("budget") || result_bytes(&shown) < 60 * 1024);
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

fn ts_repo() -> TestRepo {
    let t = TestRepo::new();
    t.write("src/a.ts", "const r = foo(1);\n");
    t.write("src/lib/deep/b.ts", "foo(2);\nfoo(3);\n");
    t.write("src/c.js", "foo(4);\n");
    t.write("top.ts", "foo(5);\n");
    t.commit_all("init");
    t
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

/// A path that names no file is a warning beside the others' results; when every path
/// names nothing, an error: never a silent "0 files searched".
#[test]
fn a_path_matching_nothing_is_a_warning_never_silent() {
    let t = ts_repo();
    let mut s = Server::start(&t);
    s.handshake("2025-06-18", "paths-agent");
    let result = s.call(
        "ast_grep",
        json!({"pat": "foo($A)", "path": "top.ts; nope/**/*.ts"}),
    );
    assert_eq!(result["isError"], false, "{}", text(&result));
    let out = &result["structuredContent"];
    assert_eq!(out["total"], 1);
    let warnings = out["warnings"].to_string();
    assert!(warnings.contains("nope/**/*.ts"), "{out}");
    assert!(
        text(&result).contains("warning: path ':(glob)nope/**/*.ts' matches no file"),
        "{}",
        text(&result)
    );
    let none = s.call(
        "ast_grep",
        json!({"pat": "foo($A)", "paths": ["nope/**/*.ts"]}),
    );
    assert_eq!(none["isError"], true);
    assert_eq!(error_json(&none)["error"]["code"], "pathspec-no-match");
    s.finish();
}

/// The `pr` tool is the CLI's `pr` in-process: annotated open-world and destructive;
/// a no-id call means this session's transaction; the commit it makes carries the
/// `Astedit-*` trailers and the (escaped) agent; the journal names the agent.
#[test]
fn pr_tool_opens_a_pull_request_named_for_the_agent() {
    let t = repo_with_code();
    let gh = GhStub::new(&t);
    let path = gh.path_env();
    let dir = gh.dir.path().to_string_lossy().into_owned();
    let env = [("PATH", path.as_str()), ("GH_STUB_DIR", dir.as_str())];

    // Another session's preview is never published without its id.
    let mut other = Server::start_with(&t, ".", &env);
    other.handshake("2025-06-18", "bystander");
    let tools = other.request("tools/list", json!({}));
    let pr_tool = tools["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .find(|t| t["name"] == "pr")
        .expect("a pr tool")
        .clone();
    assert_eq!(pr_tool["annotations"]["openWorldHint"], true);
    assert_eq!(pr_tool["annotations"]["destructiveHint"], true);
    assert_eq!(pr_tool["annotations"]["readOnlyHint"], false);

    let mut s = Server::start_with(&t, ".", &env);
    s.handshake("2025-06-18", "pr\nbot");
    let staged = s.ok(
        "ast_edit",
        json!({"ops": [{"pattern": "foo($A)", "rewrite": "bar($A)"}], "reason": "rename foo"}),
    );
    let id = staged["id"].as_str().expect("id").to_string();
    let head = t.git(&["rev-parse", "HEAD"]).trim().to_string();

    let refused = other.call("pr", json!({}));
    assert_eq!(refused["isError"], true);
    assert_eq!(error_json(&refused)["error"]["code"], "id-required");
    assert!(text(&refused).contains(&id), "{}", text(&refused));
    assert!(
        text(&refused).contains(&format!(
            "call pr again with the id, e.g. {{\"id\": \"{id}\"}}"
        )),
        "{}",
        text(&refused)
    );
    assert!(gh.calls().is_empty(), "nothing ran for a refused call");
    other.finish();

    // No id: the preview this session staged (pending: the branch is made for it).
    let opened = s.ok("pr", json!({"title": "Rename foo"}));
    assert_eq!(opened["id"], id.as_str());
    assert_eq!(opened["created"], true);
    assert_eq!(opened["draft"], true);
    assert_eq!(opened["state"], "pending");
    assert_eq!(opened["url"], "https://github.com/acme/widgets/pull/7");
    crate::contract::validate(&t, "pr", &opened);
    let branch = format!("astedit/{id}");
    assert_eq!(opened["branch"], branch.as_str());
    let tip = opened["commit"].as_str().expect("commit").to_string();
    assert_eq!(
        gh.remote_git(&t, &["rev-parse", &branch]).trim(),
        tip,
        "the branch was pushed"
    );
    assert_eq!(
        gh.remote_git(&t, &["rev-parse", &format!("{branch}~")])
            .trim(),
        head
    );
    assert_eq!(
        gh.remote_git(&t, &["show", &format!("{branch}:src/b.rs")]),
        "fn b() { bar(3); }\n"
    );
    let trailers = t.git(&["log", "-1", "--format=%(trailers:only,unfold)", &tip]);
    assert!(
        trailers.contains(&format!("Astedit-Id: {id}")),
        "{trailers}"
    );
    assert!(trailers.contains("Astedit-Kind: edit"), "{trailers}");
    assert!(
        trailers.contains("Astedit-Agent: pr\\nbot/1.0"),
        "one escaped line: {trailers}"
    );
    let subject = t.git(&["log", "-1", "--format=%s", &tip]);
    assert_eq!(subject.trim(), "Rename foo");
    let create = gh
        .calls()
        .into_iter()
        .find(|c| c.get(1).map(String::as_str) == Some("create"))
        .expect("gh pr create");
    assert!(create.contains(&"--draft".to_string()), "{create:?}");
    assert_eq!(gh.prompts_disabled(0), "1");

    let j = journal(&t);
    assert_eq!(j[0]["event"], "pr");
    assert_eq!(j[0]["id"], id.as_str());
    assert_eq!(j[0]["agent"], "pr\\nbot/1.0");
    assert!(
        j[0]["notes"][0]
            .as_str()
            .unwrap_or_default()
            .contains("https://github.com/acme/widgets/pull/7"),
        "{}",
        j[0]
    );
    // Still pending: a pull request does not apply anything.
    assert_eq!(t.astedit_refs().len(), 1);
    let log = t.run(&["log"]).stdout;
    assert!(
        log.lines()
            .any(|l| l.contains("pr ") && l.contains(&id) && l.contains("pr\\nbot")),
        "{log}"
    );

    // Again, by id prefix: the existing pull request, nothing created twice.
    let again = s.ok("pr", json!({"id": &id[..7]}));
    assert_eq!(again["created"], false);
    assert_eq!(again["commit"], tip.as_str());
    let creates = gh
        .calls()
        .iter()
        .filter(|c| c.get(1).map(String::as_str) == Some("create"))
        .count();
    assert_eq!(creates, 1);

    // Without gh logged in: an isError result with the fix, nothing pushed anew.
    std::fs::write(gh.dir.path().join("noauth"), "").expect("write");
    let noauth = s.call("pr", json!({"id": id}));
    assert_eq!(noauth["isError"], true);
    let err = error_json(&noauth);
    assert_eq!(err["error"]["code"], "gh-auth");
    assert!(text(&noauth).contains("gh auth login"), "{}", text(&noauth));
    s.finish();
    assert_eq!(t.git_output(&["fsck", "--strict"]).code, 0);
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

/// The server keeps a search's file set between calls (issue 26): the set follows a
/// file added to a folder, a folder added, a `.gitignore` edited and a file's new
/// content. (The server keeps a set only once what it was made from is over two
/// seconds old, hence the pauses.)
#[test]
fn repeated_searches_follow_the_tree() {
    let t = repo_with_code();
    t.write(".gitignore", "*.tmp\n");
    t.commit_all("ignore");
    let settle = || std::thread::sleep(Duration::from_millis(2200));
    settle();
    let mut s = Server::start(&t);
    s.handshake("2025-06-18", "inspector");
    let total = |s: &mut Server| {
        let grep = s.ok("ast_grep", json!({"pattern": "foo($A)"}));
        grep["total"].as_u64().unwrap_or_else(|| panic!("{grep}"))
    };
    assert_eq!(total(&mut s), 4);
    assert_eq!(total(&mut s), 4);
    t.write("src/c.rs", "fn c() { foo(9); }\n");
    assert_eq!(total(&mut s), 5, "a new file in a folder");
    t.write("lib/d.rs", "fn d() { foo(10); }\n");
    assert_eq!(total(&mut s), 6, "a new folder");
    settle();
    assert_eq!(total(&mut s), 6);
    t.write(".gitignore", "*.tmp\nc.rs\n");
    assert_eq!(total(&mut s), 5, "an edited .gitignore");
    t.write("src/b.rs", "fn b() { foo(3); foo(4); }\n");
    assert_eq!(total(&mut s), 6, "new content");
    s.finish();
}

/// The `ast_grep` and `edit` tools read the project's root `sgconfig.yml` as `grep`
/// and `edit` do there: its languageGlobs make `.es6` files JavaScript.
#[test]
fn tools_read_the_projects_language_globs() {
    let t = TestRepo::new();
    t.write(
        "sgconfig.yml",
        "ruleDirs: []\nlanguageGlobs:\n  javascript: ['*.es6']\n",
    );
    t.write("src/old.es6", "console.log(1);\n");
    t.write("src/new.js", "console.log(2);\n");
    t.commit_all("init");
    let mut s = Server::start(&t);
    s.handshake("2025-06-18", "inspector");
    let found = s.ok("ast_grep", json!({"pattern": "console.log($A)"}));
    let paths: Vec<&str> = found["matches"]
        .as_array()
        .expect("matches")
        .iter()
        .filter_map(|m| m["path"].as_str())
        .collect();
    assert_eq!(paths, ["src/new.js", "src/old.es6"], "{found}");
    let edited = s.ok(
        "ast_edit",
        json!({"ops": [{"pattern": "console.log($A)", "rewrite": "logger.info($A)"}], "lang": "javascript"}),
    );
    assert_eq!(edited["file_count"], 2, "{edited}");
    s.finish();
}

/// The tools take their files through the same input as `grep` and `edit` (issue 36
/// item 2), with an agent's leniency: a path that names nothing beside one that names
/// files is a warning and the others are read; only a call whose every path names
/// nothing fails, as the CLI fails on any such pathspec.
#[test]
fn a_stale_path_among_good_ones_is_a_warning_and_all_stale_is_an_error() {
    let t = TestRepo::new();
    t.write("src/a.js", "foo(1);\n");
    t.write("lib/b.js", "foo(2);\n");
    t.commit_all("init");
    let mut s = Server::start(&t);
    s.handshake("2025-06-18", "inspector");
    let found = s.ok(
        "ast_grep",
        json!({"pattern": "foo($A)", "paths": ["src/", "gone/"]}),
    );
    assert_eq!(found["total"], 1, "{found}");
    assert_eq!(found["matches"][0]["path"], "src/a.js", "{found}");
    let warnings = found["warnings"].to_string();
    assert!(
        warnings.contains("path 'gone/' matches no file; searched the other paths"),
        "{found}"
    );
    let staged = s.ok(
        "ast_edit",
        json!({"ops": [{"pattern": "foo($A)", "rewrite": "bar($A)"}], "paths": "gone.js; lib/"}),
    );
    assert_eq!(staged["file_count"], 1, "{staged}");
    assert!(
        staged["warnings"]
            .to_string()
            .contains("path 'gone.js' matches no file"),
        "{staged}"
    );
    let refused = s.call(
        "ast_grep",
        json!({"pattern": "foo($A)", "paths": ["gone/"]}),
    );
    assert_eq!(refused["isError"], true, "{refused}");
    assert_eq!(error_json(&refused)["error"]["code"], "pathspec-no-match");
    s.finish();

    // The CLI takes the same input strictly: one pathspec naming nothing fails.
    let out = t.run(&["grep", "--json", "-p", "foo($A)", "src/", "gone/"]);
    out.assert_code(2);
    assert_eq!(out.json()["error"]["code"], "pathspec-no-match");
}
