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

/// `==` is fixed to `===`, everywhere it is found.
const STRICT_RULE: &str = r#"
[[rules]]
id = "strict-equality"
language = "javascript"
severity = "warning"
message = "use ==="
rule.pattern = "$A == $B"
fix = "$A === $B"
"#;

// Item 3: the hook checks the lines the commit adds or changes, and its hint makes
// those fixes only; `--all` keeps the check of whole files; an old hook of ours is
// rewritten by `hook install`.
#[test]
fn the_hook_checks_the_commit_and_its_hint_fixes_only_that() {
    let repo = TestRepo::new();
    repo.write("astedit.toml", STRICT_RULE);
    for name in ["old1", "old2", "old3"] {
        repo.write(&format!("src/{name}.js"), "if (a == b) {}\n");
    }
    repo.write("src/new.js", "let n = 1;\nif (c == d) {}\n");
    repo.commit_all("old findings");
    let hook = repo.path().join(".git/hooks/pre-commit");
    // A hook an earlier version wrote: ours (the marker), today's whole-file flags.
    std::fs::create_dir_all(hook.parent().expect("hooks dir")).expect("mkdir");
    std::fs::write(
        &hook,
        "#!/bin/sh\n# git-astedit pre-commit hook (installed by `git astedit hook install`).\n\
         exec git-astedit scan --check --cached\n",
    )
    .expect("old hook");

    let out = repo.run(&["hook", "install"]);
    out.assert_code(0);
    assert!(
        out.stdout
            .contains("commits run `git astedit scan --check --cached --changed-lines`"),
        "{}",
        out.stdout
    );
    let script = std::fs::read_to_string(&hook).expect("hook");
    assert!(
        script.contains(" scan --check --cached --changed-lines\n"),
        "{script}"
    );
    assert!(!script.contains(" scan --check --cached\n"), "{script}");

    // A commit changing one line of one file: blocked for that line only.
    repo.write("src/new.js", "let n = 2;\nif (c == d) {}\nif (e == f) {}\n");
    repo.git(&["add", "src/new.js"]);
    let blocked = repo.git_output(&["commit", "-q", "-m", "touch new.js"]);
    assert_eq!(blocked.code, 1, "{}", blocked.stderr);
    let said = format!("{}{}", blocked.stdout, blocked.stderr);
    assert!(said.contains("+if (e === f) {}"), "{said}");
    assert!(!said.contains("old1.js"), "{said}");
    assert!(!said.contains("+if (c === d) {}"), "{said}");
    let hint = "run `git astedit scan --apply --cached --changed-lines` to make them";
    assert!(said.contains(hint), "{said}");

    // The hint fixes that line, in the work tree and the index; the commit goes
    // through; the old findings are left alone.
    // (Exit 1: it changed files, as a fixing hook does.)
    repo.run(&["scan", "--apply", "--cached", "--changed-lines"])
        .assert_code(1);
    let staged = repo.git(&["show", ":src/new.js"]);
    assert_eq!(staged, "let n = 2;\nif (c == d) {}\nif (e === f) {}\n");
    assert_eq!(repo.read_string("src/new.js"), staged);
    let ok = repo.git_output(&["commit", "-q", "-m", "touch new.js"]);
    assert_eq!(ok.code, 0, "{}", ok.stderr);
    assert_eq!(repo.read_string("src/old1.js"), "if (a == b) {}\n");

    // --all: today's check of whole files, said as it is.
    let out = repo.run(&["hook", "install", "--all"]);
    out.assert_code(0);
    assert!(
        out.stdout
            .contains("commits run `git astedit scan --check --cached`."),
        "{}",
        out.stdout
    );
    let script = std::fs::read_to_string(&hook).expect("hook");
    assert!(script.contains(" scan --check --cached\n"), "{script}");
}
