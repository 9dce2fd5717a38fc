//! A formatter run over a rewrite (`--fmt`): only its hunks over the rewrite kept, on
//! scan, check, apply and the MCP tool, a failing one, and the recorded one on refresh.

use super::blob_at;
use super::mcp_call_with;
use super::stage;
use super::staged_id;
use crate::util::TestRepo;

/// A formatter for the tests: puts one space around every `=` of the file, and fails
/// unless its one argument is the file's path.
const SPACES_FMT: &str = "[ \"$1\" = a.py ] || exit 3\nsed -e 's/ *= */ = /g'\n";

#[test]
fn fmt_keeps_only_the_formatter_hunks_over_the_rewrite() {
    let repo = TestRepo::new();
    repo.write("fmt.sh", SPACES_FMT);
    repo.write("astedit.toml", "[fmt]\npython = \"sh fmt.sh {path}\"\n");
    repo.write(
        "rules/new.yml",
        "id: new\nlanguage: python\nrule:\n  pattern: old($A)\nfix: new($A)\n",
    );
    let before = "x  =  1\ny  =  old(2)\nz  =  3\n";
    repo.write("a.py", before);
    repo.commit_all("init");
    // The formatter runs once allowed (see consent.rs).
    repo.run(&["allow"]).assert_code(0);
    let want = "x  =  1\ny = new(2)\nz  =  3\n";
    let id = stage(&repo, &["-p", "old($A)", "-r", "new($A)", "--fmt", "a.py"]);
    assert_eq!(blob_at(&repo, &id, "a.py"), want);
    // The formatter is in the preview's record.
    let shown = repo.run(&["show", &id, "--json"]);
    assert!(
        shown.stdout.contains("sh fmt.sh {path}"),
        "{}",
        shown.stdout
    );
    repo.run(&["discard", &id]).assert_code(0);
    let id = scan_stage_with(&repo, &["--config", "rules/new.yml", "--fmt"]);
    assert_eq!(blob_at(&repo, &id, "a.py"), want);
    repo.run(&["discard", &id]).assert_code(0);
    // Without --fmt, the rewrite alone.
    let id = stage(&repo, &["-p", "old($A)", "-r", "new($A)", "a.py"]);
    assert_eq!(
        blob_at(&repo, &id, "a.py"),
        "x  =  1\ny  =  new(2)\nz  =  3\n"
    );
}

#[test]
fn fmt_on_scan_check_and_apply_and_on_the_mcp_tool() {
    let repo = TestRepo::new();
    repo.write("fmt.sh", SPACES_FMT);
    repo.write("astedit.toml", "[fmt]\npython = \"sh fmt.sh {path}\"\n");
    repo.write(
        "rules/new.yml",
        "id: new\nlanguage: python\nrule:\n  pattern: old($A)\nfix: new($A)\n",
    );
    let before = "x  =  1\ny  =  old(2)\nz  =  3\n";
    let want = "x  =  1\ny = new(2)\nz  =  3\n";
    repo.write("a.py", before);
    repo.commit_all("init");
    repo.run(&["allow"]).assert_code(0);
    // --check shows the formatted fix and writes nothing.
    let out = repo.run(&["scan", "--check", "--config", "rules/new.yml", "--fmt"]);
    assert!(out.stdout.contains("+y = new(2)"), "{}", out.stdout);
    assert!(!out.stdout.contains("+x = 1"), "{}", out.stdout);
    assert_eq!(repo.read_string("a.py"), before);
    // The MCP tool stages the same (a formatter is a program: `--allow-run`).
    let call = serde_json::json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "ast_edit", "arguments": {"fmt": true, "ops": [{
            "pattern": "old($A)", "rewrite": "new($A)"}]}}});
    let init = serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "codemods-test", "version": "1"}}});
    let ready = serde_json::json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let reply = mcp_call_with(&repo, &["mcp", "--allow-run"], &[init, ready, call], 2);
    assert_eq!(reply["result"]["isError"], false, "{reply}");
    let id = reply["result"]["structuredContent"]["id"]
        .as_str()
        .expect("id")
        .to_string();
    assert_eq!(blob_at(&repo, &id, "a.py"), want);
    repo.run(&["discard", &id]).assert_code(0);
    // --apply writes it.
    let out = repo.run(&["scan", "--apply", "--config", "rules/new.yml", "--fmt"]);
    assert!(
        out.code == 0 || out.code == 1,
        "{}\n{}",
        out.stdout,
        out.stderr
    );
    assert_eq!(repo.read_string("a.py"), want);
}

#[test]
fn a_failing_formatter_leaves_the_file_as_rewritten_with_a_warning() {
    let repo = TestRepo::new();
    repo.write("astedit.toml", "[fmt]\npython = \"sh -c 'exit 4'\"\n");
    repo.write("a.py", "y  =  old(2)\n");
    repo.commit_all("init");
    repo.run(&["allow"]).assert_code(0);
    let out = repo.run(&["edit", "-p", "old($A)", "-r", "new($A)", "--fmt", "--json"]);
    out.assert_code(0);
    assert!(out.stdout.contains("failed"), "{}", out.stdout);
    let id = staged_id(&out);
    assert_eq!(blob_at(&repo, &id, "a.py"), "y  =  new(2)\n");
}

/// `refresh ID --json`: the successor's id.
fn refreshed(repo: &TestRepo, id: &str) -> (String, serde_json::Value) {
    let out = repo.run(&["refresh", id, "--json"]);
    out.assert_code(0);
    let v = out.json();
    let successor = v["successor"].as_str().expect("a successor").to_string();
    (successor, v)
}

#[test]
fn refresh_runs_the_recorded_formatter_over_the_re_derived_rewrite() {
    let repo = TestRepo::new();
    repo.write("fmt.sh", SPACES_FMT);
    repo.write("astedit.toml", "[fmt]\npython = \"sh fmt.sh {path}\"\n");
    repo.write(
        "rules/new.yml",
        "id: new\nlanguage: python\nrule:\n  pattern: old($A)\nfix: new($A)\n",
    );
    repo.write("a.py", "x  =  1\ny  =  old(2)\nz  =  3\n");
    repo.commit_all("init");
    repo.run(&["allow"]).assert_code(0);
    // An unrelated line above, and a new site below: both re-derived.
    let moved = "v  =  0\nx  =  1\ny  =  old(2)\nz  =  3\n\nw  =  old(4)\n";
    let want = "v  =  0\nx  =  1\ny = new(2)\nz  =  3\n\nw = new(4)\n";
    let edit = stage(&repo, &["-p", "old($A)", "-r", "new($A)", "--fmt", "a.py"]);
    let scan = scan_stage_with(&repo, &["--config", "rules/new.yml", "--fmt"]);
    repo.write("a.py", moved);
    for id in [&edit, &scan] {
        let (successor, v) = refreshed(&repo, id);
        assert_eq!(blob_at(&repo, &successor, "a.py"), want, "{v}");
        assert_eq!(v["files"][0]["how"], "rerun", "{v}");
    }
    // The command recorded at staging is the one that runs, even when `[fmt]` has
    // changed since; one that fails now leaves the file as re-derived, with a note.
    repo.write("astedit.toml", "[fmt]\npython = \"sh -c 'exit 5'\"\n");
    repo.run(&["allow"]).assert_code(0);
    repo.write("a.py", "x  =  1\ny  =  old(2)\nz  =  3\n");
    let edit = stage(&repo, &["-p", "old($A)", "-r", "new($A)", "--fmt", "a.py"]);
    repo.write("fmt.sh", "exit 6\n");
    repo.write("astedit.toml", "[fmt]\npython = \"sh fmt.sh {path}\"\n");
    repo.write("a.py", moved);
    let (successor, v) = refreshed(&repo, &edit);
    assert_eq!(
        blob_at(&repo, &successor, "a.py"),
        "v  =  0\nx  =  1\ny  =  new(2)\nz  =  3\n\nw  =  new(4)\n"
    );
    assert!(
        v["notes"]
            .to_string()
            .contains("the formatter `sh -c 'exit 5'` failed"),
        "{v}"
    );
    // Without --fmt at staging, a refresh formats nothing.
    repo.write("fmt.sh", SPACES_FMT);
    repo.write("a.py", "x  =  1\ny  =  old(2)\nz  =  3\n");
    let plain = stage(&repo, &["-p", "old($A)", "-r", "new($A)", "a.py"]);
    repo.write("a.py", moved);
    let (successor, _) = refreshed(&repo, &plain);
    assert_eq!(
        blob_at(&repo, &successor, "a.py"),
        "v  =  0\nx  =  1\ny  =  new(2)\nz  =  3\n\nw  =  new(4)\n"
    );
}

/// `scan --stage ARGS --json`: the preview id.
fn scan_stage_with(repo: &TestRepo, args: &[&str]) -> String {
    let mut all = vec!["scan", "--stage"];
    all.extend_from_slice(args);
    all.push("--json");
    let out = repo.run(&all);
    assert!(
        out.code == 0 || out.code == 1,
        "{}\n{}",
        out.stdout,
        out.stderr
    );
    out.json()["id"].as_str().expect("an id").to_string()
}
