//! Integration test: the official MCP TypeScript SDK client (from npm) drives
//! `git astedit mcp`, and every tool's schemas compile under Ajv 2020 strict mode
//! (tests/js/client.mjs has the checks).
//!
//! Skipped, with the reason printed, when node or npm is missing or the npm registry
//! cannot be reached: no network must not fail CI. When the script ran, any failed
//! check fails this test.

use std::path::Path;
use std::path::PathBuf;
use std::process::Command;
use std::process::Stdio;
use std::time::Duration;

use crate::util::TestRepo;

fn js_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/js")
}

/// Runs `cmd` to its end or until `limit` passes (then kills it: `None`).
fn run_for(mut cmd: Command, limit: Duration) -> Option<std::process::Output> {
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .ok()?;
    // Drain both pipes on threads so a chatty child cannot block on a full pipe.
    let mut out = child.stdout.take()?;
    let mut err = child.stderr.take()?;
    let out = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = std::io::Read::read_to_end(&mut out, &mut v);
        v
    });
    let err = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = std::io::Read::read_to_end(&mut err, &mut v);
        v
    });
    let step = Duration::from_millis(50);
    let mut waited = Duration::ZERO;
    let status = loop {
        if let Ok(Some(status)) = child.try_wait() {
            break status;
        }
        if waited >= limit {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        std::thread::sleep(step);
        waited += step;
    };
    Some(std::process::Output {
        status,
        stdout: out.join().unwrap_or_default(),
        stderr: err.join().unwrap_or_default(),
    })
}

fn version_of(program: &str) -> Option<String> {
    let out = Command::new(program).arg("--version").output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// What npm says when it cannot reach the registry.
fn looks_offline(stderr: &str) -> bool {
    [
        "ENOTFOUND",
        "EAI_AGAIN",
        "ECONNREFUSED",
        "ECONNRESET",
        "ETIMEDOUT",
        "ENETUNREACH",
        "EHOSTUNREACH",
        "network",
        "request to http",
        "proxy",
    ]
    .iter()
    .any(|s| stderr.contains(s))
}

/// `npm ci` into tests/js/node_modules unless it is installed from the current
/// lock file already. `Err(reason)` means skip.
fn install(dir: &Path) -> Result<(), String> {
    let lock = dir.join("package-lock.json");
    let installed = dir.join("node_modules/.package-lock.json");
    let modified = |p: &Path| std::fs::metadata(p).and_then(|m| m.modified()).ok();
    if let (Some(i), Some(l)) = (modified(&installed), modified(&lock)) {
        if i >= l {
            return Ok(());
        }
    }
    let mut cmd = Command::new("npm");
    cmd.args(["ci", "--no-audit", "--no-fund"]).current_dir(dir);
    let Some(out) = run_for(cmd, Duration::from_secs(300)) else {
        return Err("`npm ci` did not finish in 5 minutes (is the npm registry reachable?)".into());
    };
    if out.status.success() {
        return Ok(());
    }
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    if looks_offline(&stderr) {
        return Err(format!(
            "the npm registry is unreachable: {}",
            stderr.lines().find(|l| !l.trim().is_empty()).unwrap_or("")
        ));
    }
    panic!("`npm ci` in {} failed:\n{stderr}", dir.display());
}

/// tests/js with its packages installed, or why the node tests are skipped.
fn node_ready() -> Result<PathBuf, String> {
    let Some(node) = version_of("node") else {
        return Err("node is not installed (the client tests need node >= 18 and npm)".into());
    };
    let major: u32 = node
        .trim_start_matches('v')
        .split('.')
        .next()
        .and_then(|m| m.parse().ok())
        .unwrap_or(0);
    if major < 18 {
        return Err(format!(
            "node {node} is older than 18, which the MCP TypeScript SDK needs"
        ));
    }
    if version_of("npm").is_none() {
        return Err("npm is not installed (needed to install the client libraries)".into());
    }
    let dir = js_dir();
    // Both node tests call this at once on the test threads: two `npm ci` in one
    // folder delete each other's files, so one installs while the other waits.
    static INSTALL: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _turn = INSTALL
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    install(&dir)?;
    Ok(dir)
}

#[test]
fn typescript_sdk_client_and_ajv_strict_schemas() {
    let dir = match node_ready() {
        Ok(dir) => dir,
        Err(reason) => {
            println!("skipped: {reason}");
            return;
        }
    };

    let t = TestRepo::new();
    t.write("src/a.rs", "fn main() { foo(1); foo(2); }\n");
    t.write("src/b.rs", "fn b() { foo(3); }\n");
    t.commit_all("init");
    let mut cmd = Command::new("node");
    t.env(&mut cmd);
    cmd.arg(dir.join("client.mjs"))
        .current_dir(&dir)
        .env("ASTEDIT_BIN", crate::util::bin())
        .env("ASTEDIT_REPO", t.path());
    let out = run_for(cmd, Duration::from_secs(120)).expect("client.mjs finished within 2 minutes");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "client.mjs failed ({})\n--- stdout ---\n{stdout}\n--- stderr ---\n{stderr}",
        out.status
    );
    assert!(stdout.contains("checks passed"), "{stdout}");
    println!("{}", stdout.trim());
}

/// VS Code's protocol library (`vscode-languageserver-protocol`) drives `git astedit
/// lsp`: tests/js/lsp-client.mjs has the checks.
#[test]
fn vscode_protocol_client_drives_the_language_server() {
    let dir = match node_ready() {
        Ok(dir) => dir,
        Err(reason) => {
            println!("skipped: {reason}");
            return;
        }
    };
    let t = crate::lsp::project();
    t.write("src/a.js", "console.log(1);\n");
    t.commit_all("a");
    let mut cmd = Command::new("node");
    t.env(&mut cmd);
    cmd.arg(dir.join("lsp-client.mjs"))
        .current_dir(&dir)
        .env("ASTEDIT_BIN", crate::util::bin())
        .env("ASTEDIT_REPO", t.path());
    let out =
        run_for(cmd, Duration::from_secs(120)).expect("lsp-client.mjs finished within 2 minutes");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "lsp-client.mjs failed ({})\n--- stdout ---\n{stdout}\n--- stderr ---\n{stderr}",
        out.status
    );
    assert!(stdout.contains("lsp checks passed"), "{stdout}");
    println!("{}", stdout.trim());
}
