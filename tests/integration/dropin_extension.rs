//! VS Code's ast-grep search panel with git-astedit as `astGrep.serverPath` (issue 51
//! item 1). The extension (ast-grep/ast-grep-vscode, `src/extension/search.ts`)
//! spawns `<serverPath> run --pattern P --json=stream [--selector K] [--rewrite R]
//! [INCLUDE]` for a pattern, `<serverPath> scan --inline-rules YAML --json=stream
//! [INCLUDE…|--globs=G…]` for its YAML rule search, with the workspace folder as its
//! current folder, parses each stdout line as JSON, and takes a search as finished
//! on exit 0 or 1. Each case here runs that argv in that folder
//! with both tools: stdout equal byte for byte line by line (the lines sorted: ast-grep
//! prints files in its threads' order), the same exit code, nothing else on stdout.
//! Needs ast-grep 0.51.1 (`ASTEDIT_AST_GREP`, else `ast-grep` on PATH); skipped with a
//! message without one, unless ASTEDIT_REQUIRE_AST_GREP is set.

use crate::util::TestRepo;

/// A workspace with what moves a line's bytes: non-ASCII text before a match (byte
/// offsets against character columns), a match over three lines, a match in a
/// folder the panel's "include" names, and three languages.
fn workspace() -> TestRepo {
    let repo = TestRepo::new();
    repo.write(
        "app.js",
        "const s = \"héllo 😀\"; foo(s, 1);\nfoo(\n  a,\n  b);\n",
    );
    repo.write("src/lib.py", "def f():\n    return foo(3)\n");
    repo.write("src/deep/x.ts", "export const y = foo(\"ü\", [1, 2]);\n");
    repo.write("main.rs", "fn main() {\n    foo(4, 5);\n}\n");
    repo.commit_all("init");
    repo
}

/// The extension's argv for a query (`buildCommand`).
fn argv<'a>(pattern: &'a str, rewrite: Option<&'a str>, include: Option<&'a str>) -> Vec<&'a str> {
    let mut args = vec!["run", "--pattern", pattern, "--json=stream"];
    if let Some(r) = rewrite {
        args.extend(["--rewrite", r]);
    }
    args.extend(include);
    args
}

/// ast-grep run with `args` in the repository's folder.
pub(crate) fn run_ast_grep(
    ast_grep: &std::path::Path,
    repo: &TestRepo,
    args: &[&str],
) -> std::process::Output {
    std::process::Command::new(ast_grep)
        .args(args)
        .current_dir(repo.path())
        .output()
        .expect("run ast-grep")
}

fn sorted_lines(stdout: &[u8]) -> Vec<String> {
    let text = String::from_utf8(stdout.to_vec()).expect("UTF-8 stdout");
    let mut lines: Vec<String> = text.split_inclusive('\n').map(str::to_string).collect();
    lines.sort();
    lines
}

/// A pattern being typed (`foo(`), a YAML rule being typed (no `language` yet), an
/// unknown language or flag: nothing on stdout, the error on stderr. A JSON error object there was taken for a match, and the
/// extension's handler threw on its missing `range`.
#[test]
fn an_error_in_the_stream_is_on_stderr() {
    let repo = workspace();
    for args in [
        argv("foo(", None, None),
        vec![
            "run",
            "--pattern",
            "foo($A)",
            "--json=stream",
            "--lang",
            "nosuch",
        ],
        vec!["scan", "--inline-rules", "id: y", "--json=stream"],
        vec![
            "run",
            "--pattern",
            "foo($A)",
            "--json=stream",
            "--no-such-flag",
        ],
    ] {
        let out = repo.run(&args);
        out.assert_code(2);
        assert_eq!(out.stdout, "", "{args:?}");
        assert!(
            out.stderr.starts_with("error: "),
            "{args:?}: {}",
            out.stderr
        );
    }
}

#[test]
fn the_extensions_argv_prints_ast_greps_bytes() {
    let Some(ast_grep) = crate::lsp_astgrep::ast_grep_or_skip() else {
        return;
    };
    let repo = workspace();
    let cases = [
        (argv("foo($A, $$$B)", None, None), 4),
        (argv("foo($A, $$$B)", Some("bar($A, $$$B)"), None), 4),
        (argv("foo($A, $$$B)", Some("bar(\n  $A\n)"), Some("src")), 1),
        (argv("foo($A)", Some("$A.foo()"), Some("src")), 1),
        // The panel's selector without a language: languages without that kind in
        // the pattern (Python's call is a `call`) are skipped, not an error.
        (
            {
                let mut a = argv("foo($A, $$$B)", None, None);
                a.extend(["--selector", "call_expression"]);
                a
            },
            4,
        ),
        // No capture by name: no `metaVariables`.
        (argv("foo(4, 5)", None, None), 1),
        (argv("nothing($X)", None, None), 0),
    ];
    for (args, count) in cases {
        let theirs = run_ast_grep(&ast_grep, &repo, &args);
        let ours = repo.run(&args);
        let expected = sorted_lines(&theirs.stdout);
        assert_eq!(expected.len(), count, "{args:?}: {expected:#?}");
        assert_eq!(
            sorted_lines(ours.stdout.as_bytes()),
            expected,
            "{args:?}: ours\n{}",
            ours.stdout
        );
        assert_eq!(Some(ours.code), theirs.status.code(), "{args:?}");
        // Every line is one JSON object, as the extension parses it.
        for line in &expected {
            let v: serde_json::Value = serde_json::from_str(line).unwrap();
            assert!(v["range"]["byteOffset"]["start"].is_u64(), "{line}");
        }
    }
}

/// The panel's YAML rule search (`buildYAMLCommand`): the argv, then the include
/// paths, or `--globs=G` each when one has a `*`.
fn yaml_argv<'a>(rules: &'a str, include: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec!["scan", "--inline-rules", rules, "--json=stream"];
    args.extend(include);
    args
}

/// A YAML rule search prints ast-grep 0.51.1's finding objects byte for byte: the
/// match, its `metaVariables` (with a `transform`'s values, and the `secondary` nodes
/// of a relational rule, as ast-grep lists them), the fix as `replacement` and the
/// bytes it replaces (`expandEnd` included), the rule's id, severity (`hint` unless
/// said), note, message with its captures, `labels` (the rule's, else the match and
/// its relational nodes), `metadata` with `--include-metadata`; the same exit code
/// (1 with an error finding), for code in HTML's `<script>` too. An `ast-grep-ignore`
/// comment that silences nothing is not reported under `--inline-rules`, as in
/// ast-grep.
#[test]
fn the_extensions_yaml_rule_search_prints_ast_greps_bytes() {
    let Some(ast_grep) = crate::lsp_astgrep::ast_grep_or_skip() else {
        return;
    };
    let repo = workspace();
    repo.write(
        "src/indent.py",
        "class A:\n    def g(self):\n        if x:\n            foo(1)\n",
    );
    repo.write("other.js", "// ast-grep-ignore: nosuch\nlet q = 1;\n");
    // JavaScript in HTML: its captures placed in the file, as ast-grep places them.
    repo.write(
        "page.html",
        "<html>\n<script>\n  let é = 1; foo(x,\n    2);\n</script>\n</html>\n",
    );
    repo.commit_all("more");
    let labelled = "id: call\nlanguage: js\nseverity: warning\nmessage: call with $A\n\
                    note: a note\nrule: {pattern: 'foo($A, $$$B)'}\nfix: bar($A)\n\
                    labels:\n  A: {style: secondary, message: the first}\n";
    let relational = "id: top\nlanguage: ts\nrule:\n  pattern: foo($$$)\n  inside: \
                      {kind: lexical_declaration, stopBy: end}\nmetadata: {cwe: 1}\n";
    let transform = "id: t\nlanguage: javascript\nrule: {pattern: 'foo($A, $$$B)'}\n\
                     transform:\n  X: {replace: {source: $A, replace: s, by: t}}\n\
                     fix:\n  template: baz($X)\n  expandEnd: {regex: ';'}\n";
    let two = "id: py\nlanguage: python\nseverity: error\nrule: {pattern: foo($A)}\n\
               fix: |-\n  if True:\n      bar($A)\n---\nid: rs\nlanguage: rust\n\
               rule: {pattern: 'foo(4, $B)'}\nmessage: $B\n";
    let cases = [
        (yaml_argv(labelled, &[]), 3, 0),
        (
            {
                let mut a = yaml_argv(relational, &[]);
                a.push("--include-metadata");
                a
            },
            1,
            0,
        ),
        (yaml_argv(transform, &[]), 3, 0),
        (yaml_argv(two, &[]), 3, 1),
        (yaml_argv(two, &["src"]), 2, 1),
        (yaml_argv(two, &["--globs=*.rs", "--globs=src/*.py"]), 3, 1),
        (
            yaml_argv("id: n\nlanguage: go\nrule: {pattern: foo()}\n", &[]),
            0,
            0,
        ),
    ];
    for (args, count, code) in cases {
        let theirs = run_ast_grep(&ast_grep, &repo, &args);
        let ours = repo.run(&args);
        let expected = sorted_lines(&theirs.stdout);
        assert_eq!(expected.len(), count, "{args:?}: {expected:#?}");
        assert_eq!(theirs.status.code(), Some(code), "{args:?}");
        assert_eq!(
            sorted_lines(ours.stdout.as_bytes()),
            expected,
            "{args:?}: ours\n{}{}",
            ours.stdout,
            ours.stderr
        );
        assert_eq!(ours.code, code, "{args:?}: {}", ours.stderr);
    }
}

/// `--json=stream` is the findings, not the fixes: with a fix mode it is refused,
/// naming `--json`.
#[test]
fn the_scan_stream_is_not_for_fix_modes() {
    let repo = workspace();
    let rule = "id: call\nlanguage: js\nrule: {pattern: 'foo($A, $$$B)'}\nfix: bar($A)\n";
    for mode in ["--check", "--stage", "--apply", "-U"] {
        let out = repo.run(&["scan", "--inline-rules", rule, "--json=stream", mode]);
        out.assert_code(2);
        assert_eq!(out.stdout, "", "{mode}");
        assert!(out.stderr.contains("--json"), "{mode}: {}", out.stderr);
    }
    assert_eq!(
        repo.read("app.js"),
        "const s = \"héllo 😀\"; foo(s, 1);\nfoo(\n  a,\n  b);\n".as_bytes()
    );
}

/// A checkout of the extension's source (`ASTEDIT_VSCODE_EXTENSION`: ast-grep-vscode
/// 0.1.21, whose `src/extension/search.ts` is read) and a `node_modules` folder with
/// esbuild, nano-spawn and unport (`ASTEDIT_VSCODE_EXTENSION_MODULES`); `.ci/run` sets
/// both. Without them the test is skipped with a message, unless
/// ASTEDIT_REQUIRE_VSCODE_EXTENSION is set.
fn extension_or_skip() -> Option<(std::path::PathBuf, std::path::PathBuf)> {
    let source = std::env::var_os("ASTEDIT_VSCODE_EXTENSION").map(std::path::PathBuf::from);
    let modules =
        std::env::var_os("ASTEDIT_VSCODE_EXTENSION_MODULES").map(std::path::PathBuf::from);
    let found = source.zip(modules).filter(|(s, m)| {
        s.join("src/extension/search.ts").is_file() && m.join(".bin/esbuild").exists()
    });
    if found.is_none() {
        assert!(
            std::env::var_os("ASTEDIT_REQUIRE_VSCODE_EXTENSION").is_none(),
            "the extension's source is required but not found (ASTEDIT_VSCODE_EXTENSION, \
             ASTEDIT_VSCODE_EXTENSION_MODULES)"
        );
        eprintln!(
            "skipped: no ast-grep-vscode source (set ASTEDIT_VSCODE_EXTENSION and \
             ASTEDIT_VSCODE_EXTENSION_MODULES)"
        );
    }
    found
}

/// The extension's own search code, run under node: its `search.ts` and `common.ts`
/// bundled with a stand-in for VS Code's API (`tests/js/vscode-panel`), sent each query
/// as its webview sends it, with ast-grep 0.51.1 and then git-astedit as
/// `astGrep.serverPath`. What the panel would list (each result's file, range, line
/// shown and highlighted, replacement, language) is the same with both, for pattern
/// searches (with a rewrite, in a folder) and YAML rule searches (in a folder, by glob).
#[test]
fn the_extensions_own_search_code_lists_the_same_results() {
    let Some(ast_grep) = crate::lsp_astgrep::ast_grep_or_skip() else {
        return;
    };
    let Some((source, modules)) = extension_or_skip() else {
        return;
    };
    let repo = workspace();
    repo.write(
        "src/indent.py",
        "class A:\n    def g(self):\n        if x:\n            foo(1)\n",
    );
    repo.commit_all("more");
    let harness = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/js/vscode-panel");
    let build = tempfile::tempdir().expect("tempdir");
    let entry = build.path().join("entry.ts");
    let module = |name: &str| source.join("src/extension").join(name);
    std::fs::write(
        &entry,
        format!(
            "export {{ parentPort }} from {:?}\nimport {:?}\n",
            module("common.ts"),
            module("search.ts")
        ),
    )
    .unwrap();
    let bundle = build.path().join("panel.cjs");
    let built = std::process::Command::new(modules.join(".bin/esbuild"))
        .arg(&entry)
        .args([
            "--bundle",
            "--platform=node",
            "--format=cjs",
            "--log-level=warning",
        ])
        .arg(format!(
            "--alias:vscode={}",
            harness.join("vscode.cjs").display()
        ))
        .arg(format!("--outfile={}", bundle.display()))
        .env("NODE_PATH", &modules)
        .output()
        .expect("run esbuild");
    assert!(built.status.success(), "{built:?}");
    let pattern = |pattern: &str, rewrite: &str, include: &str| {
        serde_json::json!({"pattern": pattern, "rewrite": rewrite, "strictness": "smart",
                           "selector": "", "lang": "", "includeFile": include})
    };
    let yaml =
        |rule: &str, include: &str| serde_json::json!({"yaml": rule, "includeFile": include});
    let rules = "id: py\nlanguage: python\nseverity: error\nrule: {pattern: foo($A)}\n\
                 fix: |-\n  if True:\n      bar($A)\n---\nid: js\nlanguage: js\n\
                 message: call with $A\nrule: {pattern: 'foo($A, $$$B)'}\nfix: bar($A)\n";
    let cases = [
        ("search", pattern("foo($A, $$$B)", "", ""), 4),
        (
            "search",
            pattern("foo($A, $$$B)", "bar(\n  $A\n)", "src"),
            1,
        ),
        ("yaml", yaml(rules, ""), 4),
        ("yaml", yaml(rules, "src"), 2),
        ("yaml", yaml(rules, "src/*.py,*.js"), 4),
    ];
    let shown = |server: &std::path::Path, kind: &str, query: &serde_json::Value| {
        let out = std::process::Command::new("node")
            .arg(harness.join("drive.cjs"))
            .arg(&bundle)
            .arg(kind)
            .arg(query.to_string())
            .env("PANEL_SERVER", server)
            .env("PANEL_WORKSPACE", repo.path())
            .output()
            .expect("run node");
        assert!(out.status.success(), "{kind} {query}: {out:?}");
        serde_json::from_slice::<serde_json::Value>(&out.stdout).expect("one JSON line")
    };
    for (kind, query, count) in cases {
        let theirs = shown(&ast_grep, kind, &query);
        let ours = shown(&crate::util::bin(), kind, &query);
        assert_eq!(
            theirs.as_array().map(Vec::len),
            Some(count),
            "{kind} {query}: {theirs:#}"
        );
        assert_eq!(ours, theirs, "{kind} {query}");
    }
}
