//! Integration tests: a new user's first day, round two (issue 42, items 2–6): the
//! rough edges met on real repositories, one test (or a few) per item.

use crate::util::TestRepo;

/// A committed repository with one `foo(N)` call in each of `n` files under `src/`.
fn many_files(n: usize) -> TestRepo {
    let repo = TestRepo::new();
    for i in 0..n {
        repo.write(&format!("src/f{i:02}.js"), format!("foo({i});\n"));
    }
    repo.commit_all("init");
    repo
}

// Item 2: a cut diff says how many files it left out and how to see them, on a line
// of its own, instead of listing every path on one line.
#[test]
fn a_cut_diff_counts_the_files_left_out_and_names_show_stat() {
    let repo = many_files(30);
    let out = repo.run(&[
        "edit",
        "-p",
        "foo($A)",
        "-r",
        "bar($A)",
        "--max-render",
        "20",
    ]);
    out.assert_code(0);
    let note = out
        .stdout
        .lines()
        .find(|l| l.starts_with("… diff of"))
        .unwrap_or_else(|| panic!("no note:\n{}", out.stdout));
    assert!(
        note.contains("more files not shown (--max-render 20)"),
        "{note}"
    );
    assert!(note.contains("`git astedit show --stat`"), "{note}");
    assert!(!note.contains("src/f29.js"), "the note lists paths: {note}");
    // The count is the number of files whose diff is missing.
    let shown = out.stdout.matches("diff --git").count();
    assert!(
        note.starts_with(&format!("… diff of {} more files", 30 - shown)),
        "{shown} shown: {note}"
    );
    // `show` cuts the same way, and `show --stat` lists every file.
    let show = repo.run(&["show", "--max-render", "20"]);
    show.assert_code(0);
    assert!(
        show.stdout.contains("`git astedit show --stat`"),
        "{}",
        show.stdout
    );
    let stat = repo.run(&["show", "--stat"]);
    stat.assert_code(0);
    for i in 0..30 {
        assert!(
            stat.stdout.contains(&format!("src/f{i:02}.js")),
            "{}",
            stat.stdout
        );
    }
}

// Item 3: `show ID -- PATHSPEC` and `show --stat ID -- PATHSPEC`, as `git show`.
#[test]
fn show_takes_pathspecs_after_a_double_dash() {
    let repo = many_files(3);
    let staged = repo
        .run(&["--json", "edit", "-p", "foo($A)", "-r", "bar($A)"])
        .assert_code(0)
        .json();
    let id = staged["id"].as_str().expect("id").to_string();

    let out = repo.run(&["show", &id, "--", "src/f01.js"]);
    out.assert_code(0);
    assert!(
        out.stdout.contains("diff --git a/src/f01.js"),
        "{}",
        out.stdout
    );
    assert_eq!(
        out.stdout.matches("diff --git").count(),
        1,
        "{}",
        out.stdout
    );

    let out = repo.run(&["show", "--stat", &id, "--", "src/f0[02].js"]);
    out.assert_code(0);
    assert!(out.stdout.contains("src/f00.js"), "{}", out.stdout);
    assert!(out.stdout.contains("src/f02.js"), "{}", out.stdout);
    assert!(!out.stdout.contains("src/f01.js"), "{}", out.stdout);

    // Without an id: the newest preview. Relative to the current folder, as in git.
    let out = repo.run_in("src", &["show", "--stat", "--", "f02.js"]);
    out.assert_code(0);
    assert!(out.stdout.contains("f02.js"), "{}", out.stdout);
    assert!(!out.stdout.contains("f00.js"), "{}", out.stdout);

    // JSON lists the selected files only.
    let json = repo
        .run(&["--json", "show", &id, "--", ":(exclude)src/f00.js"])
        .assert_code(0)
        .json();
    let files: Vec<&str> = json["files"]
        .as_array()
        .expect("files")
        .iter()
        .map(|f| f["path"].as_str().expect("path"))
        .collect();
    assert_eq!(files, ["src/f01.js", "src/f02.js"]);

    // A pathspec that selects no file of the preview is an error naming it.
    let out = repo.run(&["--json", "show", &id, "--", "nope.js"]);
    out.assert_code(2);
    let err = out.json();
    assert_eq!(err["error"]["code"], "pathspec-no-match", "{err}");
    assert!(out.stdout.contains("nope.js"), "{}", out.stdout);
}

#[test]
fn a_path_given_as_the_id_is_quoted_as_typed_with_a_hint() {
    let repo = many_files(1);
    repo.run(&["edit", "-p", "foo($A)", "-r", "bar($A)"])
        .assert_code(0);
    let out = repo.run(&["show", "packages/Shared/src/cssVars.ts"]);
    out.assert_code(2);
    assert!(
        out.stderr
            .contains("'packages/Shared/src/cssVars.ts' is not a preview id"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr.contains("git astedit show ID -- PATH"),
        "{}",
        out.stderr
    );
}

/// Code, plus Markdown and YAML that say nothing of `console.log`.
fn mixed_repository() -> TestRepo {
    let repo = TestRepo::new();
    repo.write("src/a.js", "console.log(1);\n");
    repo.write("README.md", "# App\n\nRun it with `make`.\n");
    repo.write(".ci.yml", "steps:\n  - run: make test\n");
    repo.commit_all("init");
    repo
}

// Item 4: "pattern … is only text in Markdown and Yaml" only when those files hold the
// pattern's text, or with -v; once.
#[test]
fn the_only_text_warning_is_quiet_when_those_files_cannot_hold_a_match() {
    let repo = mixed_repository();
    let out = repo.run(&["grep", "-p", "console.log($$$A)"]);
    out.assert_code(0);
    assert_eq!(out.stdout, "src/a.js:1:1: console.log(1)\n");
    assert!(!out.stderr.contains("only text"), "{}", out.stderr);
    // The report still says which languages were skipped.
    let json = repo
        .run(&["--json", "grep", "-p", "console.log($$$A)"])
        .assert_code(0)
        .json();
    let langs: Vec<&str> = json["skipped_languages"]
        .as_array()
        .expect("skipped_languages")
        .iter()
        .map(|s| s["lang"].as_str().expect("lang"))
        .collect();
    assert!(langs.contains(&"Markdown"), "{json}");
    assert!(
        !json["warnings"].to_string().contains("only text"),
        "{json}"
    );
    let out = repo.run(&["edit", "-p", "console.log($$$A)", "-r", "log($$$A)"]);
    out.assert_code(0);
    assert!(!out.stderr.contains("only text"), "{}", out.stderr);

    // -v says it.
    let out = repo.run(&["grep", "-v", "-p", "console.log($$$A)"]);
    out.assert_code(0);
    assert_eq!(
        out.stderr.matches("is only text in").count(),
        1,
        "{}",
        out.stderr
    );
}

// Issue 52 item 5: one rule. A skipped file holding the pattern's text is no reason
// any more when files of a language where the pattern parses were searched; when none
// was, the search is refused and the error names the languages.
#[test]
fn the_only_text_warning_is_said_only_when_no_searched_file_could_match() {
    let repo = mixed_repository();
    repo.write("README.md", "# App\n\nDebug with `console.log(x)`.\n");
    let out = repo.run(&["grep", "-p", "console.log($$$A)"]);
    out.assert_code(0);
    assert!(!out.stderr.contains("only text"), "{}", out.stderr);

    // Only Markdown and YAML searched: nothing could match, and the error says so.
    let out = repo.run(&[
        "grep",
        "-p",
        "console.log($$$A)",
        "--",
        "README.md",
        "*.yml",
    ]);
    out.assert_code(2);
    assert!(
        out.stderr
            .contains("does not parse as any language searched"),
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains("Markdown"), "{}", out.stderr);
    // -v names the languages skipped beside a search that could match.
    let out = repo.run(&["grep", "-v", "-p", "console.log($$$A)"]);
    out.assert_code(0);
    assert_eq!(
        out.stderr.matches("is only text in").count(),
        1,
        "{}",
        out.stderr
    );
}

// Item 5: ast-grep's `test` exits 4 when a test fails; this one exits 1, as every
// check here does (4 means "refused for safety"), as the guide says.
#[test]
fn a_failed_rule_test_exits_one_and_the_guide_says_why_not_four() {
    let repo = TestRepo::new();
    repo.write(
        "sgconfig.yml",
        "ruleDirs: [rules]\ntestConfigs:\n  - testDir: tests\n",
    );
    repo.write(
        "rules/r.yml",
        "id: r\nlanguage: javascript\nrule: {pattern: foo($A)}\n",
    );
    repo.write(
        "tests/r-test.yml",
        "id: r\nvalid: ['foo(1)']\ninvalid: []\n",
    );
    repo.commit_all("init");
    let out = repo.run(&["test"]);
    out.assert_code(1);
    assert!(
        out.stdout.contains("test failed. 0 passed; 1 failed;"),
        "{}",
        out.stdout
    );
    let guide = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/src/ast-grep.md"),
    )
    .expect("guide");
    assert!(
        guide.contains("`test` exits 1 when a rule test fails; ast-grep exits 4."),
        "the guide no longer says why"
    );
}

/// `PATH` without the folders that hold a `maturin`.
fn path_without_maturin() -> std::ffi::OsString {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::join_paths(std::env::split_paths(&path).filter(|d| !d.join("maturin").exists()))
        .expect("PATH")
}

/// Runs a bash line in the checkout with a clean tools folder and no maturin on PATH.
fn dist_bash(line: &str, tools: &std::path::Path, extra: &[(&str, &str)]) -> std::process::Output {
    let mut cmd = std::process::Command::new("bash");
    cmd.current_dir(env!("CARGO_MANIFEST_DIR"))
        .arg("-c")
        .arg(line)
        .env("PATH", path_without_maturin())
        .env("DIST_TOOLS", tools)
        .env_remove("MATURIN")
        .stdin(std::process::Stdio::null());
    for (k, v) in extra {
        cmd.env(k, v);
    }
    cmd.output().expect("bash")
}

// Item 6: `dist/build.sh` without maturin says what to install before building
// anything (or installs the pinned one, as dist/ci.sh does, when it may).
#[test]
fn dist_build_without_maturin_says_what_to_install_before_building() {
    let tools = tempfile::tempdir().expect("tempdir");
    let out_dir = tempfile::tempdir().expect("tempdir");
    let out = dist_bash(
        &format!("dist/build.sh '{}'", out_dir.path().display()),
        tools.path(),
        &[("DIST_NO_INSTALL", "1")],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("pip install 'maturin==1.16.0'"), "{stderr}");
    assert!(!stderr.contains("command not found"), "{stderr}");
    // Nothing was built: the check comes first.
    assert!(!stderr.contains("cargo rustc"), "{stderr}");
    assert_eq!(std::fs::read_dir(out_dir.path()).expect("out").count(), 0);
}

#[test]
fn dist_tools_find_the_pinned_maturin_of_the_tools_folder() {
    let tools = tempfile::tempdir().expect("tempdir");
    let bin = tools.path().join("venv/bin");
    std::fs::create_dir_all(&bin).expect("mkdir");
    let fake = bin.join("maturin");
    std::fs::write(&fake, "#!/bin/sh\necho fake\n").expect("write");
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let out = dist_bash(
        "ROOT=$PWD; . dist/tools.sh; dist_find_maturin && echo \"$MATURIN\"",
        tools.path(),
        &[("DIST_NO_INSTALL", "1")],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        fake.display().to_string()
    );
}

// Item 5: `scan --min-severity LEVEL`, as ast-grep 0.51.
#[test]
fn scan_min_severity_runs_only_the_rules_at_or_above_it() {
    let repo = TestRepo::new();
    repo.write(
        "astedit.toml",
        r#"
[[rules]]
id = "eq"
language = "javascript"
severity = "error"
message = "use ==="
rule.pattern = "$A == $B"
fix = "$A === $B"

[[rules]]
id = "no-var"
language = "javascript"
severity = "hint"
message = "use let"
rule.pattern = "var $A = $B"
fix = "let $A = $B"
"#,
    );
    repo.write(
        "a.js",
        "var x = 1;\nif (x == 2) {}\n// ast-grep-ignore: nothing\nf();\n",
    );
    repo.commit_all("init");
    let all = repo.run(&["--json", "scan"]).json();
    let rules = |j: &serde_json::Value| -> Vec<String> {
        let mut r: Vec<String> = j["findings"]
            .as_array()
            .expect("findings")
            .iter()
            .map(|f| f["rule"].as_str().expect("rule").to_string())
            .collect();
        r.sort();
        r
    };
    assert_eq!(rules(&all), ["eq", "no-var", "unused-suppression"], "{all}");
    let out = repo.run(&["--json", "scan", "--min-severity", "warning"]);
    out.assert_code(1);
    assert_eq!(rules(&out.json()), ["eq"]);
    // A rule raised above the bound runs; the fixes of the others are not made.
    let out = repo.run(&[
        "--json",
        "scan",
        "--warning=no-var",
        "--min-severity=warning",
    ]);
    assert_eq!(rules(&out.json()), ["eq", "no-var"]);
    repo.run(&["scan", "--apply", "--min-severity", "error"])
        .assert_code(1);
    assert_eq!(
        repo.read_string("a.js"),
        "var x = 1;\nif (x === 2) {}\n// ast-grep-ignore: nothing\nf();\n"
    );
    let out = repo.run(&["scan", "--min-severity", "severe"]);
    out.assert_code(2);
}

// Item 5: the sgconfig.yml key `noIgnore`, as the `--no-ignore` values.
#[test]
fn sgconfig_no_ignore_makes_scan_read_ignored_files() {
    let repo = TestRepo::new();
    repo.write("sgconfig.yml", "ruleDirs: [rules]\n");
    repo.write(
        "rules/p.yml",
        "id: no-print\nlanguage: python\nseverity: error\nmessage: no print\nrule: {pattern: print($A)}\n",
    );
    repo.write(".gitignore", "build/\n");
    repo.write("a.py", "print(1)\n");
    repo.write("build/gen.py", "print(2)\n");
    repo.commit_all("init");
    let found = |repo: &TestRepo| -> Vec<String> {
        let out = repo.run(&["--json", "scan"]);
        out.assert_code(1);
        let mut paths: Vec<String> = out.json()["findings"]
            .as_array()
            .expect("findings")
            .iter()
            .map(|f| f["path"].as_str().unwrap_or("").to_string())
            .collect();
        paths.sort();
        paths
    };
    assert_eq!(found(&repo), ["a.py"]);
    for value in ["[vcs]", "vcs", "[hidden, exclude]"] {
        repo.write(
            "sgconfig.yml",
            format!("ruleDirs: [rules]\nnoIgnore: {value}\n"),
        );
        assert_eq!(found(&repo), ["a.py", "build/gen.py"], "noIgnore: {value}");
    }
    // hidden and dot change nothing (hidden files are always read).
    repo.write(
        "sgconfig.yml",
        "ruleDirs: [rules]\nnoIgnore: [hidden, dot]\n",
    );
    assert_eq!(found(&repo), ["a.py"]);
    repo.write(
        "sgconfig.yml",
        "ruleDirs: [rules]\nnoIgnore: [everything]\n",
    );
    let out = repo.run(&["--json", "scan"]);
    out.assert_code(2);
    let message = out.json()["error"]["message"].to_string();
    assert!(message.contains("noIgnore: 'everything'"), "{message}");
}

// Item 5: the project's `utilDirs` serve `-r` rule files and `--inline-rules`.
#[test]
fn project_utils_serve_rule_files_and_inline_rules() {
    let repo = TestRepo::new();
    repo.write("sgconfig.yml", "ruleDirs: [rules]\nutilDirs: [utils]\n");
    repo.write(
        "utils/is-print.yml",
        "id: is-print\nlanguage: python\nrule: {pattern: print($A)}\n",
    );
    repo.write(
        "rules/p.yml",
        "id: in-project\nlanguage: python\nseverity: error\nrule: {matches: is-print}\n",
    );
    repo.write(
        "extra/one.yml",
        "id: lone\nlanguage: python\nseverity: error\nmessage: lone\nrule: {matches: is-print}\n",
    );
    repo.write("a.py", "print(1)\nx = 2\n");
    repo.commit_all("init");
    let ids = |out: &crate::util::Output| -> Vec<String> {
        out.json()["findings"]
            .as_array()
            .expect("findings")
            .iter()
            .map(|f| f["rule"].as_str().unwrap_or("").to_string())
            .collect()
    };
    let out = repo.run(&["--json", "scan", "-r", "extra/one.yml"]);
    out.assert_code(1);
    assert_eq!(ids(&out), ["lone"], "{}", out.stdout);
    let out = repo.run(&[
        "--json",
        "scan",
        "--inline-rules",
        "id: inline\nlanguage: python\nseverity: error\nrule: {matches: is-print}\n",
    ]);
    out.assert_code(1);
    assert_eq!(ids(&out), ["inline"], "{}", out.stdout);
    // Without the project's utils the name is unknown, as before.
    std::fs::remove_file(repo.path().join("sgconfig.yml")).expect("rm");
    repo.run(&["scan", "-r", "extra/one.yml"]).assert_code(2);
}

// Item 5: C#'s `await $A` is a pattern (read as the expression of `await $A;`).
#[test]
fn csharp_await_is_a_pattern() {
    let repo = TestRepo::new();
    repo.write(
        "a.cs",
        "class C {\n    async Task F() {\n        await G();\n        var x = await H(1);\n    }\n}\n",
    );
    repo.commit_all("init");
    for args in [
        &["grep", "-p", "await $A"][..],
        &["grep", "-l", "cs", "-p", "await $A"][..],
    ] {
        let out = repo.run(args);
        out.assert_code(0);
        assert_eq!(
            out.stdout, "a.cs:3:9: await G()\na.cs:4:17: await H(1)\n",
            "{args:?}"
        );
    }
    repo.run(&[
        "edit",
        "-p",
        "await $A",
        "-r",
        "await $A.ConfigureAwait(false)",
        "--apply",
    ])
    .assert_code(0);
    assert_eq!(
        repo.read_string("a.cs"),
        "class C {\n    async Task F() {\n        await G().ConfigureAwait(false);\n        var x = await H(1).ConfigureAwait(false);\n    }\n}\n"
    );
    // A rule's pattern too.
    repo.write(
        "r.yml",
        "id: aw\nlanguage: csharp\nseverity: error\nrule: {pattern: await $A}\n",
    );
    let out = repo.run(&["--json", "scan", "-r", "r.yml"]);
    out.assert_code(1);
    assert_eq!(out.json()["findings"].as_array().map(Vec::len), Some(2));
}
