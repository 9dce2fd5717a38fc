//! Integration tests: `refresh` (a stale preview re-derived as a successor, journal
//! event `refreshed`), `apply --refresh` (the DSH rule), and the journal chain of one
//! change through refresh, split, apply and undo.

use crate::util::log_events;
use crate::util::TestRepo;

mod merge;
mod scope;

/// The source of file `n` of the 50-file tree: a helper, then a function calling
/// `foo(n, k)` on line 6.
fn source(n: usize) -> String {
    format!(
        "function helper{n}() {{\n  return 1;\n}}\n\nfunction main{n}() {{\n  foo({n}, k);\n  return helper{n}();\n}}\n"
    )
}

fn path(n: usize) -> String {
    format!("src/f{n:02}.js")
}

/// 50 committed files and a pending preview swapping `foo`'s arguments in each.
fn fifty() -> (TestRepo, String) {
    let repo = TestRepo::new();
    for n in 0..50 {
        repo.write(&path(n), source(n));
    }
    repo.commit_all("fifty files");
    let out = repo.run(&["edit", "-p", "foo($A, $B)", "-r", "foo($B, $A)", "--json"]);
    out.assert_code(0);
    let v = out.json();
    assert_eq!(v["file_count"], 50, "{}", v["summary"]);
    (repo, v["id"].as_str().expect("id").to_string())
}

/// Whitespace only, in lines the preview does not touch (a formatter's edit).
fn reformatted(n: usize) -> String {
    source(n).replace("  return 1;\n}", "    return 1;\n}\n")
}

/// `main` moved above `helper`.
fn moved(n: usize) -> String {
    format!(
        "function main{n}() {{\n  foo({n}, k);\n  return helper{n}();\n}}\n\nfunction helper{n}() {{\n  return 1;\n}}\n"
    )
}

fn swapped(text: &str, n: usize) -> String {
    text.replace(&format!("foo({n}, k)"), &format!("foo(k, {n})"))
}

fn refs(repo: &TestRepo) -> Vec<String> {
    repo.astedit_refs()
}

/// The blob id of `path` in commit `commit`.
fn blob_at(repo: &TestRepo, commit: &str, path: &str) -> String {
    repo.git(&["rev-parse", &format!("{commit}:{path}")])
        .trim()
        .to_string()
}

fn commit_of(repo: &TestRepo, id: &str) -> String {
    repo.git(&["rev-parse", &format!("refs/astedit/{id}")])
        .trim()
        .to_string()
}

#[test]
fn refresh_rederives_moved_and_reformatted_files_and_refuses_a_conflict_by_region() {
    let (repo, old) = fifty();
    let old_commit = commit_of(&repo, &old);
    for n in 0..3 {
        repo.write(&path(n), reformatted(n));
    }
    repo.write(&path(3), moved(3));
    // The fifth: the very call the preview rewrites, edited.
    repo.write(&path(4), source(4).replace("foo(4, k)", "foo(4, j)"));

    let out = repo.run(&["refresh", &old, "--json"]);
    out.assert_code(3);
    let v = out.json();
    assert_eq!(v["error"]["code"], "refresh-conflict", "{v}");
    let conflicts = v["error"]["details"]["conflicts"].as_array().expect("list");
    assert_eq!(conflicts.len(), 1, "{v}");
    assert_eq!(conflicts[0]["path"], "src/f04.js");
    assert_eq!(
        conflicts[0]["regions"],
        serde_json::json!([{"start": 6, "end": 6}])
    );
    // The first four are re-derived, with their counts shown.
    let files = v["error"]["details"]["files"].as_array().expect("files");
    for n in 0..4 {
        let f = files
            .iter()
            .find(|f| f["path"] == path(n).as_str())
            .expect("row");
        assert_eq!(f["how"], "rerun", "{f}");
        assert_eq!(
            (f["before"].as_u64(), f["now"].as_u64()),
            (Some(1), Some(1))
        );
    }
    let text = repo.run(&["refresh", &old]);
    text.assert_code(3);
    assert!(
        text.stderr.contains("src/f04.js") && text.stderr.contains("line 6"),
        "{}",
        text.stderr
    );
    assert!(
        text.stderr.contains("src/f03.js: 1 → 1 (re-run)"),
        "{}",
        text.stderr
    );
    // Nothing staged: the old preview is pending, alone, untouched.
    assert_eq!(refs(&repo), vec![format!("refs/astedit/{old}")]);
    assert_eq!(commit_of(&repo, &old), old_commit);

    // Put the fifth back as the preview saw it: the refresh goes through.
    repo.write(&path(4), source(4));
    let out = repo.run(&["refresh", &old, "--json"]);
    out.assert_code(0);
    let v = out.json();
    assert_eq!(v["schema_version"], 2);
    assert_eq!(v["state"], "refreshed");
    assert_eq!(v["id"], old.as_str());
    let new = v["successor"].as_str().expect("successor").to_string();
    assert_ne!(new, old);
    assert_eq!(v["same_counts"], true, "{v}");
    assert_eq!(v["replacements_before"], 50);
    assert_eq!(v["replacements_now"], 50);
    assert_eq!(v["dropped"], serde_json::json!([]));
    let rows = v["files"].as_array().expect("rows");
    assert_eq!(rows.len(), 50);
    assert_eq!(rows.iter().filter(|r| r["how"] == "kept").count(), 46);
    assert_eq!(rows.iter().filter(|r| r["how"] == "rerun").count(), 4);

    // Refs: only the successor is pending. Objects: unchanged files keep their blobs,
    // changed ones have the current content as their before side.
    assert_eq!(refs(&repo), vec![format!("refs/astedit/{new}")]);
    let new_commit = commit_of(&repo, &new);
    for p in [path(10), path(49)] {
        assert_eq!(
            blob_at(&repo, &old_commit, &p),
            blob_at(&repo, &new_commit, &p)
        );
        assert_eq!(
            blob_at(&repo, &format!("{old_commit}^"), &p),
            blob_at(&repo, &format!("{new_commit}^"), &p)
        );
    }
    let before3 = repo.git(&["cat-file", "blob", &format!("{new_commit}^:src/f03.js")]);
    assert_eq!(before3, moved(3));
    let after3 = repo.git(&["cat-file", "blob", &format!("{new_commit}:src/f03.js")]);
    assert_eq!(after3, swapped(&moved(3), 3));
    let after0 = repo.git(&["cat-file", "blob", &format!("{new_commit}:src/f00.js")]);
    assert_eq!(after0, swapped(&reformatted(0), 0));

    // The resolver knows the old one was refreshed, and names its successor.
    let shown = repo.run(&["show", &old]);
    shown.assert_code(2);
    assert!(
        shown
            .stderr
            .contains(&format!("refreshed: its successor is {new}")),
        "{}",
        shown.stderr
    );
    let list = repo.run(&["list", "--json"]).json();
    assert!(
        list["previews"][0]["summary"]
            .as_str()
            .is_some_and(|s| s.contains(&format!("refreshed from {old}"))),
        "{list}"
    );
    let log = repo.run(&["log", &old, "--json"]).json();
    let events = log_events(&log);
    assert_eq!(
        events,
        vec![
            ("refreshed".to_string(), old.clone()),
            ("staged".to_string(), old.clone())
        ]
    );
    assert_eq!(log["events"][0]["successor"], new.as_str());

    // Applying the successor writes exactly the re-derived content.
    repo.run(&["apply", &new]).assert_code(0);
    assert_eq!(repo.read_string(&path(0)), swapped(&reformatted(0), 0));
    assert_eq!(repo.read_string(&path(3)), swapped(&moved(3), 3));
    assert_eq!(repo.read_string(&path(4)), swapped(&source(4), 4));
    assert_eq!(repo.read_string(&path(20)), swapped(&source(20), 20));
    assert!(refs(&repo).is_empty());
    repo.fsck();
}

#[test]
fn refresh_of_a_current_preview_stages_nothing() {
    let (repo, old) = fifty();
    let out = repo.run(&["refresh", &old, "--json"]);
    out.assert_code(0);
    let v = out.json();
    assert_eq!(v["state"], "current");
    assert!(v["successor"].is_null());
    assert_eq!(refs(&repo), vec![format!("refs/astedit/{old}")]);
}

#[test]
fn apply_refresh_applies_when_counts_agree_and_stages_for_review_when_not() {
    // Counts agree: refreshed and applied in one step.
    let (repo, old) = fifty();
    repo.write(&path(7), reformatted(7));
    let out = repo.run(&["apply", "--refresh", &old, "--json"]);
    out.assert_code(0);
    let v = out.json();
    assert_eq!(v["action"], "applied");
    assert_eq!(v["refreshed"]["id"], old.as_str(), "{v}");
    let new = v["refreshed"]["successor"].as_str().expect("successor");
    assert_eq!(v["id"], new);
    assert_eq!(v["refreshed"]["same_counts"], true);
    assert_eq!(repo.read_string(&path(7)), swapped(&reformatted(7), 7));
    assert_eq!(repo.read_string(&path(8)), swapped(&source(8), 8));
    assert!(refs(&repo).is_empty());
    // A current preview: --refresh is a plain apply.
    repo.run(&["undo"]).assert_code(0);
    let again = repo.run(&["apply", "--refresh", new, "--json"]);
    again.assert_code(0);
    assert!(again.json()["refreshed"].is_null());
    repo.fsck();

    // Counts differ (a second call in an unrelated place): exit 3, the successor
    // staged and named, nothing written.
    let (repo, old) = fifty();
    let grown = format!("{}\nfoo(7, 8);\n", source(7));
    repo.write(&path(7), &grown);
    let before = repo.snapshot();
    let out = repo.run(&["apply", "--refresh", &old, "--json"]);
    out.assert_code(3);
    let v = out.json();
    assert_eq!(v["error"]["code"], "refresh-differs", "{v}");
    let new = v["error"]["details"]["successor"]
        .as_str()
        .expect("successor")
        .to_string();
    assert!(
        v["error"]["details"]["why"]
            .as_str()
            .is_some_and(|w| w.contains("src/f07.js: 1 → 2")),
        "{v}"
    );
    assert_eq!(repo.snapshot(), before, "nothing written");
    assert_eq!(refs(&repo), vec![format!("refs/astedit/{new}")]);
    let text = repo.run(&["show", &new, "--stat"]);
    text.assert_code(0);
    // The text form prints the new id too.
    let (repo2, old2) = fifty();
    repo2.write(&path(7), &grown);
    let out = repo2.run(&["apply", "--refresh", &old2]);
    out.assert_code(3);
    let succ = repo2.astedit_refs()[0]
        .trim_start_matches("refs/astedit/")
        .to_string();
    assert!(out.stderr.contains(&succ), "{}", out.stderr);
    // The staged successor applies by its id.
    repo.run(&["apply", &new]).assert_code(0);
    assert_eq!(
        repo.read_string(&path(7)),
        format!("{}\nfoo(8, 7);\n", swapped(&source(7), 7))
    );
    repo.fsck();
}

/// A refresh killed before its ref transaction: the old preview is pending and
/// intact, nothing names the half-built successor, and the next refresh works.
#[test]
fn a_crash_during_refresh_leaves_the_old_preview_pending() {
    use std::io::BufRead as _;
    for how in ["abort", "sigkill"] {
        let (repo, old) = fifty();
        let old_commit = commit_of(&repo, &old);
        repo.write(&path(1), reformatted(1));
        let journal = repo.git(&["rev-parse", "refs/astedit-journal"]);
        match how {
            "abort" => {
                let out = repo.run_with(
                    ".",
                    &["refresh", &old],
                    &[("GIT_ASTEDIT_FAULT", "refresh-before-swap")],
                    None,
                );
                assert_ne!(out.code, 0, "{}", out.stderr);
                assert!(out.stderr.contains("fault injected"), "{}", out.stderr);
            }
            _ => {
                let mut child = repo
                    .command(".", &["refresh", &old])
                    .env("GIT_ASTEDIT_FAULT", "pause:refresh-before-swap:60000")
                    .stdout(std::process::Stdio::null())
                    .stderr(std::process::Stdio::piped())
                    .spawn()
                    .expect("spawn");
                let stderr = child.stderr.take().expect("stderr");
                let mut lines = std::io::BufReader::new(stderr).lines();
                let paused = lines.any(|l| l.is_ok_and(|l| l.contains("paused at")));
                assert!(paused, "the refresh never reached its pause");
                // SIGKILL: no destructor, no cleanup.
                child.kill().expect("kill");
                child.wait().expect("wait");
            }
        }
        assert_eq!(refs(&repo), vec![format!("refs/astedit/{old}")], "{how}");
        assert_eq!(commit_of(&repo, &old), old_commit);
        assert_eq!(repo.git(&["rev-parse", "refs/astedit-journal"]), journal);
        assert_eq!(repo.read_string(&path(1)), reformatted(1));
        repo.fsck();
        // The lock a SIGKILL left is provably stale: the next refresh breaks it.
        let out = repo.run(&["refresh", &old, "--json"]);
        out.assert_code(0);
        assert_eq!(out.json()["state"], "refreshed");
    }
}

/// One change through refresh, partial apply and undo: `log` tells the whole line,
/// and the undo gives back exactly the bytes the apply replaced.
#[test]
fn log_shows_staged_refreshed_split_applied_undone_and_undo_is_exact() {
    let (repo, old) = fifty();
    repo.write(&path(2), reformatted(2));
    let v = repo.run(&["refresh", &old, "--json"]).json();
    let new = v["successor"].as_str().expect("successor").to_string();
    let before = repo.snapshot();
    let out = repo.run(&["apply", &new, "--json", "--", "src/f0*"]);
    out.assert_code(0);
    let v = out.json();
    let part = v["split"]["selected"].as_str().expect("part").to_string();
    let rest = v["split"]["remainder"].as_str().expect("rest").to_string();
    assert_eq!(repo.read_string(&path(2)), swapped(&reformatted(2), 2));
    assert_eq!(repo.read_string(&path(12)), source(12));
    repo.run(&["undo", &part]).assert_code(0);
    assert_eq!(repo.snapshot(), before, "undo gives back every byte");

    let log = repo.run(&["log", &part]);
    log.assert_code(0);
    let kinds: Vec<&str> = log
        .stdout
        .lines()
        .filter_map(|l| l.split_whitespace().nth(1))
        .collect();
    assert_eq!(
        kinds,
        vec!["undone", "applied", "split", "refreshed", "staged"],
        "{}",
        log.stdout
    );
    assert!(
        log.stdout.contains(&format!("successor: {new}")),
        "{}",
        log.stdout
    );
    // The remainder is still applicable, and so is the undone part, by id.
    repo.run(&["apply", &rest]).assert_code(0);
    repo.run(&["apply", &part]).assert_code(0);
    for n in 0..50 {
        let want = if n == 2 {
            swapped(&reformatted(2), 2)
        } else {
            swapped(&source(n), n)
        };
        assert_eq!(repo.read_string(&path(n)), want, "{n}");
    }
    repo.fsck();
}

/// A minimal MCP client: one request at a time over the server's stdio.
struct Mcp {
    child: std::process::Child,
    stdin: std::process::ChildStdin,
    stdout: std::io::Lines<std::io::BufReader<std::process::ChildStdout>>,
    next: u64,
}

impl Mcp {
    fn start(repo: &TestRepo) -> Mcp {
        let mut child = repo
            .command(".", &["mcp"])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("spawn mcp");
        let stdin = child.stdin.take().expect("stdin");
        let stdout = std::io::BufRead::lines(std::io::BufReader::new(
            child.stdout.take().expect("stdout"),
        ));
        let mut m = Mcp {
            child,
            stdin,
            stdout,
            next: 1,
        };
        m.request(
            "initialize",
            serde_json::json!({"protocolVersion": "2025-06-18", "capabilities": {},
                "clientInfo": {"name": "refresh-test", "version": "1.0"}}),
        );
        m.send(&serde_json::json!({"jsonrpc": "2.0", "method": "notifications/initialized", "params": {}}));
        m
    }

    fn send(&mut self, msg: &serde_json::Value) {
        use std::io::Write as _;
        writeln!(self.stdin, "{msg}").expect("write");
        self.stdin.flush().expect("flush");
    }

    fn request(&mut self, method: &str, params: serde_json::Value) -> serde_json::Value {
        let id = self.next;
        self.next += 1;
        self.send(
            &serde_json::json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}),
        );
        loop {
            let line = self.stdout.next().expect("a response").expect("read");
            let msg: serde_json::Value = serde_json::from_str(&line).expect("JSON");
            if msg["id"] == serde_json::json!(id) {
                return msg["result"].clone();
            }
        }
    }

    fn resolve(&mut self, args: serde_json::Value) -> serde_json::Value {
        self.request(
            "tools/call",
            serde_json::json!({"name": "resolve", "arguments": args}),
        )
    }
}

impl Drop for Mcp {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
