//! The `scan` flags ast-grep users type: `-c`, `-r FILE`, `--filter`, severity
//! overrides, `--max-results`; and what to type instead where the meaning differs.

use crate::suppress::findings;
use crate::util::TestRepo;

const NO_VAR: &str = "id: no-var\nlanguage: TypeScript\nseverity: error\nmessage: use let\n\
                      rule: {pattern: 'var $A = $B'}\nfix: 'let $A = $B'\n";
const NO_LOG: &str = "id: no-log\nlanguage: TypeScript\nseverity: warning\nmessage: no log\n\
                      rule: {pattern: 'console.log($$$A)'}\n";

fn project() -> TestRepo {
    let repo = TestRepo::new();
    repo.write("sgconfig.yml", "ruleDirs: [rules]\n");
    repo.write("rules/no-var.yml", NO_VAR);
    repo.write("rules/no-log.yml", NO_LOG);
    repo.write(
        "a.ts",
        "var a = 1;\nconsole.log(a);\n// ast-grep-ignore: no-eval\nvar b = 2;\n",
    );
    repo.commit_all("project");
    repo
}

fn scan(repo: &TestRepo, args: &[&str]) -> Vec<String> {
    let mut full = vec!["--json", "scan"];
    full.extend_from_slice(args);
    findings(&repo.run(&full).json())
}

#[test]
fn rule_files_ids_and_filters() {
    let repo = project();
    // -r FILE runs that file's rules only.
    let only_log = scan(&repo, &["-r", "rules/no-log.yml"]);
    assert!(
        only_log.iter().all(|f| !f.contains("no-var")),
        "{only_log:?}"
    );
    assert!(only_log.iter().any(|f| f.contains("no-log")));
    // -c is --config.
    assert_eq!(scan(&repo, &["-c", "sgconfig.yml"]), scan(&repo, &[]));
    // --rule with an id says what to type instead.
    let out = repo.run(&["--json", "scan", "--rule", "no-var"]);
    out.assert_code(2);
    let message = out.json()["error"]["message"]
        .as_str()
        .unwrap_or("")
        .to_string();
    assert!(message.contains("--rule-id no-var"), "{message}");
    // --rule-id and --filter select by id.
    let by_id = scan(&repo, &["--rule-id", "no-var"]);
    assert_eq!(by_id, ["a.ts no-var 1:1 error", "a.ts no-var 4:1 error"]);
    assert_eq!(scan(&repo, &["--filter", "^no-v"]), by_id);
    repo.run(&["scan", "--filter", "^zzz"]).assert_code(2);
    repo.run(&["scan", "--filter", "("]).assert_code(2);
}

#[test]
fn severity_overrides_and_max_results() {
    let repo = project();
    assert_eq!(
        scan(&repo, &[]),
        [
            "a.ts no-var 1:1 error",
            "a.ts no-log 2:1 warning",
            "a.ts unused-suppression 3:1 hint",
            "a.ts no-var 4:1 error",
        ]
    );
    // Every rule a warning: no error, exit 0.
    let out = repo.run(&["--json", "scan", "--warning"]);
    out.assert_code(0);
    assert!(findings(&out.json())
        .iter()
        .all(|f| f.ends_with(" warning")));
    // One rule off, another an error; the unused comment an error too.
    assert_eq!(
        scan(
            &repo,
            &["--off=no-var", "--error=no-log,unused-suppression"]
        ),
        ["a.ts no-log 2:1 error", "a.ts unused-suppression 3:1 error"]
    );
    // --off=unused-suppression silences the judgement.
    assert_eq!(scan(&repo, &["--off=unused-suppression"]).len(), 3);
    // --info and --hint, for one rule or all.
    assert_eq!(
        scan(&repo, &["--info=no-var", "--hint=no-log"]),
        [
            "a.ts no-var 1:1 info",
            "a.ts no-log 2:1 hint",
            "a.ts unused-suppression 3:1 hint",
            "a.ts no-var 4:1 info",
        ]
    );
    let out = repo.run(&["--json", "scan", "--info"]);
    out.assert_code(0);
    assert!(findings(&out.json()).iter().all(|f| f.ends_with(" info")));
    // --max-results keeps the first N and says how many more.
    let out = repo.run(&["--json", "scan", "--max-results", "1"]);
    let v = out.json();
    assert_eq!(findings(&v), ["a.ts no-var 1:1 error"]);
    // The exit code still counts every error.
    out.assert_code(1);
    let text = repo.run(&["scan", "--max-results", "1"]);
    assert!(
        text.stderr
            .contains("3 more findings not shown (--max-results 1)"),
        "{}",
        text.stderr
    );
}

// ------------------------------------------------------------------ grep and edit

/// What ast-grep 0.51.1 prints for `ast-grep run -p 'console.log($A, $$$R)'
/// --json=stream` over `a.ts` below (recorded from the real tool).
const AST_GREP_STREAM_LINE: &str = r#"{"text":"console.log(a, b)","range":{"byteOffset":{"start":11,"end":28},"start":{"line":1,"column":0},"end":{"line":1,"column":17}},"file":"a.ts","lines":"console.log(a, b);","charCount":{"leading":0,"trailing":1},"language":"TypeScript","metaVariables":{"single":{"A":{"text":"a","range":{"byteOffset":{"start":23,"end":24},"start":{"line":1,"column":12},"end":{"line":1,"column":13}}}},"multi":{"R":[{"text":"b","range":{"byteOffset":{"start":26,"end":27},"start":{"line":1,"column":15},"end":{"line":1,"column":16}}}]},"transformed":{}}}"#;

fn grep_repo() -> TestRepo {
    let repo = TestRepo::new();
    repo.write("a.ts", "var a = 1;\nconsole.log(a, b);\nfoo(x)\n");
    repo.write("sub/b.ts", "foo(/* c */ y)\n");
    repo.write("vendor/c.ts", "foo(z)\n");
    repo.write(".gitignore", "ignored.ts\nbuild/\n");
    repo.write("ignored.ts", "foo(i)\n");
    repo.write("build/out.ts", "foo(o)\n");
    repo.commit_all("grep");
    repo
}

fn message(out: &crate::util::Output) -> String {
    out.json()["error"]["message"]
        .as_str()
        .unwrap_or("")
        .to_string()
}

#[test]
fn json_styles_and_the_ast_grep_stream() {
    let repo = grep_repo();
    // stream: ast-grep's objects, byte for byte, one a line, and nothing else.
    let out = repo.run(&["--json=stream", "grep", "-p", "console.log($A, $$$R)"]);
    out.assert_code(0);
    assert_eq!(out.stdout, format!("{AST_GREP_STREAM_LINE}\n"));
    // Every match, past grep's default cap of 200, and one line each.
    let many = "foo(1);\n".repeat(250);
    repo.write("many.ts", &many);
    let out = repo.run(&["--json=stream", "grep", "-p", "foo(1)", "many.ts"]);
    assert_eq!(out.stdout.lines().count(), 250);
    for line in out.stdout.lines() {
        let v: serde_json::Value = serde_json::from_str(line).expect("one object a line");
        assert_eq!(v["file"], "many.ts");
    }
    // pretty: the same report as compact, indented.
    let compact = repo.run(&["--json", "grep", "-p", "foo($A)"]);
    let pretty = repo.run(&["--json=pretty", "grep", "-p", "foo($A)"]);
    assert!(pretty.stdout.lines().count() > 5, "{}", pretty.stdout);
    assert_eq!(pretty.json(), compact.json());
    assert_eq!(
        repo.run(&["--json=compact", "grep", "-p", "foo($A)"])
            .json(),
        compact.json()
    );
    // pretty for scan too.
    repo.write("sgconfig.yml", "ruleDirs: [rules]\n");
    repo.write("rules/no-var.yml", NO_VAR);
    let scan = repo.run(&["--json=pretty", "scan"]);
    assert!(scan.stdout.lines().count() > 5);
    assert_eq!(scan.json()["findings"][0]["rule"], "no-var");
    // stream is grep's; elsewhere the error says what to type.
    // (On stderr, as text: a stream's reader takes every stdout line for a match.)
    let out = repo.run(&["--json=stream", "list"]);
    out.assert_code(2);
    assert_eq!(out.stdout, "");
    assert!(out.stderr.contains("use --json"), "{}", out.stderr);
    repo.run(&["--json=yaml", "list"]).assert_code(2);
}

#[test]
fn pattern_object_flags() {
    let repo = grep_repo();
    let lines = |args: &[&str]| -> Vec<String> {
        let mut full = vec!["grep"];
        full.extend_from_slice(args);
        repo.run(&full).stdout.lines().map(str::to_string).collect()
    };
    // signature: kinds only, so `foo(a)` matches every one-argument call of foo.
    assert_eq!(lines(&["-p", "foo(a)", "a.ts"]), Vec::<String>::new());
    assert_eq!(
        lines(&["-p", "foo(a)", "--strictness", "signature", "a.ts", "sub"]),
        ["a.ts:3:1: foo(x)", "sub/b.ts:1:1: foo(/* c */ y)"]
    );
    assert_eq!(
        lines(&["-p", "foo(y)", "--strictness", "cst", "sub"]),
        Vec::<String>::new()
    );
    assert_eq!(
        lines(&["-p", "foo(y)", "--strictness", "relaxed", "sub"]),
        ["sub/b.ts:1:1: foo(/* c */ y)"]
    );
    // --selector: the field inside a class body.
    repo.write("k.ts", "class A { x = 1; y = 2 }\n");
    assert_eq!(
        lines(&[
            "-p",
            "class A { $F = $V }",
            "--selector",
            "public_field_definition",
            "-l",
            "ts",
            "k.ts"
        ]),
        ["k.ts:1:11: x = 1", "k.ts:1:18: y = 2"]
    );
    // Without -l, as in ast-grep: each language where the pattern has such a node.
    assert_eq!(
        lines(&[
            "-p",
            "class A { $F = $V }",
            "--selector",
            "public_field_definition",
            "k.ts"
        ]),
        ["k.ts:1:11: x = 1", "k.ts:1:18: y = 2"]
    );
    // -k: ours differs; the error gives the scan to run instead.
    let out = repo.run(&[
        "--json",
        "grep",
        "-p",
        "x",
        "-k",
        "call_expression",
        "-l",
        "ts",
    ]);
    out.assert_code(2);
    assert!(
        message(&out).contains(
            "scan --inline-rules '{id: kind, language: ts, rule: {kind: call_expression}}'"
        ),
        "{}",
        out.stdout
    );
    // --debug-query: the pattern's tree on stderr, the search as usual.
    let out = repo.run(&[
        "grep",
        "-p",
        "foo($A)",
        "-l",
        "ts",
        "--debug-query=cst",
        "a.ts",
    ]);
    out.assert_code(0);
    assert_eq!(out.stdout, "a.ts:3:1: foo(x)\n");
    assert!(
        out.stderr.contains(
            "Debug CST:\nprogram (0,0)-(0,7)\n  expression_statement (0,0)-(0,7)\n    \
             call_expression (0,0)-(0,7)\n      function: identifier (0,0)-(0,3)\n      \
             arguments: arguments (0,3)-(0,7)\n        ( (0,3)-(0,4)\n        identifier \
             (0,4)-(0,6)\n        ) (0,6)-(0,7)"
        ),
        "{}",
        out.stderr
    );
    let out = repo.run(&["grep", "-p", "foo($A)", "-l", "ts", "--debug-query", "a.ts"]);
    assert!(out.stderr.contains("Debug AST:\n"), "{}", out.stderr);
    assert!(!out.stderr.contains("( (0,3)"), "{}", out.stderr);
    let out = repo.run(&[
        "grep",
        "-p",
        "foo($A)",
        "-l",
        "ts",
        "--debug-query=sexp",
        "a.ts",
    ]);
    assert!(
        out.stderr.contains("Debug Sexp:\n(program"),
        "{}",
        out.stderr
    );
    repo.run(&["grep", "-p", "foo($A)", "-l", "ts", "--debug-query=pattern"])
        .assert_code(2);
}

#[test]
fn which_files_and_how_they_are_printed() {
    let repo = grep_repo();
    let lines = |args: &[&str]| -> Vec<String> {
        let mut full = vec!["grep", "-p", "foo($A)"];
        full.extend_from_slice(args);
        repo.run(&full).stdout.lines().map(str::to_string).collect()
    };
    assert_eq!(
        lines(&["--files-with-matches"]),
        ["a.ts", "sub/b.ts", "vendor/c.ts"]
    );
    repo.run(&["--json", "grep", "-p", "foo($A)", "--files-with-matches"])
        .assert_code(2);
    // --globs: gitignore-style, `!` excludes, a name matches at any depth.
    assert_eq!(
        lines(&[
            "--globs",
            "*.ts",
            "--globs",
            "!vendor",
            "--files-with-matches"
        ]),
        ["a.ts", "sub/b.ts"]
    );
    assert_eq!(
        lines(&["--globs", "sub/*.ts", "--files-with-matches"]),
        ["sub/b.ts"]
    );
    repo.run(&["grep", "-p", "foo($A)", "--globs", "a[.ts"])
        .assert_code(2);
    // --no-ignore vcs: ignored files and folders too; hidden and dot change nothing.
    assert_eq!(
        lines(&["--no-ignore", "vcs", "--files-with-matches"]),
        [
            "a.ts",
            "build/out.ts",
            "ignored.ts",
            "sub/b.ts",
            "vendor/c.ts"
        ]
    );
    assert_eq!(
        lines(&["--no-ignore", "hidden", "--files-with-matches"]),
        ["a.ts", "sub/b.ts", "vendor/c.ts"]
    );
    // --stdin: the text on stdin, named STDIN, in the language given.
    let out = repo.run_with(
        ".",
        &["grep", "-p", "foo($A)", "-l", "ts", "--stdin"],
        &[],
        Some(b"bar();\nfoo(9)\n"),
    );
    out.assert_code(0);
    assert_eq!(out.stdout, "STDIN:2:1: foo(9)\n");
    let out = repo.run_with(
        ".",
        &["--json", "grep", "-p", "foo($A)", "--stdin"],
        &[],
        Some(b"foo(9)\n"),
    );
    out.assert_code(2);
    assert!(message(&out).contains("add -l LANG"), "{}", out.stdout);
    // --follow: the error says what to do instead.
    let out = repo.run(&["--json", "grep", "-p", "foo($A)", "--follow"]);
    out.assert_code(2);
    assert!(message(&out).contains("pathspec instead"), "{}", out.stdout);
}

#[test]
fn grep_and_edit_honour_language_globs() {
    let repo = TestRepo::new();
    repo.write("q.blk", "foo(7);\n");
    repo.write("other.yml", "languageGlobs:\n  typescript: ['*.blk']\n");
    repo.commit_all("blk");
    // No sgconfig.yml at the root: `.blk` has no language.
    repo.run(&["grep", "-p", "foo($A)", "q.blk"]).assert_code(1);
    // -c names the project config.
    let out = repo.run(&["grep", "-c", "other.yml", "-p", "foo($A)"]);
    out.assert_code(0);
    assert_eq!(out.stdout, "q.blk:1:1: foo(7)\n");
    // An sgconfig.yml at the root is read without -c, by edit too.
    repo.write("sgconfig.yml", "languageGlobs:\n  typescript: ['*.blk']\n");
    repo.run(&["edit", "-p", "foo($A)", "-r", "bar($A)", "--apply"])
        .assert_code(0);
    assert_eq!(repo.read_string("q.blk"), "bar(7);\n");
    let out = repo.run(&["--json", "grep", "-c", "missing.yml", "-p", "x"]);
    out.assert_code(2);
}

// ------------------------------------------------------------------ scan

#[test]
fn inline_rules_metadata_and_loading_notices() {
    let repo = project();
    let rule = "id: inline-var\nlanguage: TypeScript\nseverity: warning\nmessage: m\n\
                metadata: {team: core, level: 2}\nrule: {pattern: 'var $A = $B'}\n\
                ---\nid: inline-log\nlanguage: TypeScript\nmessage: log\n\
                rule: {pattern: 'console.log($$$A)'}\n";
    // Only the inline rules run, not the project's; so the project's suppression
    // comment on line 3 is not reported as unused (nor is it by ast-grep 0.51.1).
    let found = scan(&repo, &["--inline-rules", rule]);
    assert_eq!(
        found,
        [
            "a.ts inline-var 1:1 warning",
            "a.ts inline-log 2:1 hint",
            "a.ts inline-var 4:1 warning",
        ]
    );
    // Metadata only when asked for, and only with --json.
    let v = repo.run(&["--json", "scan", "--inline-rules", rule]).json();
    assert!(v["findings"][0].get("metadata").is_none());
    let v = repo
        .run(&[
            "--json",
            "scan",
            "--inline-rules",
            rule,
            "--include-metadata",
        ])
        .json();
    assert_eq!(
        v["findings"][0]["metadata"],
        serde_json::json!({"team": "core", "level": 2})
    );
    assert!(v["findings"][1].get("metadata").is_none());
    repo.run(&["scan", "--include-metadata"]).assert_code(2);
    repo.run(&["scan", "--inline-rules", rule, "-r", "rules/no-var.yml"])
        .assert_code(2);
    // What loading the rules says reaches the JSON report.
    repo.write(
        "sgconfig.yml",
        "ruleDirs: [rules]\ncustomLanguages: {mine: {libraryPath: mine.so}}\n",
    );
    let v = repo.run(&["--json", "scan"]).json();
    let notices = v["notices"].as_array().cloned().unwrap_or_default();
    assert!(
        notices
            .iter()
            .any(|n| n.as_str().unwrap_or("").contains("customLanguages")),
        "{v}"
    );
}
