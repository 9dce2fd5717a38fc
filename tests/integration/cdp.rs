//! Headless Chromium driven over the DevTools protocol, for the pages the tests open
//! (the campaign status page, the review page).
//!
//! No websocket: `--remote-debugging-pipe` makes Chromium read commands on its fd 3
//! and write answers and events on its fd 4, each a JSON object ending in a NUL
//! byte. A shell puts the child's piped stdin and stdout there. `.ci/run` installs
//! Chromium and sets ASTEDIT_REQUIRE_CHROMIUM=1; elsewhere the tests are skipped
//! without it.

#![allow(dead_code)]

use std::io::BufRead as _;
use std::io::BufReader;
use std::io::Write as _;
use std::path::Path;
use std::path::PathBuf;
use std::process::Child;
use std::process::ChildStdin;
use std::process::Command;
use std::process::Stdio;
use std::sync::mpsc::Receiver;
use std::time::Duration;

use serde_json::json;
use serde_json::Value;

/// Debian's `chromium` (or another name for it) when installed.
pub fn chromium() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    ["chromium", "chromium-browser", "google-chrome"]
        .iter()
        .flat_map(|name| std::env::split_paths(&path).map(move |d| d.join(name)))
        .find(|p| p.is_file())
}

/// Chromium's path, or `None` (the test then returns) when it is not installed and
/// not required.
pub fn chromium_or_skip() -> Option<PathBuf> {
    let found = chromium();
    if found.is_none() {
        assert!(
            std::env::var_os("ASTEDIT_REQUIRE_CHROMIUM").is_none(),
            "chromium is required but not on PATH"
        );
        eprintln!("skipped: no chromium on PATH");
    }
    found
}

/// The flags every headless run here takes (a profile of its own under `home`).
pub fn headless_args(home: &Path) -> Vec<String> {
    vec![
        "--headless".into(),
        "--no-sandbox".into(),
        "--disable-gpu".into(),
        "--disable-dev-shm-usage".into(),
        "--no-first-run".into(),
        format!(
            "--user-data-dir={}",
            home.join("chromium-profile").display()
        ),
    ]
}

/// How long one protocol answer may take before the test gives up (a hang guard,
/// not a measurement).
const ANSWER: Duration = Duration::from_secs(60);

/// One browser with one page attached.
pub struct Browser {
    child: Child,
    commands: ChildStdin,
    messages: Receiver<Value>,
    next: u64,
    session: String,
}

impl Browser {
    /// Starts Chromium with `home` as its HOME and profile, and opens a blank page.
    pub fn start(chromium: &Path, home: &Path) -> Browser {
        let mut child = Command::new("sh")
            .arg("-c")
            .arg("exec \"$0\" \"$@\" 3<&0 4>&1 </dev/null >/dev/null")
            .arg(chromium)
            .args(headless_args(home))
            .arg("--remote-debugging-pipe")
            .arg("about:blank")
            .env("HOME", home)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start chromium");
        let commands = child.stdin.take().expect("stdin");
        let out = child.stdout.take().expect("stdout");
        let (tx, messages) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut reader = BufReader::new(out);
            loop {
                let mut buf = Vec::new();
                match reader.read_until(0, &mut buf) {
                    Ok(0) | Err(_) => return,
                    Ok(_) => {}
                }
                buf.pop();
                if let Ok(v) = serde_json::from_slice::<Value>(&buf) {
                    if tx.send(v).is_err() {
                        return;
                    }
                }
            }
        });
        let mut browser = Browser {
            child,
            commands,
            messages,
            next: 0,
            session: String::new(),
        };
        let target = browser.browser_call("Target.createTarget", json!({"url": "about:blank"}));
        let target = target["targetId"].as_str().expect("targetId").to_string();
        let attached = browser.browser_call(
            "Target.attachToTarget",
            json!({"targetId": target, "flatten": true}),
        );
        browser.session = attached["sessionId"]
            .as_str()
            .expect("sessionId")
            .to_string();
        browser.call("Page.enable", json!({}));
        browser.call("Runtime.enable", json!({}));
        browser
    }

    fn send(&mut self, mut message: Value) -> Value {
        self.next += 1;
        let id = self.next;
        message["id"] = json!(id);
        let mut bytes = serde_json::to_vec(&message).expect("json");
        bytes.push(0);
        self.commands.write_all(&bytes).expect("write to chromium");
        loop {
            let m = self
                .messages
                .recv_timeout(ANSWER)
                .unwrap_or_else(|e| panic!("no answer to {message}: {e}"));
            if m["id"] == json!(id) {
                assert!(m.get("error").is_none(), "{message} failed: {m}");
                return m["result"].clone();
            }
        }
    }

    /// A browser-wide command.
    pub fn browser_call(&mut self, method: &str, params: Value) -> Value {
        self.send(json!({"method": method, "params": params}))
    }

    /// A command to the page.
    pub fn call(&mut self, method: &str, params: Value) -> Value {
        let session = self.session.clone();
        self.send(json!({"method": method, "params": params, "sessionId": session}))
    }

    /// Loads `url` and waits until the document has loaded.
    pub fn navigate(&mut self, url: &str) {
        self.call("Page.navigate", json!({"url": url}));
        self.wait_for("document.readyState === 'complete'");
    }

    /// The value of a JavaScript expression (promises awaited).
    pub fn eval(&mut self, expression: &str) -> Value {
        let r = self.call(
            "Runtime.evaluate",
            json!({"expression": expression, "returnByValue": true, "awaitPromise": true}),
        );
        assert!(
            r.get("exceptionDetails").is_none(),
            "{expression} threw: {r}"
        );
        r["result"]["value"].clone()
    }

    /// Waits until `expression` is true (polling; a hang guard of a few minutes).
    #[track_caller]
    pub fn wait_for(&mut self, expression: &str) {
        for _ in 0..1200 {
            if self.eval(expression) == json!(true) {
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        let body = self.eval("document.body ? document.body.innerText : ''");
        panic!("never true: {expression}\npage:\n{body}");
    }

    /// Presses a key as a person would: keydown (with its text) and keyup.
    pub fn key(&mut self, key: &str) {
        let (code, text, vk) = match key {
            "Enter" => ("Enter".to_string(), "\r".to_string(), 13),
            k => (
                format!("Key{}", k.to_ascii_uppercase()),
                k.to_string(),
                k.to_ascii_uppercase().bytes().next().map_or(0, i64::from),
            ),
        };
        for kind in ["keyDown", "keyUp"] {
            let mut p = json!({"type": kind, "key": key, "code": code,
                               "windowsVirtualKeyCode": vk});
            if kind == "keyDown" {
                p["text"] = json!(text);
            }
            self.call("Input.dispatchKeyEvent", p);
        }
    }

    /// The browser's cookies (HttpOnly ones included).
    pub fn cookies(&mut self) -> Vec<Value> {
        let r = self.browser_call("Storage.getCookies", json!({}));
        r["cookies"].as_array().cloned().unwrap_or_default()
    }

    /// A PNG of the page at `width`×`height` CSS pixels.
    pub fn screenshot(&mut self, width: u32, height: u32) -> Vec<u8> {
        self.call(
            "Emulation.setDeviceMetricsOverride",
            json!({"width": width, "height": height, "deviceScaleFactor": 1, "mobile": false}),
        );
        let r = self.call("Page.captureScreenshot", json!({"format": "png"}));
        base64(r["data"].as_str().expect("data"))
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn base64(s: &str) -> Vec<u8> {
    let val = |c: u8| match c {
        b'A'..=b'Z' => c - b'A',
        b'a'..=b'z' => c - b'a' + 26,
        b'0'..=b'9' => c - b'0' + 52,
        b'+' => 62,
        _ => 63,
    };
    let bytes: Vec<u8> = s.bytes().filter(|&c| c != b'=').map(val).collect();
    bytes
        .chunks(4)
        .flat_map(|c| {
            let n = c
                .iter()
                .enumerate()
                .fold(0u32, |n, (i, &v)| n | (u32::from(v) << (18 - 6 * i)));
            let out = [(n >> 16) as u8, (n >> 8) as u8, n as u8];
            out.into_iter().take(c.len().saturating_sub(1))
        })
        .collect()
}

#[test]
fn base64_decodes() {
    assert_eq!(base64("aGVsbG8="), b"hello");
    assert_eq!(base64("aGk="), b"hi");
    assert_eq!(base64("YWJj"), b"abc");
}
