//! Integration tests: `grep`.

use crate::util::TestRepo;

fn repo_with_sources() -> TestRepo {
    let repo = TestRepo::new();
    repo.write(
        "src/app.ts",
        "import { x } from './x';\nconsole.log(x);\nfunction f(a: number) {\n  console.log(a, 2);\n}\n",
    );
    repo.write("web/main.js", "console.log('hi');\nalert(1);\n");
    repo.write(
        "tool.py",
        "def f():\n    print(1, 2, 3)\n    return print\n",
    );
    repo.write("lib.rs", "fn main() {\n    let v = foo().unwrap();\n}\n");
    repo.write(
        "main.go",
        "package main\n\nfunc main() {\n\tx := compute(1, 2)\n\t_ = x\n}\n",
    );
    repo.commit_all("init");
    repo
}

#[test]
fn finds_matches_in_several_languages_sorted_with_positions() {
    let repo = repo_with_sources();
    let out = repo.run(&["grep", "-p", "console.log($$$A)"]);
    out.assert_code(0);
    assert_eq!(
        out.stdout,
        "src/app.ts:2:1: console.log(x)\nsrc/app.ts:4:3: console.log(a, 2)\nweb/main.js:1:1: console.log('hi')\n"
    );
}

#[test]
fn python_rust_and_go_patterns() {
    let repo = repo_with_sources();
    let py = repo.run(&["grep", "-p", "print($$$ARGS)"]);
    py.assert_code(0);
    assert_eq!(py.stdout, "tool.py:2:5: print(1, 2, 3)\n");
    let rs = repo.run(&["grep", "-p", "$A.unwrap()"]);
    rs.assert_code(0);
    assert_eq!(rs.stdout, "lib.rs:2:13: foo().unwrap()\n");
    let go = repo.run(&["grep", "-p", "compute($A, $B)", "-l", "go"]);
    go.assert_code(0);
    assert_eq!(go.stdout, "main.go:4:7: compute(1, 2)\n");
}

#[test]
fn nothing_found_exits_one() {
    let repo = repo_with_sources();
    let out = repo.run(&["grep", "-p", "nosuchcall($A)"]);
    out.assert_code(1);
    assert_eq!(out.stdout, "");
}

#[test]
fn multi_line_match_shows_first_line_and_ellipsis() {
    let repo = TestRepo::new();
    repo.write("a.js", "call(\n  1,\n  2\n);\n");
    let out = repo.run(&["grep", "-p", "call($$$A)"]);
    out.assert_code(0);
    assert_eq!(out.stdout, "a.js:1:1: call(…\n");
}

#[test]
fn max_count_caps_output_and_says_so() {
    let repo = TestRepo::new();
    let body: String = (0..10).map(|i| format!("f({i});\n")).collect();
    repo.write("a.js", body);
    let out = repo.run(&["grep", "-p", "f($A)", "--max-count", "3"]);
    out.assert_code(0);
    // The matches on stdout; where the list stopped is a note, on stderr.
    assert_eq!(out.stdout.lines().count(), 3, "{}", out.stdout);
    assert!(
        out.stderr.contains("stopped at 3 of 10 matches"),
        "{}",
        out.stderr
    );

    let json = repo
        .run(&["grep", "-p", "f($A)", "--max-count", "3", "--json"])
        .json();
    assert_eq!(json["total"], 10);
    assert_eq!(json["shown"], 3);
    assert_eq!(json["capped"], true);
    assert_eq!(json["matches"].as_array().map(Vec::len), Some(3));
}

/// Rows are encoded on the worker threads and a file searched after the cap is only
/// counted: the rows shown, in path order, and the totals are those of a whole run,
/// with large files (searched first) among small ones, in both JSON outputs.
#[test]
fn json_rows_in_path_order_with_a_cap_across_many_files() {
    let repo = TestRepo::new();
    // Large files (over 256 kB) are searched first and alone, medium ones (over
    // 32 kB) not beside them.
    let calls = |i: usize| match i {
        _ if i % 13 == 3 => 22_000,
        _ if i % 7 == 5 => 3_000,
        _ => 5,
    };
    for i in 0..60 {
        let body: String = (0..calls(i)).map(|n| format!("f({i}, {n});\n")).collect();
        repo.write(&format!("d/{i:02}.js"), body);
    }
    let whole = repo
        .run(&[
            "grep",
            "-j",
            "2",
            "-p",
            "f($$$A)",
            "--max-count",
            "0",
            "--json",
        ])
        .json();
    let all = whole["matches"].as_array().expect("rows").clone();
    let total: usize = (0..60).map(calls).sum();
    assert_eq!(whole["total"], total);
    assert_eq!(all.len(), total);
    let at = |m: &serde_json::Value| {
        (
            m["path"].as_str().unwrap_or_default().to_string(),
            m["line"].as_u64().unwrap_or_default(),
        )
    };
    let keys: Vec<_> = all.iter().map(at).collect();
    let mut sorted = keys.clone();
    sorted.sort();
    assert_eq!(keys, sorted, "rows in path order");
    // A cap in the middle of a large file.
    let capped = repo
        .run(&[
            "grep",
            "-j",
            "2",
            "-p",
            "f($$$A)",
            "--max-count",
            "12100",
            "--json",
        ])
        .json();
    assert_eq!(capped["total"], total);
    assert_eq!(capped["shown"], 12_100);
    assert_eq!(capped["files_matched"], 60);
    let shown = capped["matches"].as_array().expect("rows");
    assert_eq!(shown[..], all[..12_100]);
    // ast-grep's stream: one object a line, the same matches in the same order.
    let stream = repo.run(&["grep", "-j", "2", "-p", "f($$$A)", "--json=stream"]);
    stream.assert_code(0);
    let lines: Vec<&str> = stream.stdout.lines().collect();
    assert_eq!(lines.len(), total);
    for (line, row) in lines.iter().zip(&all).step_by(997) {
        let v: serde_json::Value = serde_json::from_str(line).expect("a JSON line");
        assert_eq!(v["file"], row["path"]);
        assert_eq!(
            v["range"]["start"]["line"].as_u64(),
            row["line"].as_u64().map(|l| l - 1)
        );
    }
}

#[test]
fn json_shape() {
    let repo = repo_with_sources();
    let out = repo.run(&["grep", "-p", "alert($A)", "--json"]);
    out.assert_code(0);
    let v = out.json();
    let m = &v["matches"][0];
    assert_eq!(m["path"], "web/main.js");
    assert_eq!(m["line"], 2);
    assert_eq!(m["column"], 1);
    assert_eq!(m["text"], "alert(1)");
    assert_eq!(m["lang"], "JavaScript");
    assert_eq!(v["files_matched"], 1);
}

#[test]
fn bad_pattern_exits_two_showing_the_pattern() {
    let repo = repo_with_sources();
    let out = repo.run(&["grep", "-p", "$$$A"]);
    out.assert_code(2);
    assert!(out.stderr.contains("$$$A"), "{}", out.stderr);
    assert!(!out.stderr.contains('µ'), "{}", out.stderr);

    let json = repo.run(&["grep", "-p", "", "--json"]);
    json.assert_code(2);
    assert_eq!(json.json()["error"]["code"], "bad-pattern");
}

#[test]
fn pattern_that_parses_in_one_language_only_warns_for_the_others() {
    let repo = repo_with_sources();
    // A Python-only construct: TypeScript/JavaScript/Rust/Go cannot parse it.
    // Python files were searched: the others are said with -v only (issue 52 item 5).
    let out = repo.run(&["grep", "-p", "def $F(): $$$B"]);
    assert!(out.code == 0 || out.code == 1, "{out:?}");
    assert!(!out.stderr.contains("warning:"), "{}", out.stderr);
    let out = repo.run(&["grep", "-v", "-p", "def $F(): $$$B"]);
    assert!(out.code == 0 || out.code == 1, "{out:?}");
    assert!(out.stderr.contains("warning:"), "{}", out.stderr);
}

#[test]
fn binary_non_utf8_and_symlinks_are_skipped_and_counted() {
    let repo = TestRepo::new();
    repo.write("ok.js", "f(1);\n");
    repo.write("bin.js", b"f(1);\0\0\x01");
    repo.write("latin1.js", b"f('\xe9');\n");
    std::os::unix::fs::symlink("ok.js", repo.path().join("link.js")).expect("symlink");
    let out = repo.run(&["grep", "-p", "f($A)"]);
    out.assert_code(0);
    assert_eq!(out.stdout, "ok.js:1:1: f(1)\n");
    assert!(out.stderr.contains("1 binary (bin.js)"), "{}", out.stderr);
    assert!(
        out.stderr.contains("1 not UTF-8 (latin1.js)"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr.contains("1 symlinks (link.js)"),
        "{}",
        out.stderr
    );
    let json = repo.run(&["grep", "-p", "f($A)", "--json"]).json();
    assert_eq!(json["skipped"]["binary"], 1);
    assert_eq!(json["skipped"]["non-utf8"], 1);
    assert_eq!(json["skipped"]["symlink"], 1);
}

#[test]
fn ignored_files_are_not_searched_untracked_ones_are() {
    let repo = TestRepo::new();
    repo.write(".gitignore", "dist/\n");
    repo.write("dist/out.js", "f(1);\n");
    repo.write("new.js", "f(2);\n");
    repo.write("excluded.js", "f(3);\n");
    repo.write(".git/info/exclude", "excluded.js\n");
    let out = repo.run(&["grep", "-p", "f($A)"]);
    out.assert_code(0);
    assert_eq!(out.stdout, "new.js:1:1: f(2)\n");
}

#[test]
fn files_that_parse_with_errors_are_reported_and_still_searched() {
    let repo = TestRepo::new();
    repo.write("broken.js", "f(1);\nlet = = ;\n");
    let out = repo.run(&["grep", "-p", "f($A)"]);
    out.assert_code(0);
    assert_eq!(out.stdout, "broken.js:1:1: f(1)\n");
    assert!(
        out.stderr.contains("1 file parsed with errors"),
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains("broken.js"), "{}", out.stderr);
}

#[test]
fn lang_flag_narrows_to_a_language_and_forces_it_on_named_files() {
    let repo = TestRepo::new();
    repo.write("script.txt", "print(1)\n");
    repo.write("a.py", "print(2)\n");
    repo.write("b.js", "print(3)\n");
    let out = repo.run(&["grep", "-p", "print($A)"]);
    assert_eq!(out.stdout, "a.py:1:1: print(2)\nb.js:1:1: print(3)\n");
    // `-l` keeps only that language's files...
    let out = repo.run(&["grep", "-p", "print($A)", "-l", "python"]);
    out.assert_code(0);
    assert_eq!(out.stdout, "a.py:1:1: print(2)\n");
    // ...and parses a file named explicitly as that language, whatever its extension.
    let out = repo.run(&["grep", "-p", "print($A)", "-l", "python", "script.txt"]);
    out.assert_code(0);
    assert_eq!(out.stdout, "script.txt:1:1: print(1)\n");
    let bad = repo.run(&["grep", "-p", "print($A)", "-l", "cobol"]);
    bad.assert_code(2);
    assert!(
        bad.stderr.contains("unknown language 'cobol'"),
        "{}",
        bad.stderr
    );
}

/// A pattern that is a comment finds comments: the prefilter's "not on a comment line"
/// check must not apply to it (it once did, and `# TODO later` found nothing).
#[test]
fn a_comment_pattern_finds_comments() {
    let repo = TestRepo::new();
    repo.write("a.py", "x = 1\n# TODO later\n");
    repo.commit_all("init");
    let out = repo.run(&["grep", "-p", "# TODO later"]);
    out.assert_code(0);
    assert_eq!(out.stdout, "a.py:2:1: # TODO later\n");
}

#[test]
fn stream_prints_the_same_lines_in_completion_order() {
    let repo = TestRepo::new();
    for i in 0..40 {
        repo.write(&format!("src/f{i:02}.js"), format!("a();\nf({i});\nb();\n"));
    }
    repo.commit_all("init");
    let sorted = repo.run(&["grep", "-p", "f($A)", "-A", "1", "--max-count", "0"]);
    sorted.assert_code(0);
    let streamed = repo.run(&[
        "grep",
        "-p",
        "f($A)",
        "-A",
        "1",
        "--max-count",
        "0",
        "--stream",
    ]);
    streamed.assert_code(0);
    // The same groups (match and context line kept together), in whatever order.
    let groups = |s: &str| {
        let mut g: Vec<String> = s.split("--\n").map(str::to_string).collect();
        g.sort();
        g
    };
    assert_eq!(groups(&streamed.stdout), groups(&sorted.stdout));
    assert_eq!(groups(&sorted.stdout).len(), 40);
    // JSON is one object and stays in path order.
    let json = repo.run(&[
        "--json",
        "grep",
        "-p",
        "f($A)",
        "--stream",
        "--max-count",
        "0",
    ]);
    json.assert_code(0);
    let paths: Vec<String> = json.json()["matches"]
        .as_array()
        .expect("matches")
        .iter()
        .map(|m| m["path"].as_str().expect("path").to_string())
        .collect();
    let mut in_order = paths.clone();
    in_order.sort();
    assert_eq!(paths, in_order);
    assert_eq!(paths.len(), 40);
    // Nothing found is still exit 1.
    repo.run(&["grep", "-p", "nothing($A)", "--stream"])
        .assert_code(1);
}

/// A pattern whose root parses as an error in the chosen language (C# has no
/// expression statements, so `$A == $B` is one) matches by the error node's content,
/// as in ast-grep; a pattern that is only error, or a typo, stays refused, the message
/// naming the language tried and the hint not asking for the `-l` that was given.
#[test]
fn error_root_patterns_match_by_content_when_the_language_is_chosen() {
    let t = TestRepo::new();
    t.write(
        "a.cs",
        "class A {\n    async void M(object x, int a, int b, string s) {\n        if (a == b) { }\n        var d = s ?? \"none\";\n        if (x is int) { }\n        System.Func<int, int> f = y => y + 1;\n    }\n}\n",
    );
    t.commit_all("init");
    for (pattern, found) in [
        ("$A == $B", "a.cs:3:13: a == b"),
        ("$A ?? $B", "a.cs:4:17: s ?? \"none\""),
        ("$A is $T", "a.cs:5:13: x is int"),
        ("$X => $Y", "a.cs:6:35: y => y + 1"),
    ] {
        let out = t.run(&["grep", "-l", "csharp", "-p", pattern]);
        out.assert_code(0);
        assert!(out.stdout.contains(found), "{pattern}: {}", out.stdout);
    }
    for pattern in ["}}}", "foo($A"] {
        let out = t.run(&["--json", "grep", "-l", "csharp", "-p", pattern]);
        out.assert_code(2);
        let err = &out.json()["error"];
        assert!(
            err["message"]
                .as_str()
                .unwrap_or_default()
                .contains("CSharp"),
            "{pattern}: {err}"
        );
        assert!(
            !err["hint"].as_str().unwrap_or_default().contains("-l"),
            "{pattern}: {err}"
        );
    }
}

/// The MISSING-node rule counts only tokens the pattern itself compares: a later
/// `else if` broken by an `#ifdef` does not hide the `if` before it, and what `$A`,
/// `$_` and `$$$` absorb is theirs alike; the pattern's own `)` still never matches an
/// invented one.
#[test]
fn only_tokens_the_pattern_compares_must_not_be_missing() {
    let t = TestRepo::new();
    t.write(
        "a.c",
        "void f(int x, int y) {\n    if (x) { a(); } else if (y { b(); }\n    foo(x[1);\n}\n",
    );
    t.write("b.ts", "let y = foo(x;\n");
    t.commit_all("init");
    let out = t.run(&["grep", "-p", "if ($A) { $$$B }", "a.c"]);
    out.assert_code(0);
    assert!(out.stdout.contains("a.c:2:5: if (x)"), "{}", out.stdout);
    for pattern in ["foo($A)", "foo($_)", "foo($$$)"] {
        let out = t.run(&["grep", "-p", pattern, "a.c"]);
        out.assert_code(0);
        assert!(
            out.stdout.contains("a.c:3:5: foo(x[1)"),
            "{pattern}: {}",
            out.stdout
        );
    }
    t.run(&["grep", "-p", "foo($A)", "b.ts"]).assert_code(1);
}

/// The literal check before parsing takes a pattern's identifiers as whole words: a
/// file whose only `unwrap` is inside `unwrap_or` is not parsed (so its parse error is
/// not listed either), while a string's content still counts after an escape.
#[test]
fn identifiers_must_occur_as_whole_words_before_a_file_is_parsed() {
    let repo = TestRepo::new();
    repo.write("a.rs", "fn f( { x.unwrap_or(1) }\n");
    repo.write("b.rs", "fn g() { y.unwrap(); }\n");
    repo.write("c.py", "print(\"\\nDone\")\n");
    repo.commit_all("init");
    let v = repo.run(&["grep", "-p", "$A.unwrap()", "--json"]).json();
    assert_eq!(v["total"], 1, "{v}");
    assert_eq!(v["matches"][0]["path"], "b.rs");
    assert_eq!(v["parse_errors"]["count"], 0, "{v}");
    let v = repo
        .run(&["grep", "-p", "print(\"\\nDone\")", "--json"])
        .json();
    assert_eq!(v["total"], 1, "{v}");
    assert_eq!(v["matches"][0]["path"], "c.py");
}
