//! ast-grep's `--inspect summary|entity` on `run -p` and `scan` (issue 51 item 4): the
//! same `sg: …` lines on stderr as ast-grep 0.51.1 for the same project, compared as
//! sets (ast-grep prints each file's line from the thread that read it). The
//! comparison needs ast-grep 0.51.1 (`ASTEDIT_AST_GREP`, else `ast-grep` on PATH);
//! without it only our lines are checked.

use crate::util::TestRepo;

/// Files of three languages, one over both tools' size limit and one with no
/// language; no hidden file (git-astedit reads tracked hidden files, ast-grep does not).
fn fixture() -> TestRepo {
    let repo = TestRepo::new();
    repo.write("src/a.js", "foo(1);\n");
    repo.write("lib/b.js", "foo(3);\n");
    repo.write("src/c.py", "foo(2)\n");
    repo.write("src/m.rs", "fn main() { foo(4); }\n");
    repo.write("notes.txt", "foo(5)\n");
    repo.write("big.js", "foo(6);\n".repeat(600_000));
    repo.commit_all("init");
    repo
}

/// The `sg: ` lines of a stderr, sorted.
fn traced(stderr: &str) -> Vec<String> {
    let mut lines: Vec<String> = stderr
        .lines()
        .filter(|l| l.starts_with("sg: "))
        .map(str::to_string)
        .collect();
    lines.sort();
    lines
}

/// Ours, checked against `expected`, then against ast-grep's when there is one.
fn same_as_ast_grep(repo: &TestRepo, args: &[&str], expected: &[&str]) {
    let ours = repo.run(args);
    assert_eq!(traced(&ours.stderr), expected, "{args:?}: {}", ours.stderr);
    let Some(ast_grep) = crate::lsp_astgrep::ast_grep_or_skip() else {
        return;
    };
    let theirs = std::process::Command::new(ast_grep)
        .args(args)
        .current_dir(repo.path())
        .output()
        .expect("run ast-grep");
    let theirs = String::from_utf8_lossy(&theirs.stderr).replace(
        &repo.path().display().to_string(),
        &repo.path().canonicalize().unwrap().display().to_string(),
    );
    assert_eq!(traced(&ours.stderr), traced(&theirs), "{args:?}");
}

#[test]
fn run_inspect_says_what_ast_grep_says() {
    let repo = fixture();
    let plain = repo.run(&["run", "-p", "foo($A)"]);
    let entity = &["run", "-p", "foo($A)", "--inspect", "entity"];
    same_as_ast_grep(
        &repo,
        entity,
        &[
            "sg: entity|file|big.js: skipped=fileTooLarge",
            "sg: entity|file|lib/b.js: language=JavaScript",
            "sg: entity|file|src/a.js: language=JavaScript",
            "sg: entity|file|src/c.py: language=Python",
            "sg: entity|file|src/m.rs: language=Rust",
            "sg: summary|file: scannedFileCount=6,skippedFileCount=1",
            "sg: summary|project: isProject=false",
        ],
    );
    // The search's output is the same with or without it.
    assert_eq!(repo.run(entity).stdout, plain.stdout);
    same_as_ast_grep(
        &repo,
        &["run", "-p", "foo($A)", "-l", "js", "--inspect", "summary"],
        &[
            "sg: summary|file: scannedFileCount=3,skippedFileCount=1",
            "sg: summary|project: isProject=false",
        ],
    );
    same_as_ast_grep(
        &repo,
        &[
            "run",
            "-p",
            "foo($A)",
            "--json=stream",
            "--inspect",
            "nothing",
        ],
        &[],
    );
}

#[test]
fn scan_inspect_says_what_ast_grep_says() {
    let repo = fixture();
    repo.write("sgconfig.yml", "ruleDirs: [rules]\n");
    repo.write(
        "rules/r.yml",
        "id: no-foo\nlanguage: js\nseverity: warning\nmessage: m\nrule: {pattern: foo($A)}\n\
         ---\nid: off-one\nlanguage: js\nseverity: off\nrule: {pattern: bar($A)}\n\
         ---\nid: py-foo\nlanguage: python\nmessage: m\nignores: ['src/**']\n\
         rule: {pattern: foo($A)}\n",
    );
    repo.commit_all("rules");
    let dir = repo.path().canonicalize().unwrap();
    let project = format!(
        "sg: summary|project: isProject=true,projectDir={}",
        dir.display()
    );
    same_as_ast_grep(
        &repo,
        &["scan", "--inspect", "entity"],
        &[
            "sg: entity|file|big.js: skipped=fileTooLarge",
            "sg: entity|file|lib/b.js: language=JavaScript,appliedRuleCount=1",
            "sg: entity|file|src/a.js: language=JavaScript,appliedRuleCount=1",
            "sg: entity|file|src/c.py: language=Python,appliedRuleCount=0",
            "sg: entity|rule|no-foo: finalSeverity=Warning",
            "sg: entity|rule|py-foo: finalSeverity=Hint",
            "sg: summary|file: scannedFileCount=4,skippedFileCount=1",
            &project,
            "sg: summary|rule: effectiveRuleCount=2,skippedRuleCount=1",
        ],
    );
    same_as_ast_grep(
        &repo,
        &["scan", "--inspect", "summary", "--error=no-foo"],
        &[
            "sg: summary|file: scannedFileCount=4,skippedFileCount=1",
            &project,
            "sg: summary|rule: effectiveRuleCount=2,skippedRuleCount=1",
        ],
    );
    let bad = repo.run(&["scan", "--inspect", "everything"]);
    bad.assert_code(2);
    assert!(
        bad.stderr.contains("nothing, summary or entity"),
        "{}",
        bad.stderr
    );
}
