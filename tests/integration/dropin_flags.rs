//! The rest of ast-grep 0.51.1's surface (issue 51, item 4): the flags of its `run`
//! taken by `run -p` as `grep` and `edit` take them, `scan -U/--globs/--no-ignore`,
//! `lsp --custom-languages`, `new` writing what ast-grep's `new` writes, and every flag
//! that means something else here refused with what to type instead (snapshotted).
//!
//! The comparisons with ast-grep need ast-grep 0.51.1 (`ASTEDIT_AST_GREP`, else
//! `ast-grep` on PATH); without one they are skipped with a message, unless
//! ASTEDIT_REQUIRE_AST_GREP is set.

use std::path::Path;

use crate::dropin_run::lines;
use crate::util::TestRepo;

fn fixture() -> TestRepo {
    let repo = TestRepo::new();
    repo.write("src/a.js", "foo(1);\nbar(foo(2));\n");
    repo.write("lib/b.js", "foo(3);\n");
    repo.write(".gitignore", "gen/\n");
    repo.write("gen/c.js", "foo(4);\n");
    repo.commit_all("init");
    repo
}

fn ast_grep_in(dir: &Path, args: &[&str]) -> Option<std::process::Output> {
    let ast_grep = crate::lsp_astgrep::ast_grep_or_skip()?;
    Some(
        std::process::Command::new(ast_grep)
            .args(args)
            .current_dir(dir)
            .output()
            .expect("run ast-grep"),
    )
}

#[test]
fn run_takes_ast_greps_search_flags_as_it_does() {
    let repo = fixture();
    for args in [
        &["run", "-p", "foo($A)", "--json=stream", "--globs", "src/**"][..],
        &[
            "run",
            "-p",
            "foo($A)",
            "--json=stream",
            "--no-ignore",
            "vcs",
        ],
        &[
            "run",
            "-p",
            "foo($A)",
            "--json=stream",
            "-j",
            "1",
            "-l",
            "js",
        ],
        // No capture by name: no `metaVariables` key, as in ast-grep.
        &["run", "-p", "foo(1)", "--json=stream"],
        &["run", "-p", "foo($$$)", "-r", "x", "--json=stream"],
        &[
            "run",
            "-p",
            "foo($A)",
            "-r",
            "baz($A)",
            "--json=stream",
            "--globs=!src/**",
        ],
        &[
            "run",
            "--pattern",
            "bar($A)",
            "--selector",
            "call_expression",
            "--strictness",
            "ast",
            "-l",
            "js",
            "--json=stream",
        ],
    ] {
        let ours = repo.run(args);
        ours.assert_code(0);
        if let Some(theirs) = ast_grep_in(repo.path(), args) {
            assert!(theirs.status.success(), "{args:?}: {theirs:?}");
            let theirs = String::from_utf8_lossy(&theirs.stdout);
            assert_eq!(
                lines(&ours.stdout),
                lines(&theirs),
                "{args:?}\n{}",
                ours.stdout
            );
        }
    }
    // The plain output, as grep's.
    let out = repo.run(&["run", "-p", "foo($A)", "--files-with-matches"]);
    out.assert_code(0);
    assert_eq!(out.stdout, "lib/b.js\nsrc/a.js\n");
    let out = repo.run(&["run", "-p", "foo(3)", "-A", "1", "--globs", "lib/**"]);
    assert_eq!(out.stdout, "lib/b.js:1:1: foo(3)\n", "{}", out.stderr);
    let out = repo.run_with(
        "",
        &["run", "-p", "foo($A)", "--stdin", "-l", "js"],
        &[],
        Some(b"foo(9)\n"),
    );
    assert_eq!(out.stdout, "STDIN:1:1: foo(9)\n", "{}", out.stderr);
    // A rewrite staged and applied with the input flags.
    repo.run(&[
        "run", "-p", "foo($A)", "-r", "baz($A)", "-U", "--globs", "lib/**",
    ])
    .assert_code(0);
    assert_eq!(repo.read_string("lib/b.js"), "baz(3);\n");
    assert_eq!(repo.read_string("src/a.js"), "foo(1);\nbar(foo(2));\n");
}

#[test]
fn scan_takes_update_all_globs_and_no_ignore() {
    let repo = fixture();
    repo.write(
        "astedit.toml",
        "[[rules]]\nid = \"foo\"\nlanguage = \"js\"\nrule.pattern = \"foo($A)\"\nfix = \"baz($A)\"\n",
    );
    repo.commit_all("rules");
    let out = repo.run(&["scan", "--globs", "lib/**", "--json"]);
    let report = out.json();
    let paths: Vec<&str> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap())
        .collect();
    assert_eq!(paths, ["lib/b.js"]);
    let out = repo.run(&["scan", "--no-ignore", "vcs", "--json"]);
    assert_eq!(
        out.json()["findings"].as_array().unwrap().len(),
        4,
        "{}",
        out.stdout
    );
    // As `scan --apply`: the findings fixed, exit 1 (they were found).
    repo.run(&["scan", "-U", "--globs", "src/**"])
        .assert_code(1);
    assert_eq!(repo.read_string("src/a.js"), "baz(1);\nbar(baz(2));\n");
    assert_eq!(repo.read_string("lib/b.js"), "foo(3);\n");
    let log = repo.run(&["log", "--json"]);
    assert!(log.stdout.contains("\"applied\""), "{}", log.stdout);
    repo.run(&["scan", "-U", "--check"]).assert_code(2);
}

#[test]
fn lsp_takes_custom_languages() {
    let repo = fixture();
    let out = repo.run_with("", &["lsp", "--custom-languages", "ignore"], &[], Some(b""));
    assert!(
        !out.stderr.contains("unexpected argument"),
        "{}",
        out.stderr
    );
}

/// Every refusal, one after the other: the flag as typed and what it says to type.
#[test]
fn flags_that_mean_something_else_here_are_refused_with_what_to_type() {
    let repo = fixture();
    repo.write("sgconfig.yml", "ruleDirs: [rules]\n");
    repo.write(
        "rules/r.yml",
        "id: r\nlanguage: js\nrule: {pattern: foo($A)}\n",
    );
    let mut all = String::new();
    for args in [
        &["run", "-p", "foo($A)", "-k", "call_expression", "-l", "js"][..],
        &["run", "-p", "foo($A)", "-r", "x", "--inspect", "summary"],
        &["run", "-p", "foo($A)", "--follow"],
        &["run", "-p", "foo($A)", "-i"],
        &["run", "-p", "foo($A)", "-r", "x", "--strictness", "ast"],
        &["run", "-p", "foo($A)", "-r", "x", "-C", "2"],
        &["scan", "--follow"],
        &["scan", "--stdin"],
        &["scan", "--files-with-matches"],
        &["scan", "-A", "2"],
        &["scan", "--inspect", "everything"],
        &["test", "--follow"],
        &["new"],
        &["new", "my-rule"],
        &["new", "rule"],
        &["new", "rule", "my-rule"],
        &["new", "test", "t", "-l", "js"],
        &["new", "rule", "x", "-l", "nosuch"],
        &["new", "project"],
    ] {
        let out = repo.run(args);
        all.push_str(&format!(
            "$ {}\n[{}] {}",
            args.join(" "),
            out.code,
            out.stderr
        ));
    }
    insta::assert_snapshot!(all);
}

/// What ast-grep's `new` writes, and ours, for the same commands.
fn scaffold(run: &dyn Fn(&[&str])) {
    run(&["new", "project", "-y"]);
    run(&["new", "rule", "my-rule", "-l", "rust", "-y"]);
    run(&["new", "test", "other", "-y"]);
    run(&["new", "util", "my-util", "-l", "ts", "-y"]);
}

#[test]
fn new_writes_what_ast_greps_new_writes() {
    let repo = TestRepo::new();
    scaffold(&|args| {
        repo.run(args).assert_code(0);
    });
    let ours: Vec<(String, String)> = crate::util::files_under(repo.path())
        .into_iter()
        .filter(|p| !p.components().any(|c| c.as_os_str() == ".git"))
        .map(|p| {
            let rel = p.strip_prefix(repo.path()).unwrap().display().to_string();
            (rel, std::fs::read_to_string(&p).unwrap())
        })
        .collect();
    insta::assert_debug_snapshot!(ours);
    let out = repo.run(&["new", "rule", "my-rule", "-l", "rust"]);
    out.assert_code(2);
    assert!(
        out.stderr.contains("rules/my-rule.yml exists already"),
        "{}",
        out.stderr
    );
    // The template's pattern is no rule yet: both tools say so.
    let out = repo.run(&["test"]);
    out.assert_code(2);
    assert!(
        out.stderr.contains("Try adding `kind` rule"),
        "{}",
        out.stderr
    );
    let dir = tempfile::tempdir().unwrap();
    let Some(_) = ast_grep_in(dir.path(), &["--version"]) else {
        return;
    };
    scaffold(&|args| {
        let out = ast_grep_in(dir.path(), args).unwrap();
        assert!(out.status.success(), "{args:?}: {out:?}");
    });
    for (path, text) in &ours {
        let theirs = std::fs::read_to_string(dir.path().join(path)).unwrap();
        if path == "sgconfig.yml" {
            // ast-grep 0.51.1 writes absolute paths; the same folders.
            let prefix = format!("{}/", dir.path().display());
            assert_eq!(&theirs.replace(&prefix, ""), text);
        } else {
            assert_eq!(&theirs, text, "{path}");
        }
    }
    let theirs = ast_grep_in(repo.path(), &["test"]).unwrap();
    let stderr = String::from_utf8_lossy(&theirs.stderr);
    assert!(stderr.contains("Try adding `kind` rule"), "{stderr}");
}
