//! Integration tests: a new user's first day, round three (issue 52): output for
//! pipes, the pre-commit hook on the commit's own lines, positions in the file as it
//! is, the small things, the guide's examples.

use crate::util::TestRepo;

// Item 5: a pipe's reader gets every match and nothing else on stdout: no default
// cap off a terminal (ast-grep, rg and `git grep` have none), and where an asked-for
// cap stopped the list is said on stderr.
#[test]
fn grep_into_a_pipe_has_no_default_cap_and_keeps_notes_off_stdout() {
    let repo = TestRepo::new();
    let body: String = (0..403).map(|i| format!("f({i});\n")).collect();
    repo.write("a.js", body);
    repo.commit_all("init");

    let out = repo.run(&["grep", "-p", "f($A)"]);
    out.assert_code(0);
    assert_eq!(out.stdout.lines().count(), 403, "{}", out.stderr);
    assert!(out.stdout.lines().all(|l| l.starts_with("a.js:")));
    assert!(!out.stderr.contains("stopped"), "{}", out.stderr);

    let out = repo.run(&["grep", "-p", "f($A)", "--max-count", "200"]);
    out.assert_code(0);
    assert_eq!(out.stdout.lines().count(), 200, "{}", out.stdout);
    assert!(
        out.stderr.contains("stopped at 200 of 403 matches"),
        "{}",
        out.stderr
    );
}

/// A fix that writes a line above the one it fixes, and a rule with no fix.
const LINE_ADDING_RULES: &str = r#"
[[rules]]
id = "no-var"
language = "javascript"
severity = "error"
message = "use let"
rule.pattern = "var $A = $B"
fix = "// was var\nlet $A = $B"

[[rules]]
id = "no-eval"
language = "javascript"
severity = "error"
message = "no eval"
rule.pattern = "eval($X)"
"#;

// Item 4: the findings a fix leaves are numbered by the file as it is (on disk, or in
// the index with --cached), not by the fixed text a line longer.
#[test]
fn check_numbers_findings_left_for_a_person_by_the_file_as_it_is() {
    let repo = TestRepo::new();
    repo.write("astedit.toml", LINE_ADDING_RULES);
    repo.write("src/a.js", "var x = 1;\nf(x);\neval(s);\n");
    repo.commit_all("init");
    let before = repo.snapshot();

    let json = repo
        .run(&["--json", "scan", "--check"])
        .assert_code(1)
        .json();
    let left = json["remaining"].as_array().expect("remaining");
    assert_eq!(left.len(), 1, "{json}");
    assert_eq!(left[0]["rule"], "no-eval");
    assert_eq!(left[0]["line"], 3, "{json}");
    assert_eq!(left[0]["end_line"], 3, "{json}");

    let out = repo.run(&["scan", "--check"]);
    out.assert_code(1);
    assert!(
        format!("{}{}", out.stdout, out.stderr).contains("src/a.js:3:"),
        "{}\n{}",
        out.stdout,
        out.stderr
    );

    // In the index with --cached: a staged line above moves it, the work tree not.
    repo.write("src/a.js", "// top\nvar x = 1;\nf(x);\neval(s);\n");
    repo.git(&["add", "src/a.js"]);
    repo.write("src/a.js", "var x = 1;\nf(x);\neval(s);\n");
    let json = repo
        .run(&["--json", "scan", "--check", "--cached"])
        .assert_code(1)
        .json();
    assert_eq!(json["remaining"][0]["line"], 4, "{json}");
    repo.git(&["checkout", "HEAD", "--", "src/a.js"]);
    assert_eq!(repo.snapshot(), before, "--check wrote");
}
