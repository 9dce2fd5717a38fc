//! Integration tests: `refresh` (a stale preview re-derived as a successor, journal
//! event `refreshed`), `apply --refresh` (the DSH rule), and the journal chain of one
//! change through refresh, split, apply and undo.

use crate::util::log_events;
use crate::util::TestRepo;

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

#[test]
fn patch_preview_is_resolved_again_after_its_context_moved() {
    let repo = TestRepo::new();
    repo.write(
        "a.py",
        "def f():\n    x = 1\n    return x\n\ndef g():\n    return 2\n",
    );
    repo.commit_all("init");
    let patch = "*** Begin Patch\n*** Update File: a.py\n@@ def g():\n-    return 2\n+    return 3\n*** End Patch\n";
    let out = repo.run_with(".", &["patch", "--json"], &[], Some(patch.as_bytes()));
    out.assert_code(0);
    let old = out.json()["id"].as_str().expect("id").to_string();
    // Lines added above: the chunk's context moved down three lines.
    repo.write(
        "a.py",
        "import os\nimport sys\n\ndef f():\n    x = 1\n    return x\n\ndef g():\n    return 2\n",
    );
    repo.run(&["apply", &old]).assert_code(3);
    let out = repo.run(&["refresh", "--json"]);
    out.assert_code(0);
    let v = out.json();
    assert_eq!(v["files"][0]["how"], "repatched", "{v}");
    assert_eq!(v["same_counts"], true);
    let new = v["successor"].as_str().expect("successor");
    repo.run(&["apply", new]).assert_code(0);
    assert_eq!(
        repo.read_string("a.py"),
        "import os\nimport sys\n\ndef f():\n    x = 1\n    return x\n\ndef g():\n    return 3\n"
    );
    repo.fsck();
}

#[test]
fn merge_preview_is_refreshed_by_a_three_way_merge() {
    let repo = TestRepo::new();
    let lines = |tag: &str| {
        (1..=12)
            .map(|i| format!("line {i} {tag}\n"))
            .collect::<String>()
    };
    repo.write("a.txt", lines("a"));
    repo.write("b.txt", lines("b"));
    repo.commit_all("init");
    let stage = |file: &str, from: &str, to: &str| {
        let patch = format!(
            "*** Begin Patch\n*** Update File: {file}\n@@\n-{from}\n+{to}\n*** End Patch\n"
        );
        let out = repo.run_with(".", &["patch", "--json"], &[], Some(patch.as_bytes()));
        out.assert_code(0);
        out.json()["id"].as_str().expect("id").to_string()
    };
    let p1 = stage("a.txt", "line 2 a", "LINE 2 A");
    let p2 = stage("b.txt", "line 11 b", "LINE 11 B");
    let out = repo.run(&["merge", &p1, &p2, "--json"]);
    out.assert_code(0);
    let merged = out.json()["id"].as_str().expect("id").to_string();
    // Edits far from the preview's lines, in both files.
    repo.write("a.txt", lines("a").replace("line 10 a", "line ten a"));
    repo.write(
        "b.txt",
        lines("b").replace("line 1 b\n", "line 1 b\nnew line\n"),
    );
    let out = repo.run(&["refresh", &merged, "--json"]);
    out.assert_code(0);
    let v = out.json();
    assert!(
        v["files"]
            .as_array()
            .expect("rows")
            .iter()
            .all(|f| f["how"] == "merged"),
        "{v}"
    );
    let new = v["successor"].as_str().expect("successor").to_string();
    repo.run(&["apply", &new]).assert_code(0);
    assert_eq!(
        repo.read_string("a.txt"),
        lines("a")
            .replace("line 10 a", "line ten a")
            .replace("line 2 a", "LINE 2 A")
    );
    assert_eq!(
        repo.read_string("b.txt"),
        lines("b")
            .replace("line 1 b\n", "line 1 b\nnew line\n")
            .replace("line 11 b", "LINE 11 B")
    );

    // An edit on the preview's own line: a conflict naming the file and the line.
    repo.run(&["undo"]).assert_code(0);
    repo.write("a.txt", lines("a").replace("line 2 a", "line two a"));
    let out = repo.run(&["refresh", &new, "--json"]);
    out.assert_code(3);
    let v = out.json();
    assert_eq!(
        v["error"]["details"]["conflicts"][0]["path"], "a.txt",
        "{v}"
    );
    assert_eq!(
        v["error"]["details"]["conflicts"][0]["regions"],
        serde_json::json!([{"start": 2, "end": 2}])
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

#[test]
fn refresh_all_picks_up_newly_matching_files() {
    let (repo, old) = fifty();
    repo.write("src/new.js", "foo(a, b);\n");
    repo.write(&path(5), reformatted(5));
    let out = repo.run(&["refresh", "--all", &old, "--json"]);
    out.assert_code(0);
    let v = out.json();
    assert_eq!(
        v["newly_matching"],
        serde_json::json!(["src/new.js"]),
        "{v}"
    );
    assert_eq!(v["same_counts"], false);
    assert_eq!(v["replacements_now"], 51);
    let schema = repo.run(&["schema", "refresh"]);
    schema.assert_code(0);
    assert!(schema.stdout.contains("newly_matching"));
}

/// `refresh --all` collects new files as the edit did, with the project's root
/// `sgconfig.yml`: a new `.es6` file is JavaScript by its languageGlobs.
#[test]
fn refresh_all_reads_the_projects_language_globs() {
    let repo = TestRepo::new();
    repo.write(
        "sgconfig.yml",
        "ruleDirs: []\nlanguageGlobs:\n  javascript: ['*.es6']\n",
    );
    repo.write("src/a.es6", "foo(1);\n");
    repo.commit_all("init");
    let out = repo.run(&["edit", "-p", "foo($A)", "-r", "bar($A)", "--json"]);
    out.assert_code(0);
    let old = out.json()["id"].as_str().expect("id").to_string();
    repo.write("src/b.es6", "foo(2);\n");
    let out = repo.run(&["refresh", "--all", &old, "--json"]);
    out.assert_code(0);
    let v = out.json();
    assert_eq!(v["newly_matching"], serde_json::json!(["src/b.es6"]), "{v}");
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

#[test]
fn mcp_resolve_takes_refresh_and_paths() {
    let (repo, old) = fifty();
    repo.write(&path(9), reformatted(9));
    let mut mcp = Mcp::start(&repo);
    // Stale without refresh: refused as ever.
    let r = mcp.resolve(serde_json::json!({"action": "apply", "id": old, "reason": "r"}));
    assert_eq!(r["isError"], true, "{r}");
    // refresh + paths: refused as a usage error.
    let r = mcp.resolve(
        serde_json::json!({"action": "apply", "id": old, "reason": "r",
        "refresh": true, "paths": ["src"]}),
    );
    assert_eq!(r["isError"], true, "{r}");
    let r = mcp.resolve(
        serde_json::json!({"action": "apply", "id": old, "reason": "r",
        "refresh": true}),
    );
    assert_eq!(r["isError"], false, "{r}");
    let v = &r["structuredContent"];
    assert_eq!(v["refreshed"]["id"], old.as_str(), "{v}");
    assert_eq!(v["id"], v["refreshed"]["successor"]);
    assert_eq!(repo.read_string(&path(9)), swapped(&reformatted(9), 9));
    drop(mcp);

    // paths: a partial apply.
    let (repo, old) = fifty();
    let mut mcp = Mcp::start(&repo);
    let r = mcp.resolve(
        serde_json::json!({"action": "apply", "id": old, "reason": "r",
        "paths": ["src/f1*"]}),
    );
    assert_eq!(r["isError"], false, "{r}");
    let v = &r["structuredContent"];
    assert_eq!(v["split"]["parent"], old.as_str(), "{v}");
    assert_eq!(v["file_count"], 10);
    assert_eq!(repo.read_string(&path(12)), swapped(&source(12), 12));
    assert_eq!(repo.read_string(&path(22)), source(22));
    let rest = v["split"]["remainder"].as_str().expect("remainder");
    assert_eq!(repo.astedit_refs(), vec![format!("refs/astedit/{rest}")]);
    repo.fsck();
}

#[test]
fn scan_preview_reruns_its_rules_and_merges_when_the_rules_changed() {
    let repo = TestRepo::new();
    let rule = "[[rules]]\nid = \"no-bar\"\nlanguage = \"javascript\"\nrule.pattern = \"bar($A)\"\nfix = \"qux($A)\"\nmessage = \"no bar\"\nseverity = \"warning\"\n";
    repo.write("astedit.toml", rule);
    repo.write("a.js", "bar(1);\n\n\n\nlet x = 1;\n");
    repo.write("b.js", "bar(2);\n\n\n\nlet y = 2;\n");
    repo.commit_all("init");
    let out = repo.run(&["scan", "--stage", "--json"]);
    out.assert_code(0);
    let old = out.json()["id"].as_str().expect("id").to_string();
    // A new match in a changed file: the rules re-run and find it.
    repo.write("a.js", "bar(1);\n\n\n\nlet x  =  1;\nbar(3);\n");
    let v = repo.run(&["refresh", &old, "--json"]).json();
    assert_eq!(v["state"], "refreshed", "{v}");
    assert_eq!(v["files"][0]["how"], "rerun", "{v}");
    assert_eq!(v["files"][0]["now"], 2);
    assert_eq!(v["same_counts"], false);
    let new = v["successor"].as_str().expect("successor").to_string();
    // The rule file changed: re-running would not be the reviewed change; b.js is
    // merged three-way instead, and the note says why.
    repo.write("astedit.toml", rule.replace("qux", "zap"));
    repo.write("b.js", "bar(2);\n\n\n\nlet y  =  2;\n");
    let v = repo.run(&["refresh", &new, "--json"]).json();
    assert_eq!(v["state"], "refreshed", "{v}");
    let b = v["files"]
        .as_array()
        .expect("rows")
        .iter()
        .find(|f| f["path"] == "b.js")
        .expect("b.js")
        .clone();
    assert_eq!(b["how"], "merged", "{v}");
    assert!(
        v["notes"][0]
            .as_str()
            .is_some_and(|n| n.contains("rule files changed")),
        "{v}"
    );
    let last = v["successor"].as_str().expect("successor").to_string();
    repo.run(&["apply", &last]).assert_code(0);
    assert_eq!(
        repo.read_string("a.js"),
        "qux(1);\n\n\n\nlet x  =  1;\nqux(3);\n"
    );
    assert_eq!(repo.read_string("b.js"), "qux(2);\n\n\n\nlet y  =  2;\n");
    repo.fsck();
}

#[test]
fn refresh_all_of_a_scan_fixes_newly_matching_files_under_its_pathspecs() {
    let repo = TestRepo::new();
    repo.write(
        "astedit.toml",
        "[[rules]]\nid = \"no-bar\"\nlanguage = \"javascript\"\nrule.pattern = \"bar($A)\"\nfix = \"qux($A)\"\nmessage = \"no bar\"\nseverity = \"warning\"\n",
    );
    repo.write("src/a.js", "bar(1);\n");
    repo.write("lib/b.js", "bar(2);\n");
    repo.commit_all("init");
    let out = repo.run_in("src", &["scan", "--stage", ".", "--json"]);
    out.assert_code(0);
    let old = out.json()["id"].as_str().expect("id").to_string();
    repo.write("src/c.js", "bar(3);\n");
    repo.write("lib/d.js", "bar(4);\n");
    let v = repo.run(&["refresh", "--all", &old, "--json"]).json();
    assert_eq!(v["newly_matching"], serde_json::json!(["src/c.js"]), "{v}");
    assert_eq!(v["replacements_now"], 2);
    let new = v["successor"].as_str().expect("successor").to_string();
    repo.run(&["apply", &new]).assert_code(0);
    assert_eq!(repo.read_string("src/c.js"), "qux(3);\n");
    assert_eq!(repo.read_string("lib/d.js"), "bar(4);\n");
    assert_eq!(repo.read_string("lib/b.js"), "bar(2);\n");
}

/// A folder on the way that became a symlink: the refresh refuses (exit 4) before
/// reading through it, and the preview stays pending.
#[cfg(unix)]
#[test]
fn refresh_refuses_a_path_behind_a_symlinked_folder() {
    let repo = TestRepo::new();
    repo.write("src/a.js", "foo(1, 2);\n");
    repo.commit_all("init");
    let out = repo.run(&["edit", "-p", "foo($A, $B)", "-r", "foo($B, $A)", "--json"]);
    out.assert_code(0);
    let id = out.json()["id"].as_str().expect("id").to_string();
    let outside = tempfile::tempdir().expect("tempdir");
    std::fs::write(outside.path().join("a.js"), "foo(3, 4);\n").expect("write");
    std::fs::rename(repo.path().join("src"), repo.path().join("src.old")).expect("mv");
    std::os::unix::fs::symlink(outside.path(), repo.path().join("src")).expect("symlink");
    let out = repo.run(&["refresh", &id, "--json"]);
    out.assert_code(4);
    assert_eq!(out.json()["error"]["code"], "refused");
    assert_eq!(repo.astedit_refs(), vec![format!("refs/astedit/{id}")]);
}

/// `edit -i` staged a selection of the matches: a refresh merges the chosen changes
/// three-way instead of re-running the ops, which would take the refused ones too.
#[test]
fn a_selection_is_refreshed_by_merge_not_by_re_running_its_ops() {
    let repo = TestRepo::new();
    repo.write("a.js", "foo(1);\n\n\n\nfoo(2);\n\n\n\nlet x = 1;\n");
    repo.commit_all("init");
    let out = repo.run_with(
        ".",
        &["edit", "-i", "-p", "foo($A)", "-r", "bar($A)"],
        &[],
        Some(b"y\nn\n"),
    );
    out.assert_code(0);
    let old = repo.astedit_refs()[0]
        .trim_start_matches("refs/astedit/")
        .to_string();
    repo.write("a.js", "foo(1);\n\n\n\nfoo(2);\n\n\n\nlet x  =  1;\n");
    let v = repo.run(&["refresh", &old, "--json"]).json();
    assert_eq!(v["files"][0]["how"], "merged", "{v}");
    assert_eq!(v["same_counts"], true);
    let new = v["successor"].as_str().expect("successor").to_string();
    repo.run(&["apply", &new]).assert_code(0);
    assert_eq!(
        repo.read_string("a.js"),
        "bar(1);\n\n\n\nfoo(2);\n\n\n\nlet x  =  1;\n"
    );
}

/// Issue 24 item 4: a formatter's whitespace inside the sites an edit rewrites.
#[test]
fn refresh_goes_through_a_formatters_whitespace_and_says_so() {
    let repo = TestRepo::new();
    let before = "fn main() {\n    foo(1);\n    foo(2, 3);\n}\n";
    repo.write("src/a.rs", before);
    repo.commit_all("init");
    let out = repo.run(&["edit", "-p", "foo($$$A)", "-r", "bar($$$A)", "--json"]);
    out.assert_code(0);
    let old = out.json()["id"].as_str().expect("id").to_string();
    // The formatter's taste: spaces inside the parentheses, a call split over lines.
    let formatted = "fn main() {\n    foo( 1 );\n    foo(\n        2,\n        3\n    );\n}\n";
    repo.write("src/a.rs", formatted);
    repo.run(&["apply", &old]).assert_code(3);
    let out = repo.run(&["apply", &old, "--refresh", "--json"]);
    out.assert_code(0);
    let v = out.json();
    let notes = v["refreshed"]["notes"].to_string();
    assert!(
        notes.contains("only whitespace or formatting changed"),
        "{v}"
    );
    assert_eq!(v["refreshed"]["files"][0]["how"], "rerun", "{v}");
    assert!(
        v["refreshed"]["files"][0]["why"]
            .as_str()
            .is_some_and(|w| w.contains("only whitespace")),
        "{v}"
    );
    assert_eq!(
        repo.read_string("src/a.rs"),
        // The ops re-run on the formatted text: the layout inside the call's own
        // parentheses comes along with `$$$A`.
        "fn main() {\n    bar(1);\n    bar(\n        2,\n        3\n    );\n}\n"
    );
    repo.fsck();

    // The same through the server: resolve with refresh: true, the note in its report.
    let repo = TestRepo::new();
    repo.write("src/a.rs", before);
    repo.commit_all("init");
    let out = repo.run(&["edit", "-p", "foo($$$A)", "-r", "bar($$$A)", "--json"]);
    let old = out.json()["id"].as_str().expect("id").to_string();
    repo.write("src/a.rs", "fn main() {\n    foo( 1 );\n    foo(2,3);\n}\n");
    let mut mcp = Mcp::start(&repo);
    let r = mcp
        .resolve(serde_json::json!({"action": "apply", "id": old, "reason": "r", "refresh": true}));
    assert_eq!(r["isError"], false, "{r}");
    let notes = r["structuredContent"]["refreshed"]["notes"].to_string();
    assert!(
        notes.contains("only whitespace or formatting changed"),
        "{r}"
    );
    assert_eq!(
        repo.read_string("src/a.rs"),
        "fn main() {\n    bar(1);\n    bar(2,3);\n}\n"
    );
}

/// The same, but the formatter's run came with a real edit at a site: still a conflict.
#[test]
fn refresh_still_conflicts_on_a_semantic_change_among_formatting() {
    let repo = TestRepo::new();
    repo.write("src/a.rs", "fn main() {\n    foo(1);\n}\n");
    repo.commit_all("init");
    let out = repo.run(&["edit", "-p", "foo($A)", "-r", "bar($A)", "--json"]);
    out.assert_code(0);
    let old = out.json()["id"].as_str().expect("id").to_string();
    repo.write("src/a.rs", "fn main() {\n    foo( 2 );\n}\n");
    let out = repo.run(&["apply", &old, "--refresh", "--json"]);
    out.assert_code(3);
    assert_eq!(
        out.json()["error"]["code"],
        "refresh-conflict",
        "{}",
        out.stdout
    );
    // A string literal's spaces are not layout either.
    let repo = TestRepo::new();
    repo.write("src/a.rs", "fn main() {\n    foo(\"a b\");\n}\n");
    repo.commit_all("init");
    let out = repo.run(&["edit", "-p", "foo($A)", "-r", "bar($A)", "--json"]);
    let old = out.json()["id"].as_str().expect("id").to_string();
    repo.write("src/a.rs", "fn main() {\n    foo( \"a  b\" );\n}\n");
    let out = repo.run(&["refresh", &old, "--json"]);
    out.assert_code(3);
    assert_eq!(
        out.json()["error"]["code"],
        "refresh-conflict",
        "{}",
        out.stdout
    );
    assert_eq!(
        repo.read_string("src/a.rs"),
        "fn main() {\n    foo( \"a  b\" );\n}\n"
    );
}

/// A patch whose context a formatter re-indented (and left trailing blanks on) since.
#[test]
fn patch_refresh_goes_through_reindented_context() {
    let repo = TestRepo::new();
    repo.write(
        "a.js",
        "function f() {\n    let a = 1;\n    if (a) {\n        let b = 2;\n    }\n    return a;\n}\n",
    );
    repo.commit_all("init");
    let patch = "*** Begin Patch\n*** Update File: a.js\n@@\n     let a = 1;\n     if (a) {\n-        let b = 2;\n+        let b = 20;\n+        log(b);\n     }\n*** End Patch\n";
    let out = repo.run_with(".", &["patch", "--json"], &[], Some(patch.as_bytes()));
    out.assert_code(0);
    let old = out.json()["id"].as_str().expect("id").to_string();
    // Re-indented to two spaces, with a trailing blank on one context line.
    repo.write(
        "a.js",
        "function f() {\n  let a = 1; \n  if (a) {\n    let b = 2;\n  }\n  return a;\n}\n",
    );
    let out = repo.run(&["refresh", &old, "--json"]);
    out.assert_code(0);
    let v = out.json();
    assert_eq!(v["files"][0]["how"], "repatched", "{v}");
    assert!(
        v["notes"].to_string().contains("only in indentation"),
        "{v}"
    );
    let new = v["successor"].as_str().expect("successor").to_string();
    let text = repo.run(&["show", &new]);
    text.assert_code(0);
    repo.run(&["apply", &new]).assert_code(0);
    // Context kept as the file has it; the added lines at the new indentation.
    assert_eq!(
        repo.read_string("a.js"),
        "function f() {\n  let a = 1; \n  if (a) {\n    let b = 20;\n    log(b);\n  }\n  return a;\n}\n"
    );
    // A changed line of the chunk (not only its indentation) still conflicts.
    let repo = TestRepo::new();
    repo.write(
        "a.js",
        "function f() {\n    let a = 1;\n    if (a) {\n        let b = 2;\n    }\n    return a;\n}\n",
    );
    repo.commit_all("init");
    let out = repo.run_with(".", &["patch", "--json"], &[], Some(patch.as_bytes()));
    let old = out.json()["id"].as_str().expect("id").to_string();
    repo.write(
        "a.js",
        "function f() {\n  let a = 1;\n  if (a) {\n    let b = 3;\n  }\n  return a;\n}\n",
    );
    let out = repo.run(&["refresh", &old, "--json"]);
    out.assert_code(3);
    assert_eq!(
        out.json()["error"]["code"],
        "refresh-conflict",
        "{}",
        out.stdout
    );
    repo.fsck();
}

/// Rewrites pending preview `id` as a version before the typed recipes would have
/// staged it: `recipe` (`None`: nothing) in place of `details.refresh`. Returns the
/// rewritten preview's id.
fn with_old_recipe(repo: &TestRepo, id: &str, recipe: Option<serde_json::Value>) -> String {
    const BEGIN: &str = "--- astedit-meta v1 ---\n";
    const END: &str = "\n--- end astedit-meta ---";
    let commit = repo.git(&["rev-parse", &format!("refs/astedit/{id}")]);
    let commit = commit.trim();
    let tree = repo.git(&["rev-parse", &format!("{commit}^{{tree}}")]);
    let parent = repo.git(&["rev-parse", &format!("{commit}^")]);
    let message = repo.git(&["log", "-1", "--format=%B", commit]);
    let start = message.find(BEGIN).expect("metadata block") + BEGIN.len();
    let end = start + message[start..].find(END).expect("end of metadata");
    let mut envelope: serde_json::Value =
        serde_json::from_str(&message[start..end]).expect("metadata json");
    let details = envelope["meta"]["details"]
        .as_object_mut()
        .expect("details");
    match recipe {
        Some(r) => details.insert("refresh".into(), r),
        None => details.remove("refresh"),
    };
    let rewritten = format!(
        "{}{}{}",
        &message[..start],
        serde_json::to_string_pretty(&envelope).expect("json"),
        &message[end..]
    );
    let new = repo.git(&[
        "commit-tree",
        tree.trim(),
        "-p",
        parent.trim(),
        "-m",
        rewritten.trim_end(),
    ]);
    let new = new.trim();
    let new_id = &new[..12];
    repo.git(&["update-ref", &format!("refs/astedit/{new_id}"), new]);
    repo.git(&["update-ref", "-d", &format!("refs/astedit/{id}")]);
    new_id.to_string()
}

/// Previews staged by older versions recorded untyped recipes with fewer fields (a
/// scan's first recipe had no file set) or none at all (an edit's): they still
/// refresh, each missing field read as its default.
#[test]
fn previews_with_old_untyped_recipes_still_refresh() {
    let repo = TestRepo::new();
    repo.write(
        "astedit.toml",
        "[[rules]]\nid = \"no-bar\"\nlanguage = \"javascript\"\nrule.pattern = \"bar($A)\"\nfix = \"qux($A)\"\nmessage = \"no bar\"\nseverity = \"warning\"\n",
    );
    repo.write("src/a.js", "bar(1);\n\n\n\nlet x = 1;\n");
    repo.write("lib/b.js", "foo(1, 2);\n");
    repo.commit_all("init");
    let out = repo.run_in("src", &["scan", "--stage", ".", "--json"]);
    out.assert_code(0);
    let staged = out.json()["id"].as_str().expect("id").to_string();
    let shown = repo.run(&["show", &staged, "--json"]).json();
    let recipe = shown["meta"]["details"]["refresh"].clone();
    // The first scan recipes: configs, digest, rules and passes only.
    let old = with_old_recipe(
        &repo,
        &staged,
        Some(serde_json::json!({
            "configs": recipe["configs"],
            "rules_digest": recipe["rules_digest"],
            "only_rules": [],
            "max_passes": recipe["max_passes"],
        })),
    );
    // A stale path re-runs the rules; --all, with no file set recorded, runs them
    // over the whole tree from the top (what that version meant).
    repo.write("src/a.js", "bar(1);\n\n\n\nlet x  =  1;\nbar(3);\n");
    repo.write("lib/d.js", "bar(4);\n");
    let v = repo.run(&["refresh", "--all", &old, "--json"]).json();
    assert_eq!(v["state"], "refreshed", "{v}");
    assert_eq!(v["files"][0]["path"], "lib/d.js", "{v}");
    assert_eq!(v["newly_matching"], serde_json::json!(["lib/d.js"]), "{v}");
    let a = v["files"]
        .as_array()
        .expect("rows")
        .iter()
        .find(|f| f["path"] == "src/a.js")
        .expect("src/a.js")
        .clone();
    assert_eq!(a["how"], "rerun", "{v}");
    assert_eq!(a["now"], 2, "{v}");
    let new = v["successor"].as_str().expect("successor").to_string();
    repo.run(&["apply", &new]).assert_code(0);
    assert_eq!(
        repo.read_string("src/a.js"),
        "qux(1);\n\n\n\nlet x  =  1;\nqux(3);\n"
    );
    assert_eq!(repo.read_string("lib/d.js"), "qux(4);\n");

    // An edit staged before edits recorded anything: its ops still re-run, and
    // --all says it took the whole work tree.
    let out = repo.run(&["edit", "-p", "foo($A, $B)", "-r", "foo($B, $A)", "--json"]);
    out.assert_code(0);
    let staged = out.json()["id"].as_str().expect("id").to_string();
    let old = with_old_recipe(&repo, &staged, None);
    repo.write("lib/b.js", "// moved\nfoo(1, 2);\n");
    repo.write("lib/e.js", "foo(3, 4);\n");
    let v = repo.run(&["refresh", "--all", &old, "--json"]).json();
    assert_eq!(v["state"], "refreshed", "{v}");
    assert_eq!(v["newly_matching"], serde_json::json!(["lib/e.js"]), "{v}");
    assert!(
        v["notes"].as_array().expect("notes").iter().any(|n| n
            .as_str()
            .is_some_and(|n| n.contains("did not record its file set"))),
        "{v}"
    );
    let new = v["successor"].as_str().expect("successor").to_string();
    repo.run(&["apply", &new]).assert_code(0);
    assert_eq!(repo.read_string("lib/b.js"), "// moved\nfoo(2, 1);\n");
    assert_eq!(repo.read_string("lib/e.js"), "foo(4, 3);\n");
    repo.fsck();
}
