//! `git astedit lsp` driven over stdio with raw JSON-RPC: diagnostics equal to `scan`'s
//! (UTF-16 columns), code actions whose edits are what `scan --apply` writes, stage-all
//! as a preview `list` sees, reloads, and garbage that must get an answer or nothing,
//! never a crash or a hang. (A real editor drives it in `lsp_nvim`.)

use std::io::BufRead;
use std::io::Read;
use std::io::Write;
use std::process::Child;
use std::process::ChildStdin;
use std::process::Stdio;
use std::sync::mpsc;
use std::time::Duration;

use serde_json::json;
use serde_json::Value;

use crate::util::TestRepo;

/// How long any one answer may take before the test fails (a hang is a failure).
const PATIENCE: Duration = Duration::from_secs(120);

/// A JSON-RPC client of the server process.
pub struct Client {
    child: Child,
    stdin: Option<ChildStdin>,
    incoming: mpsc::Receiver<Value>,
    /// Messages read while waiting for something else.
    held: Vec<Value>,
    pub next_id: i64,
}

impl Client {
    pub fn start(repo: &TestRepo, args: &[&str]) -> Client {
        let mut all = vec!["lsp"];
        all.extend_from_slice(args);
        Client::spawn(repo.command(".", &all))
    }

    /// Starts any language server (`cmd`, stdio).
    pub fn spawn(mut cmd: std::process::Command) -> Client {
        cmd.stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit());
        let mut child = cmd.spawn().expect("spawn lsp");
        let stdout = child.stdout.take().unwrap();
        let stdin = child.stdin.take();
        let (tx, incoming) = mpsc::channel();
        std::thread::spawn(move || {
            let mut r = std::io::BufReader::new(stdout);
            loop {
                let mut len = None;
                loop {
                    let mut line = String::new();
                    if r.read_line(&mut line).unwrap_or(0) == 0 {
                        return;
                    }
                    let line = line.trim_end();
                    if line.is_empty() {
                        break;
                    }
                    if let Some(v) = line.strip_prefix("Content-Length: ") {
                        len = v.parse::<usize>().ok();
                    }
                }
                let mut body = vec![0; len.expect("Content-Length")];
                if r.read_exact(&mut body).is_err() {
                    return;
                }
                let v: Value = serde_json::from_slice(&body).expect("server sent JSON");
                if tx.send(v).is_err() {
                    return;
                }
            }
        });
        Client {
            child,
            stdin,
            incoming,
            held: Vec::new(),
            next_id: 0,
        }
    }

    /// Starts the server and runs the handshake (`capabilities` as the client's).
    pub fn initialized(repo: &TestRepo, capabilities: Value) -> Client {
        let mut c = Client::start(repo, &[]);
        let root = format!("file://{}", repo.path().display());
        let r = c.request(
            "initialize",
            json!({
                "processId": null,
                "rootUri": root,
                "capabilities": capabilities,
                "clientInfo": {"name": "raw-test", "version": "1.0"},
            }),
        );
        assert!(r["result"]["capabilities"].is_object(), "{r}");
        c.notify("initialized", json!({}));
        c
    }

    pub fn send_bytes(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin.write_all(bytes).expect("write to server");
        stdin.flush().unwrap();
    }

    pub fn send(&mut self, msg: &Value) {
        let body = msg.to_string();
        let framed = format!("Content-Length: {}\r\n\r\n{body}", body.len());
        self.send_bytes(framed.as_bytes());
    }

    pub fn notify(&mut self, method: &str, params: Value) {
        self.send(&json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    /// Sends a request; returns its id.
    pub fn send_request(&mut self, method: &str, params: Value) -> i64 {
        self.next_id += 1;
        let id = self.next_id;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        id
    }

    /// A request and its response (the whole message).
    pub fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.send_request(method, params);
        self.wait(|m| m["id"] == json!(id) && m.get("method").is_none())
    }

    /// The first message (held or new) that `want` accepts.
    pub fn wait(&mut self, want: impl Fn(&Value) -> bool) -> Value {
        if let Some(i) = self.held.iter().position(&want) {
            return self.held.remove(i);
        }
        let deadline = std::time::Instant::now() + PATIENCE;
        loop {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            let m = match self.incoming.recv_timeout(left) {
                Ok(m) => m,
                Err(e) => panic!("no awaited message ({e:?}); held: {:#?}", self.held),
            };
            if want(&m) {
                return m;
            }
            self.held.push(m);
        }
    }

    /// The next diagnostics pushed for `uri`.
    pub fn diagnostics(&mut self, uri: &str) -> Vec<Value> {
        let m = self.wait(|m| {
            m["method"] == "textDocument/publishDiagnostics" && m["params"]["uri"] == uri
        });
        m["params"]["diagnostics"].as_array().unwrap().clone()
    }

    pub fn open(&mut self, uri: &str, language: &str, text: &str) {
        self.notify(
            "textDocument/didOpen",
            json!({"textDocument": {"uri": uri, "languageId": language, "version": 1, "text": text}}),
        );
    }

    /// Closes stdin and waits for the process; its exit code.
    pub fn close(mut self) -> i32 {
        drop(self.stdin.take());
        let deadline = std::time::Instant::now() + PATIENCE;
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status.code().unwrap_or(-1);
            }
            assert!(
                std::time::Instant::now() < deadline,
                "the server did not end after its stdin closed"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// `shutdown` then `exit`: the exit code.
    pub fn shutdown(mut self) -> i32 {
        let r = self.request("shutdown", Value::Null);
        assert_eq!(r["result"], Value::Null, "{r}");
        self.notify("exit", Value::Null);
        self.close()
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub fn uri(repo: &TestRepo, path: &str) -> String {
    format!("file://{}/{path}", repo.path().display())
}

/// A JavaScript project: a rule with a fix, note and url; a rule turned off; a rule
/// limited by `files`.
pub fn project() -> TestRepo {
    let repo = TestRepo::new();
    repo.write("sgconfig.yml", "ruleDirs: [rules]\n");
    repo.write(
        "rules/no-console.yml",
        "id: no-console\nlanguage: JavaScript\nseverity: warning\n\
         message: 'console.log of $A'\nnote: use the logger\n\
         url: https://example.com/rules/no-console\n\
         rule: {pattern: 'console.log($A)'}\nfix: 'logger.log($A)'\n",
    );
    repo.write(
        "rules/off.yml",
        "id: no-debugger\nlanguage: JavaScript\nseverity: off\nmessage: debugger\n\
         rule: {kind: debugger_statement}\n",
    );
    repo.write(
        "rules/var.yml",
        "id: no-var\nlanguage: JavaScript\nseverity: error\nmessage: no var\n\
         files: ['src/**']\nrule: {pattern: 'var $A = $B'}\nfix: 'let $A = $B'\n",
    );
    repo.write("src/a.js", "var x = 1;\n");
    repo.commit_all("project");
    repo
}

/// The text both the editor and the disk hold in [`diagnostics_are_what_scan_reports`]:
/// emoji (two UTF-16 units) and CJK (one) before the matches, a suppressed finding.
const TEXT: &str = "var s = \"😀漢字\"; console.log(s);\n\
                    // ast-grep-ignore: no-console\n\
                    console.log(2);\n\
                    debugger;\n\
                    var t = 1;\n";

/// The UTF-16 column of a 1-based character column of `line` (1-based) in `text`.
fn utf16(text: &str, line: usize, column: usize) -> u64 {
    let l = text.lines().nth(line - 1).unwrap_or("");
    l.chars()
        .take(column - 1)
        .map(char::len_utf16)
        .sum::<usize>() as u64
}

#[test]
fn diagnostics_are_what_scan_reports() {
    let repo = project();
    // On disk for `scan`; the editor's copy is opened from memory (below, it differs
    // from the disk's first, then is changed to match).
    repo.write("src/b.js", TEXT);
    let scan = repo.run(&["--json", "scan"]).json();
    let expected: Vec<Value> = scan["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["path"] == "src/b.js")
        .map(|f| {
            let n = |k: &str| f[k].as_u64().unwrap() as usize;
            json!({
                "code": f["rule"],
                "message": f["message"],
                "range": {
                    "start": {"line": n("line") - 1, "character": utf16(TEXT, n("line"), n("column"))},
                    "end": {"line": n("end_line") - 1, "character": utf16(TEXT, n("end_line"), n("end_column"))},
                },
                "severity": match f["severity"].as_str().unwrap() {
                    "error" => 1, "warning" => 2, "info" => 3, _ => 4,
                },
            })
        })
        .collect();
    assert_eq!(expected.len(), 3, "{scan:#}");

    let mut c = Client::initialized(&repo, json!({}));
    let b = uri(&repo, "src/b.js");
    c.open(&b, "javascript", "let nothing = 0;\n");
    assert_eq!(c.diagnostics(&b), Vec::<Value>::new());
    // An incremental change: the whole old line replaced by the text.
    c.notify(
        "textDocument/didChange",
        json!({
            "textDocument": {"uri": b, "version": 2},
            "contentChanges": [{"range": {"start": {"line": 0, "character": 0}, "end": {"line": 1, "character": 0}}, "text": TEXT}],
        }),
    );
    let got = c.diagnostics(&b);
    let shape: Vec<Value> = got
        .iter()
        .map(|d| {
            json!({"code": d["code"], "message": d["message"], "range": d["range"], "severity": d["severity"]})
        })
        .collect();
    assert_eq!(shape, expected);
    // The console.log after the emoji: character 16 counts 😀 as two units (it is
    // the 16th character).
    assert_eq!(got[1]["range"]["start"]["character"], 16, "{got:#?}");
    assert_eq!(got[1]["source"], "git-astedit");
    assert_eq!(
        got[1]["codeDescription"]["href"],
        "https://example.com/rules/no-console"
    );
    assert_eq!(got[1]["relatedInformation"][0]["message"], "use the logger");
    // `files: [src/**]` leaves a file outside src alone; so does no language.
    let top = uri(&repo, "top.js");
    c.open(&top, "javascript", "var y = 2;\n");
    let top_diags = c.diagnostics(&top);
    assert!(
        top_diags.iter().all(|d| d["code"] != "no-var"),
        "{top_diags:#?}"
    );
    let txt = uri(&repo, "notes.unknownlang");
    c.open(&txt, "plaintext", "console.log(1)\n");
    assert_eq!(c.diagnostics(&txt), Vec::<Value>::new());
    assert_eq!(c.shutdown(), 0);
}

#[test]
fn pulled_diagnostics_equal_pushed_ones() {
    let repo = project();
    let mut c = Client::initialized(
        &repo,
        json!({"textDocument": {"diagnostic": {"dynamicRegistration": false}}}),
    );
    let b = uri(&repo, "src/b.js");
    c.open(&b, "javascript", TEXT);
    let r = c.request(
        "textDocument/diagnostic",
        json!({"textDocument": {"uri": b}}),
    );
    let items = r["result"]["items"].as_array().unwrap();
    assert_eq!(r["result"]["kind"], "full");
    let codes: Vec<&str> = items.iter().map(|d| d["code"].as_str().unwrap()).collect();
    assert_eq!(codes, ["no-var", "no-console", "no-var"]);
    let w = c.request("workspace/diagnostic", json!({"previousResultIds": []}));
    assert_eq!(w["result"]["items"][0]["uri"], b);
    assert_eq!(
        w["result"]["items"][0]["items"].as_array().unwrap().len(),
        3
    );
    assert_eq!(c.shutdown(), 0);
}

/// Applies LSP text edits (ranges in UTF-16 units) to `text`.
pub fn apply_edits(text: &str, edits: &[Value]) -> String {
    let offset = |p: &Value| -> usize {
        let line = p["line"].as_u64().unwrap() as usize;
        let character = p["character"].as_u64().unwrap() as usize;
        let start: usize = text.split_inclusive('\n').take(line).map(str::len).sum();
        let mut units = 0;
        for (i, ch) in text[start..].char_indices() {
            if units >= character || ch == '\n' {
                return start + i;
            }
            units += ch.len_utf16();
        }
        text.len()
    };
    let mut spans: Vec<(usize, usize, &str)> = edits
        .iter()
        .map(|e| {
            (
                offset(&e["range"]["start"]),
                offset(&e["range"]["end"]),
                e["newText"].as_str().unwrap(),
            )
        })
        .collect();
    spans.sort_by_key(|s| std::cmp::Reverse(s.0));
    let mut out = text.to_string();
    for (s, e, t) in spans {
        out.replace_range(s..e, t);
    }
    out
}

fn code_actions(c: &mut Client, uri: &str, line: u64, only: Option<&[&str]>) -> Vec<Value> {
    let mut context = json!({"diagnostics": []});
    if let Some(only) = only {
        context["only"] = json!(only);
    }
    let r = c.request(
        "textDocument/codeAction",
        json!({
            "textDocument": {"uri": uri},
            "range": {"start": {"line": line, "character": 0}, "end": {"line": line, "character": 999}},
            "context": context,
        }),
    );
    r["result"].as_array().unwrap().clone()
}

#[test]
fn code_actions_make_what_scan_apply_writes() {
    let repo = project();
    // Two findings of no-console and two of no-var; expandEnd takes the `;` too.
    repo.write(
        "rules/semi.yml",
        "id: drop-alert\nlanguage: JavaScript\nseverity: hint\nmessage: no alert\n\
         rule: {pattern: 'alert($A)'}\nfix: {template: '', expandEnd: {regex: ';'}}\n",
    );
    let text = "var a = \"漢😀\"; console.log(a); alert(1);\nconsole.log(2);\nvar b = 2;\n";
    repo.write("src/c.js", text);
    repo.commit_all("c");
    let mut c = Client::initialized(&repo, json!({}));
    let u = uri(&repo, "src/c.js");
    c.open(&u, "javascript", text);
    assert_eq!(c.diagnostics(&u).len(), 5);

    let actions = code_actions(&mut c, &u, 0, Some(&["quickfix"]));
    let titles: Vec<&str> = actions
        .iter()
        .map(|a| a["title"].as_str().unwrap())
        .collect();
    assert!(
        titles.contains(&"Fix all `no-console` in this file (2)"),
        "{titles:#?}"
    );
    let edits = |a: &Value| a["edit"]["changes"][&u].as_array().unwrap().clone();
    let one = actions
        .iter()
        .find(|a| a["title"].as_str().unwrap().starts_with("Fix `drop-alert`"))
        .unwrap();
    assert_eq!(
        apply_edits(text, &edits(one)),
        "var a = \"漢😀\"; console.log(a); \nconsole.log(2);\nvar b = 2;\n"
    );
    let one = actions
        .iter()
        .find(|a| a["title"].as_str().unwrap().starts_with("Fix `no-console`"))
        .unwrap();
    assert_eq!(one["diagnostics"][0]["code"], "no-console");
    assert_eq!(
        apply_edits(text, &edits(one)),
        "var a = \"漢😀\"; logger.log(a); alert(1);\nconsole.log(2);\nvar b = 2;\n"
    );
    let all_rule = actions
        .iter()
        .find(|a| a["title"] == "Fix all `no-console` in this file (2)")
        .unwrap();
    assert_eq!(
        apply_edits(text, &edits(all_rule)),
        "var a = \"漢😀\"; logger.log(a); alert(1);\nlogger.log(2);\nvar b = 2;\n"
    );

    // source.fixAll.astedit: the text `scan --apply` writes.
    let fix_all = code_actions(&mut c, &u, 0, Some(&["source.fixAll"]));
    assert_eq!(fix_all.len(), 1, "{fix_all:#?}");
    let fixed = apply_edits(text, &edits(&fix_all[0]));
    repo.run(&["scan", "--apply"]).assert_code(1);
    assert_eq!(fixed, repo.read_string("src/c.js"));
    assert_eq!(c.shutdown(), 0);
}

#[test]
fn stage_all_is_a_preview_list_sees_with_apply_and_undo() {
    let repo = project();
    repo.write("src/d.js", "console.log(1);\n");
    repo.commit_all("d");
    let mut c = Client::initialized(&repo, json!({}));
    let u = uri(&repo, "src/d.js");
    c.open(&u, "javascript", "console.log(1);\n");
    c.diagnostics(&u);
    let actions = code_actions(&mut c, &u, 0, None);
    let stage = actions
        .iter()
        .find(|a| a["command"]["command"] == "astedit.stageAll")
        .expect("stage-all offered");
    let r = c.request(
        "workspace/executeCommand",
        json!({"command": "astedit.stageAll", "arguments": stage["command"]["arguments"]}),
    );
    let id = r["result"]["id"]
        .as_str()
        .expect("a preview id")
        .to_string();
    assert_eq!(r["result"]["summary"], "2 fixes in 2 files");
    let list = repo.run(&["--json", "list"]).json();
    assert!(list.to_string().contains(&id), "{list:#}");
    // The preview's actions are offered now; apply it.
    let actions = code_actions(&mut c, &u, 0, Some(&["source"]));
    let apply = actions
        .iter()
        .find(|a| a["command"]["command"] == "astedit.apply")
        .expect("apply offered");
    assert_eq!(apply["command"]["arguments"][0], id.as_str());
    let r = c.request(
        "workspace/executeCommand",
        json!({"command": "astedit.apply", "arguments": [id]}),
    );
    assert!(r["result"].is_object(), "{r}");
    assert_eq!(repo.read_string("src/d.js"), "logger.log(1);\n");
    // (The match is the whole declaration, `;` included, as in ast-grep.)
    assert_eq!(repo.read_string("src/a.js"), "let x = 1\n");
    let r = c.request(
        "workspace/executeCommand",
        json!({"command": "astedit.undo", "arguments": []}),
    );
    assert!(r["result"].is_object(), "{r}");
    assert_eq!(repo.read_string("src/d.js"), "console.log(1);\n");
    // The journal names the editor.
    let log = repo.run(&["--json", "log"]).json().to_string();
    assert!(log.contains("raw-test/1.0"), "{log}");
    // Nothing pending: discard of the newest of this session fails with a message.
    let r = c.request(
        "workspace/executeCommand",
        json!({"command": "astedit.nope", "arguments": []}),
    );
    assert!(r["error"]["message"].is_string(), "{r}");
    assert_eq!(c.shutdown(), 0);
}

#[test]
fn a_broken_rule_file_is_a_diagnostic_and_the_old_rules_keep_serving() {
    let repo = project();
    let mut c = Client::initialized(&repo, json!({}));
    let u = uri(&repo, "src/e.js");
    c.open(&u, "javascript", "console.log(1);\n");
    assert_eq!(c.diagnostics(&u).len(), 1);
    repo.write(
        "rules/no-console.yml",
        "id: no-console\nlanguage: JavaScript\nrule: {patern: 'console.log($A)'}\n",
    );
    let rule_uri = uri(&repo, "rules/no-console.yml");
    c.notify(
        "textDocument/didSave",
        json!({"textDocument": {"uri": rule_uri}}),
    );
    let broken = c.diagnostics(&rule_uri);
    assert_eq!(broken.len(), 1, "{broken:#?}");
    assert_eq!(broken[0]["severity"], 1);
    assert!(
        broken[0]["message"]
            .as_str()
            .unwrap()
            .contains("no-console"),
        "{broken:#?}"
    );
    // The document is checked again, with the rules that loaded before.
    assert_eq!(c.diagnostics(&u).len(), 1);
    // Repaired (a watched-file change this time): the diagnostic goes, and the new
    // rule (an error now) is used.
    repo.write(
        "rules/no-console.yml",
        "id: no-console\nlanguage: JavaScript\nseverity: error\nmessage: m\n\
         rule: {pattern: 'console.log($A)'}\n",
    );
    c.notify(
        "workspace/didChangeWatchedFiles",
        json!({"changes": [{"uri": rule_uri, "type": 2}]}),
    );
    assert_eq!(c.diagnostics(&rule_uri), Vec::<Value>::new());
    let d = c.diagnostics(&u);
    assert_eq!(d[0]["severity"], 1, "{d:#?}");
    // Hover on the finding: message, note-less rule, no fix.
    let h = c.request(
        "textDocument/hover",
        json!({"textDocument": {"uri": u}, "position": {"line": 0, "character": 3}}),
    );
    let value = h["result"]["contents"]["value"].as_str().unwrap();
    assert!(value.contains("**no-console** (error): m"), "{value}");
    assert_eq!(c.shutdown(), 0);
}

#[test]
fn hover_shows_message_note_and_fix() {
    let repo = project();
    let mut c = Client::initialized(&repo, json!({}));
    let u = uri(&repo, "src/f.js");
    c.open(&u, "javascript", "console.log(7);\n");
    c.diagnostics(&u);
    let h = c.request(
        "textDocument/hover",
        json!({"textDocument": {"uri": u}, "position": {"line": 0, "character": 1}}),
    );
    let value = h["result"]["contents"]["value"].as_str().unwrap();
    assert!(value.contains("console.log of 7"), "{value}");
    assert!(value.contains("use the logger"), "{value}");
    assert!(value.contains("logger.log(7)"), "{value}");
    assert!(
        value.contains("https://example.com/rules/no-console"),
        "{value}"
    );
    let none = c.request(
        "textDocument/hover",
        json!({"textDocument": {"uri": u}, "position": {"line": 5, "character": 0}}),
    );
    assert_eq!(none["result"], Value::Null);
    assert_eq!(c.shutdown(), 0);
}

#[test]
fn garbage_gets_an_error_or_nothing_and_the_server_goes_on() {
    let repo = project();
    let mut c = Client::start(&repo, &[]);
    // Before initialize: refused, not crashed.
    let r = c.request("textDocument/hover", json!({}));
    assert_eq!(r["error"]["code"], -32002, "{r}");
    // Not JSON.
    c.send_bytes(b"Content-Length: 9\r\n\r\n{not json");
    let r = c.wait(|m| m["error"]["code"] == -32700);
    assert_eq!(r["id"], Value::Null);
    // JSON, but no message.
    c.send(&json!({"jsonrpc": "2.0", "id": 77, "bogus": true}));
    let r = c.wait(|m| m["id"] == 77);
    assert_eq!(r["error"]["code"], -32600, "{r}");
    // A header block without Content-Length, then stray text.
    c.send_bytes(b"X-Nothing: 1\r\n\r\n");
    c.wait(|m| m["error"]["code"] == -32700);
    c.send_bytes(b"hello there\r\n\r\n");
    c.wait(|m| m["error"]["code"] == -32700);
    // Still serving: the handshake works.
    let root = format!("file://{}", repo.path().display());
    let r = c.request(
        "initialize",
        json!({"processId": null, "rootUri": root, "capabilities": {}}),
    );
    assert!(
        r["result"]["capabilities"]["codeActionProvider"].is_object(),
        "{r}"
    );
    c.notify("initialized", json!({}));
    // Unknown methods: an error for a request, nothing for a notification.
    let r = c.request("astedit/unknown", json!({}));
    assert_eq!(r["error"]["code"], -32601, "{r}");
    c.notify("astedit/unknownNotification", json!({"x": 1}));
    // Bad params.
    let r = c.request("textDocument/codeAction", json!({"textDocument": 3}));
    assert_eq!(r["error"]["code"], -32602, "{r}");
    // A change to a document never opened, a close of one never opened.
    c.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": "file:///nowhere/x.js", "version": 2}, "contentChanges": [{"text": "x"}]}),
    );
    // A request cancelled before its turn: answered as cancelled (or answered, if it
    // ran first), never left without an answer.
    c.notify("$/cancelRequest", json!({"id": 1000}));
    c.next_id = 999;
    let r = c.request("workspace/diagnostic", json!({"previousResultIds": []}));
    assert_eq!(r["error"]["code"], -32800, "{r}");
    // A 10 MB document: over the size bound scan has, so one diagnostic says it is
    // not checked (input_bounds.rs), and the server stays.
    let big_uri = uri(&repo, "src/big.js");
    let line = "const a = [1, 2, 3].map((x) => x * 2);\n";
    let mut big = line.repeat(10 * 1024 * 1024 / line.len());
    big.push_str("console.log(a);\n");
    c.open(&big_uri, "javascript", &big);
    let d = c.diagnostics(&big_uri);
    assert_eq!(d.len(), 1);
    assert_eq!(d[0]["code"], "file-too-large", "{:#}", d[0]);
    let last = 0;
    assert_eq!(d[0]["range"]["start"]["line"], last);
    // Over the message limit: refused, read past.
    let huge = vec![b' '; 65 * 1024 * 1024];
    c.send_bytes(format!("Content-Length: {}\r\n\r\n", huge.len()).as_bytes());
    c.send_bytes(&huge);
    let r = c.wait(|m| m["error"]["code"] == -32600 && m["id"].is_null());
    assert!(r["error"]["message"].as_str().unwrap().contains("limit"));
    let r = c.request(
        "textDocument/hover",
        json!({"textDocument": {"uri": big_uri}, "position": {"line": last, "character": 0}}),
    );
    assert!(r["result"]["contents"]["value"].is_string(), "{r}");
    assert_eq!(c.shutdown(), 0);
}

#[test]
fn a_client_that_dies_ends_the_server() {
    let repo = project();
    let mut c = Client::initialized(&repo, json!({}));
    let u = uri(&repo, "src/g.js");
    c.open(&u, "javascript", "console.log(1);\n");
    c.diagnostics(&u);
    // Half a message, then the end of stdin: no hang.
    c.send_bytes(b"Content-Length: 100\r\n\r\n{\"jsonrpc\"");
    c.close();
}

#[test]
fn outside_a_repository_it_fails_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let out = std::process::Command::new(crate::util::bin())
        .arg("lsp")
        .current_dir(dir.path())
        .env("GIT_CEILING_DIRECTORIES", dir.path().parent().unwrap())
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_ne!(out.status.code(), Some(0));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("not a git repository"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn a_rules_labels_are_related_information_where_they_point() {
    let repo = project();
    repo.write(
        "rules/labelled.yml",
        "id: labelled\nlanguage: JavaScript\nseverity: info\nmessage: alert\n\
         rule: {pattern: 'alert($A)'}\n\
         labels:\n  A:\n    style: secondary\n    message: the alerted value\n",
    );
    let mut c = Client::initialized(&repo, json!({}));
    let u = uri(&repo, "src/h.js");
    c.open(&u, "javascript", "let 漢 = 1; alert(漢);\n");
    let d = c.diagnostics(&u);
    let labelled = d.iter().find(|d| d["code"] == "labelled").unwrap();
    assert_eq!(
        labelled["relatedInformation"],
        json!([{
            "location": {"uri": u, "range": {"start": {"line": 0, "character": 17}, "end": {"line": 0, "character": 18}}},
            "message": "the alerted value",
        }])
    );
    assert_eq!(c.shutdown(), 0);
}

#[test]
fn a_file_scan_leaves_out_gets_no_diagnostics_and_no_actions() {
    let repo = project();
    repo.write(".gitignore", "build/\n");
    let text = "console.log(1);\n";
    repo.write("build/out.js", text);
    repo.write("src/kept.js", text);
    repo.commit_all("ignore build");
    // `scan` agrees: the finding in src/kept.js, none in the ignored build/.
    let scan = repo.run(&["--json", "scan"]).json();
    let paths: Vec<&str> = scan["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|f| f["path"].as_str())
        .collect();
    assert!(paths.contains(&"src/kept.js"), "{scan:#}");
    assert!(!paths.iter().any(|p| p.starts_with("build/")), "{scan:#}");

    let mut c = Client::initialized(&repo, json!({}));
    let ignored = uri(&repo, "build/out.js");
    c.open(&ignored, "javascript", text);
    assert_eq!(c.diagnostics(&ignored), Vec::<Value>::new());
    assert_eq!(code_actions(&mut c, &ignored, 0, None), Vec::<Value>::new());
    // An unsaved buffer under the ignored folder: left out as well.
    let unsaved = uri(&repo, "build/new/later.js");
    c.open(&unsaved, "javascript", text);
    assert_eq!(c.diagnostics(&unsaved), Vec::<Value>::new());
    // Outside the repository.
    let elsewhere = crate::util::TestRepo::new();
    let outside = format!("file://{}/o.js", elsewhere.path().display());
    c.open(&outside, "javascript", text);
    assert_eq!(c.diagnostics(&outside), Vec::<Value>::new());
    assert_eq!(code_actions(&mut c, &outside, 0, None), Vec::<Value>::new());
    // The same text in a tracked file: its finding and quick fix.
    let kept = uri(&repo, "src/kept.js");
    c.open(&kept, "javascript", text);
    let got = c.diagnostics(&kept);
    assert_eq!(got.len(), 1, "{got:#?}");
    assert_eq!(got[0]["code"], "no-console");
    let actions = code_actions(&mut c, &kept, 0, Some(&["quickfix"]));
    assert!(!actions.is_empty(), "{actions:#?}");
    assert_eq!(c.shutdown(), 0);
}
