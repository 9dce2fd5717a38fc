//! `run` as ast-grep's `run` (issue 51, item 1): VS Code's search panel spawns
//! `<serverPath> run --pattern P --json=stream [--rewrite R] [PATH]` in the workspace
//! folder. `run -- CMD` stays the command preview; both at once are refused.
//!
//! The stream is compared with ast-grep 0.51.1's (`ASTEDIT_AST_GREP`, else `ast-grep`
//! on PATH); skipped with a message without one, unless ASTEDIT_REQUIRE_AST_GREP is set.

use std::collections::BTreeSet;

use crate::util::log_events;
use crate::util::TestRepo;

/// A small project in three languages, with a non-ASCII line (columns in characters).
fn fixture() -> TestRepo {
    let repo = TestRepo::new();
    repo.write("a.js", "const a = foo(1, 2);\nlet é = \"ü\"; foo(x);\n");
    repo.write("src/b.py", "def f():\n    return foo(3)\n");
    repo.write("c.rs", "fn main() {\n    foo(4);\n}\n");
    repo.commit_all("init");
    repo
}

/// Each line as canonical JSON, as a set (ast-grep's file order follows its threads).
pub(crate) fn lines(stdout: &str) -> BTreeSet<String> {
    stdout
        .lines()
        .map(|l| {
            let v: serde_json::Value =
                serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}"));
            v.to_string()
        })
        .collect()
}

fn compare_with_ast_grep(args: &[&str], count: usize) {
    let Some(ast_grep) = crate::lsp_astgrep::ast_grep_or_skip() else {
        return;
    };
    let repo = fixture();
    let ours = repo.run(args);
    ours.assert_code(0);
    let theirs = std::process::Command::new(ast_grep)
        .args(args)
        .current_dir(repo.path())
        .output()
        .expect("run ast-grep");
    assert!(theirs.status.success(), "{theirs:?}");
    let theirs = String::from_utf8_lossy(&theirs.stdout);
    let expected = lines(&theirs);
    assert_eq!(expected.len(), count, "{theirs}");
    assert_eq!(lines(&ours.stdout), expected, "ours:\n{}", ours.stdout);
}

#[test]
fn the_search_panels_stream_equals_ast_greps() {
    compare_with_ast_grep(&["run", "--pattern", "foo($A)", "--json=stream"], 3);
}

#[test]
fn the_search_panels_stream_with_a_rewrite_equals_ast_greps() {
    compare_with_ast_grep(
        &[
            "run",
            "--pattern",
            "foo($A)",
            "--json=stream",
            "--rewrite",
            "bar($A, $A)",
        ],
        3,
    );
    compare_with_ast_grep(
        &[
            "run",
            "-p",
            "foo($A)",
            "-r",
            "bar($A)",
            "--json=stream",
            "src",
        ],
        1,
    );
}

#[test]
fn a_rewrite_in_the_stream_writes_nothing() {
    let repo = fixture();
    let before = repo.snapshot();
    let out = repo.run(&["run", "-p", "foo($A)", "-r", "bar($A)", "--json=stream"]);
    out.assert_code(0);
    assert_eq!(out.stdout.lines().count(), 3, "{}", out.stdout);
    assert!(
        out.stdout.contains(r#""replacement":"bar(x)""#),
        "{}",
        out.stdout
    );
    assert_eq!(repo.snapshot(), before);
    assert!(repo.astedit_refs().is_empty());
    // The result cache keeps searches apart by their rewrite.
    let other = repo.run(&["run", "-p", "foo($A)", "-r", "qux($A)", "--json=stream"]);
    assert!(
        other.stdout.contains(r#""replacement":"qux(x)""#),
        "{}",
        other.stdout
    );
    let plain = repo.run(&["run", "-p", "foo($A)", "--json=stream"]);
    assert!(!plain.stdout.contains("replacement"), "{}", plain.stdout);
}

#[test]
fn run_with_a_command_is_still_a_command_preview() {
    let repo = fixture();
    let out = repo.run(&["run", "--", "sh", "-c", "echo 'x' >> a.js"]);
    out.assert_code(0);
    assert_eq!(repo.astedit_refs().len(), 1, "{}", out.stdout);
    let log = repo.run(&["log", "--json"]);
    assert_eq!(log.json()["events"][0]["kind"], "run");
}

#[test]
fn a_pattern_and_a_command_at_once_are_refused_naming_both_forms() {
    let repo = fixture();
    let before = repo.snapshot();
    let out = repo.run(&["run", "-p", "foo($A)", "--", "sh", "-c", "echo 'x' >> a.js"]);
    out.assert_code(2);
    assert!(out.stderr.contains("run -- CMD"), "{}", out.stderr);
    assert!(out.stderr.contains("run -p PATTERN"), "{}", out.stderr);
    assert_eq!(repo.snapshot(), before);
    assert!(repo.astedit_refs().is_empty());
}

#[test]
fn update_all_applies_as_one_edit_and_undo_restores() {
    let repo = fixture();
    let before = repo.snapshot();
    let out = repo.run(&["run", "-p", "foo($A)", "-r", "bar($A)", "-U"]);
    out.assert_code(0);
    assert_eq!(
        repo.read_string("a.js"),
        "const a = foo(1, 2);\nlet é = \"ü\"; bar(x);\n"
    );
    assert_eq!(
        repo.read_string("src/b.py"),
        "def f():\n    return bar(3)\n"
    );
    assert_eq!(repo.read_string("c.rs"), "fn main() {\n    bar(4);\n}\n");
    let log = repo.run(&["log", "--json"]).json();
    let events = log_events(&log);
    assert_eq!(events.len(), 2, "{log}");
    assert_eq!(events[0].0, "applied");
    assert_eq!(events[1].0, "staged");
    assert_eq!(events[0].1, events[1].1, "one preview, staged then applied");
    assert_eq!(log["events"][0]["kind"], "edit", "{log}");
    repo.run(&["undo"]).assert_code(0);
    assert_eq!(repo.snapshot(), before);
    repo.fsck();
}

#[test]
fn update_all_without_a_rewrite_is_refused() {
    let repo = fixture();
    let out = repo.run(&["run", "-p", "foo($A)", "-U"]);
    out.assert_code(2);
    assert!(out.stderr.contains("-r FIX"), "{}", out.stderr);
    // A command preview's flags have no meaning for a search: refused, not ignored.
    let out = repo.run(&["run", "-p", "foo($A)", "-r", "bar($A)", "--allow-failure"]);
    out.assert_code(2);
    assert!(out.stderr.contains("--allow-failure"), "{}", out.stderr);
    assert!(repo.astedit_refs().is_empty());
}
