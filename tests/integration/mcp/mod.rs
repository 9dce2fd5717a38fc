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

mod lifecycle;
mod pr;
mod protocol;
mod resolve;
mod search;

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

fn ts_repo() -> TestRepo {
    let t = TestRepo::new();
    t.write("src/a.ts", "const r = foo(1);\n");
    t.write("src/lib/deep/b.ts", "foo(2);\nfoo(3);\n");
    t.write("src/c.js", "foo(4);\n");
    t.write("top.ts", "foo(5);\n");
    t.commit_all("init");
    t
}
