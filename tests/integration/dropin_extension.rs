//! VS Code's ast-grep search panel with git-astedit as `astGrep.serverPath` (issue 51
//! item 1). The extension (ast-grep/ast-grep-vscode, `src/extension/search.ts`)
//! spawns `<serverPath> run --pattern P --json=stream [--selector K] [--rewrite R]
//! [INCLUDE]` with the workspace folder as its current folder, parses each stdout line
//! as JSON, and takes a search as finished only on exit 0. Each case here runs that argv in that folder
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

fn sorted_lines(stdout: &[u8]) -> Vec<String> {
    let text = String::from_utf8(stdout.to_vec()).expect("UTF-8 stdout");
    let mut lines: Vec<String> = text.split_inclusive('\n').map(str::to_string).collect();
    lines.sort();
    lines
}

/// A pattern being typed (`foo(`), a YAML rule search (the panel's `scan
/// --inline-rules YAML --json=stream`, which `scan` refuses): nothing on stdout, the
/// error on stderr. A JSON error object there was taken for a match, and the
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
        let theirs = std::process::Command::new(&ast_grep)
            .args(&args)
            .current_dir(repo.path())
            .output()
            .expect("run ast-grep");
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
