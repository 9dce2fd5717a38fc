//! Integration tests: a new user's first hour — the README's examples in a repository
//! that also holds Markdown, YAML, JSON and TOML, pathspecs that match nothing, the
//! differences from ast-grep, and the papercuts of issue 13.

use crate::util::TestRepo;

/// A repository like most: code plus a README, CI YAML, JSON and TOML, each holding
/// code-looking text (a README example, a YAML command) that is no code.
fn mixed_repo(code: &[(&str, &str)]) -> TestRepo {
    let repo = TestRepo::new();
    repo.write(
        "README.md",
        "# Demo\n\n```js\nconsole.log(x)\n```\n\nCall `x.unwrap()` or console.log(y).\n",
    );
    repo.write(
        ".github/workflows/ci.yml",
        "run: console.log(1) && x.unwrap()\n",
    );
    repo.write(
        "package.json",
        "{\"scripts\": {\"log\": \"console.log(1)\"}}\n",
    );
    repo.write("Cargo.toml", "[package]\nname = \"x.unwrap()\"\n");
    repo.write("docs/page.html", "<p>console.log(z) and a.unwrap()</p>\n");
    for (path, text) in code {
        repo.write(path, text);
    }
    repo.commit_all("init");
    repo
}

fn staged_id(stdout: &str) -> String {
    stdout
        .lines()
        .find_map(|l| l.strip_prefix("Staged preview "))
        .and_then(|rest| rest.split('.').next())
        .unwrap_or_else(|| panic!("no id in:\n{stdout}"))
        .to_string()
}

/// The paths a preview touches.
fn preview_paths(repo: &TestRepo, id: &str) -> Vec<String> {
    let r = format!("refs/astedit/{id}");
    repo.git(&["diff", "--name-only", &format!("{r}~"), &r])
        .lines()
        .map(str::to_string)
        .collect()
}

#[test]
fn readme_edit_example_stages_in_a_repository_with_markdown_yaml_json_toml() {
    let repo = mixed_repo(&[
        ("src/app.ts", "console.log(\"total\", n);\nconsole.log();\n"),
        ("src/util.js", "export const f = () => console.log(a);\n"),
    ]);
    let before = repo.snapshot();
    let out = repo.run(&[
        "edit",
        "-p",
        "console.log($$$A)",
        "-r",
        "logger.debug($$$A)",
    ]);
    out.assert_code(0);
    let id = staged_id(&out.stdout);
    assert_eq!(preview_paths(&repo, &id), ["src/app.ts", "src/util.js"]);
    assert_eq!(
        repo.git(&["cat-file", "blob", &format!("refs/astedit/{id}:src/app.ts")]),
        "logger.debug(\"total\", n);\nlogger.debug();\n"
    );
    // TypeScript and JavaScript files were searched: no word on the others (issue 52
    // item 5); with -v one warning names the skipped languages and why.
    assert!(!out.stderr.contains("skipping"), "{}", out.stderr);
    let verbose = repo.run(&["grep", "-v", "-p", "console.log($$$A)"]);
    let notes: Vec<&str> = verbose
        .stderr
        .lines()
        .filter(|l| l.contains("skipping"))
        .collect();
    assert_eq!(notes.len(), 1, "{}", verbose.stderr);
    for lang in ["Markdown", "Yaml", "Json", "Html"] {
        assert!(notes[0].contains(lang), "{lang} not named: {}", notes[0]);
    }
    assert!(notes[0].contains("only text in"), "{}", notes[0]);
    assert_eq!(repo.snapshot(), before, "edit wrote to the work tree");
    repo.fsck();

    // The same in JSON: the skipped languages are listed, the preview staged.
    repo.run(&["discard", &id]).assert_code(0);
    let json = repo
        .run(&[
            "--json",
            "edit",
            "-p",
            "console.log($$$A)",
            "-r",
            "logger.debug($$$A)",
        ])
        .assert_code(0)
        .json();
    assert!(json["id"].is_string(), "{json}");
    let langs: Vec<&str> = json["skipped_languages"]
        .as_array()
        .expect("skipped_languages")
        .iter()
        .filter_map(|l| l["lang"].as_str())
        .collect();
    assert_eq!(langs.len(), 4, "{json}");
}

#[test]
fn readme_unwrap_example_stages_in_a_rust_repository_with_a_readme() {
    let repo = mixed_repo(&[(
        "src/main.rs",
        "fn main() -> Result<(), E> {\n    let v = read().unwrap();\n    Ok(())\n}\n",
    )]);
    let out = repo.run(&["edit", "-p", "$A.unwrap()", "-r", "$A?"]);
    out.assert_code(0);
    let id = staged_id(&out.stdout);
    assert_eq!(preview_paths(&repo, &id), ["src/main.rs"]);
    assert!(repo
        .git(&[
            "cat-file",
            "blob",
            &format!("refs/astedit/{id}:src/main.rs")
        ])
        .contains("let v = read()?;"),);
}

#[test]
fn grep_skips_languages_where_the_pattern_is_only_text() {
    let repo = mixed_repo(&[("src/app.ts", "console.log(1);\n")]);
    let out = repo.run(&["grep", "-p", "console.log($$$A)"]);
    out.assert_code(0);
    assert_eq!(out.stdout, "src/app.ts:1:1: console.log(1)\n");
    // TypeScript was searched: the skipped languages are said with -v only.
    assert!(!out.stderr.contains("skipping"), "{}", out.stderr);
    let out = repo.run(&["grep", "-v", "-p", "console.log($$$A)"]);
    assert_eq!(
        out.stderr
            .lines()
            .filter(|l| l.contains("skipping"))
            .count(),
        1,
        "{}",
        out.stderr
    );
    // Without metavariables too: a Markdown paragraph is no code.
    let out = repo.run(&["grep", "-p", "console.log(y)"]);
    out.assert_code(1);
    assert_eq!(out.stdout, "");
    // Forcing the language takes a text pattern as asked…
    let out = repo.run(&["grep", "-l", "md", "-p", "# Demo"]);
    assert_ne!(out.code, 2, "{}", out.stderr);
    // …but metavariables that Markdown reads as text are an error there.
    let out = repo.run(&["grep", "-l", "md", "-p", "$A.unwrap()"]);
    out.assert_code(2);
    assert!(out.stderr.contains("Markdown"), "{}", out.stderr);
}

#[test]
fn a_template_check_is_only_done_for_the_languages_kept() {
    let repo = mixed_repo(&[("src/app.ts", "foo(1);\n")]);
    // The template's $A is undefined nowhere that counts: TS defines it.
    repo.run(&["edit", "-p", "foo($A)", "-r", "bar($A)"])
        .assert_code(0);
    // A real undefined metavariable is still refused.
    let out = repo.run(&["edit", "-p", "foo($A)", "-r", "bar($B)"]);
    out.assert_code(2);
    assert!(out.stderr.contains("$B"), "{}", out.stderr);
}

#[test]
fn a_pattern_never_matches_a_missing_token() {
    let repo = TestRepo::new();
    // `a?.b` is real; the line below it lacks a `)` that the parser invents.
    repo.write("a.ts", "const v = a?.b;\nlet y = foo(x;\nfoo(z);\n");
    repo.commit_all("init");
    let out = repo.run(&["grep", "-p", "foo($A)"]);
    out.assert_code(0);
    assert_eq!(out.stdout, "a.ts:3:1: foo(z)\n");
    let out = repo.run(&["grep", "-p", "$A?.$B"]);
    out.assert_code(0);
    assert_eq!(out.stdout, "a.ts:1:11: a?.b\n");
    let out = repo.run(&["edit", "-p", "foo($A)", "-r", "bar($A)"]);
    out.assert_code(0);
    let id = staged_id(&out.stdout);
    assert_eq!(
        repo.git(&["cat-file", "blob", &format!("refs/astedit/{id}:a.ts")]),
        "const v = a?.b;\nlet y = foo(x;\nbar(z);\n"
    );
}

#[test]
fn a_pathspec_that_matches_nothing_is_an_error_naming_it() {
    let repo = TestRepo::new();
    repo.write("src/a.ts", "foo(1);\n");
    repo.write(
        "astedit.toml",
        "[[rules]]\nid = \"r\"\nlanguage = \"ts\"\nmessage = \"m\"\nrule.pattern = \"foo($A)\"\n",
    );
    repo.commit_all("init");
    for args in [
        &["grep", "-p", "foo($A)", "nomatch"][..],
        &["grep", "-p", "foo($A)", "src", "nomatch"][..],
        &["edit", "-p", "foo($A)", "-r", "bar($A)", "nomatch"][..],
        &["scan", "nomatch"][..],
        &["scan", "--check", "nomatch"][..],
        &["scan", "--cached", "nomatch"][..],
    ] {
        let out = repo.run(args);
        out.assert_code(2);
        assert!(
            out.stderr
                .contains("pathspec 'nomatch' did not match any files"),
            "{args:?}: {}",
            out.stderr
        );
        assert_eq!(out.stdout, "", "{args:?}");
    }
    // Under --json, the error is one object with a stable code.
    let out = repo.run(&["--json", "grep", "-p", "foo($A)", "nomatch"]);
    out.assert_code(2);
    assert_eq!(out.json()["error"]["code"], "pathspec-no-match");
    // Several are named together; a matching one and an exclusion are fine.
    let out = repo.run(&["grep", "-p", "foo($A)", "x", "y"]);
    assert!(
        out.stderr
            .contains("pathspecs 'x', 'y' did not match any files"),
        "{}",
        out.stderr
    );
    repo.run(&["grep", "-p", "foo($A)", "src", ":!nomatch"])
        .assert_code(0);
    // A folder below the current one, named relative to it.
    repo.run_in("src", &["grep", "-p", "foo($A)", "a.ts"])
        .assert_code(0);
    repo.run_in("src", &["grep", "-p", "foo($A)", "src/a.ts"])
        .assert_code(2);
}

#[test]
fn literal_pathspecs_are_honoured_and_never_check_nothing() {
    let repo = TestRepo::new();
    repo.write("b[1].ts", "foo(1);\n");
    repo.write("b1.ts", "foo(2);\n");
    repo.write("astedit.toml", "[[rules]]\nid = \"r\"\nlanguage = \"ts\"\nseverity = \"error\"\nmessage = \"m\"\nrule.pattern = \"foo($A)\"\n");
    repo.commit_all("init");
    let literal = [("GIT_LITERAL_PATHSPECS", "1")];
    // git without it: the spec is a glob too, naming both files.
    let git = repo.git_output(&["-c", "core.quotepath=off", "ls-files", "--", "b[1].ts"]);
    assert_eq!(git.stdout, "b1.ts\nb[1].ts\n");
    let out = repo.run_with(".", &["grep", "-p", "foo($A)", "b[1].ts"], &literal, None);
    out.assert_code(0);
    assert_eq!(out.stdout, "b[1].ts:1:1: foo(1)\n");
    // Without it, the spec is a glob as well, as in git.
    let out = repo.run(&["grep", "-p", "foo($A)", "b[1].ts"]);
    assert_eq!(out.stdout, "b1.ts:1:1: foo(2)\nb[1].ts:1:1: foo(1)\n");
    // scan finds the finding (exit 1 for an error-level one), never "0 files".
    let out = repo.run_with(".", &["scan", "b[1].ts"], &literal, None);
    out.assert_code(1);
    assert!(
        out.stdout.contains("b[1].ts:1:1: error[r]: m"),
        "{}",
        out.stdout
    );
    // A glob is no glob under it: it matches nothing, which is an error.
    let out = repo.run_with(".", &["scan", "*.ts"], &literal, None);
    out.assert_code(2);
    assert!(
        out.stderr
            .contains("pathspec '*.ts' did not match any files"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr.contains("GIT_LITERAL_PATHSPECS"),
        "{}",
        out.stderr
    );
    let out = repo.run_with(".", &["scan", "--cached", "*.ts"], &literal, None);
    out.assert_code(2);
    // --cached honours it too.
    let out = repo.run_with(".", &["scan", "--cached", "b[1].ts"], &literal, None);
    out.assert_code(1);
    assert!(out.stdout.contains("b[1].ts:1:1"), "{}", out.stdout);
    assert!(!out.stdout.contains("b1.ts"), "{}", out.stdout);
}

#[test]
fn max_filesize_above_the_ceiling_is_refused() {
    let repo = TestRepo::new();
    repo.write("a.ts", "foo(1);\n");
    repo.write(
        "astedit.toml",
        "[[rules]]\nid = \"r\"\nlanguage = \"ts\"\nmessage = \"m\"\nrule.pattern = \"foo($A)\"\n",
    );
    repo.commit_all("init");
    let out = repo.run(&["grep", "-p", "foo($A)", "--max-filesize", "300000000"]);
    out.assert_code(2);
    assert!(
        out.stderr.contains("above the ceiling of 67108864 bytes"),
        "{}",
        out.stderr
    );
    let out = repo.run(&["--json", "scan", "--max-filesize", "300000000"]);
    out.assert_code(2);
    assert_eq!(out.json()["error"]["code"], "max-filesize-too-large");
    // At the ceiling: accepted.
    repo.run(&["grep", "-p", "foo($A)", "--max-filesize", "67108864"])
        .assert_code(0);
}

// The README's "Differences from ast-grep", one test each.

#[test]
fn differs_go_calls_on_a_package_member_match() {
    let repo = TestRepo::new();
    repo.write(
        "a.go",
        "package p\n\nimport (\n\t\"errors\"\n\t\"fmt\"\n)\n\nfunc f(x bool) error {\n\tif x {\n\t\treturn errors.New(\"x\")\n\t}\n\treturn fmt.Errorf(\"a %d\", 1)\n}\n",
    );
    repo.commit_all("init");
    let out = repo.run(&["grep", "-p", "errors.New($M)"]);
    out.assert_code(0);
    assert_eq!(out.stdout, "a.go:10:10: errors.New(\"x\")\n");
    let out = repo.run(&["grep", "-p", "fmt.Errorf($$$A)"]);
    out.assert_code(0);
    assert_eq!(out.stdout, "a.go:12:9: fmt.Errorf(\"a %d\", 1)\n");
}

#[test]
fn differs_a_rewrite_replaces_only_what_the_pattern_covers() {
    let repo = TestRepo::new();
    repo.write("a.rb", "def f\n  raise A, \"m\", bt\nend\n");
    repo.commit_all("init");
    let out = repo.run(&["edit", "-p", "raise $E, $M", "-r", "raise $E.new($M)"]);
    out.assert_code(0);
    let id = staged_id(&out.stdout);
    // ast-grep -U writes `raise A.new("m")`, dropping the backtrace argument.
    assert_eq!(
        repo.git(&["cat-file", "blob", &format!("refs/astedit/{id}:a.rb")]),
        "def f\n  raise A.new(\"m\"), bt\nend\n"
    );
}

#[test]
fn differs_tracked_files_in_hidden_folders_are_searched() {
    let repo = TestRepo::new();
    repo.write(".config/a.ts", "foo(1);\n");
    repo.write(".github/scripts/b.js", "foo(2);\n");
    repo.write(".cache/c.ts", "foo(3);\n");
    repo.write(".gitignore", ".cache/\n");
    repo.commit_all("init");
    let out = repo.run(&["grep", "-p", "foo($A)"]);
    out.assert_code(0);
    assert_eq!(
        out.stdout,
        ".config/a.ts:1:1: foo(1)\n.github/scripts/b.js:1:1: foo(2)\n"
    );
}

#[test]
fn differs_nested_matches_are_all_rewritten() {
    let repo = TestRepo::new();
    repo.write("a.ts", "foo(foo(x));\n");
    repo.commit_all("init");
    let out = repo.run(&["edit", "-p", "foo($A)", "-r", "bar($A)"]);
    out.assert_code(0);
    let id = staged_id(&out.stdout);
    // ast-grep -U: `bar(foo(x));`.
    assert_eq!(
        repo.git(&["cat-file", "blob", &format!("refs/astedit/{id}:a.ts")]),
        "bar(bar(x));\n"
    );
}

#[test]
fn differs_extensions_are_case_insensitive() {
    let repo = TestRepo::new();
    repo.write("B.RS", "fn main() { x.unwrap(); }\n");
    repo.commit_all("init");
    let out = repo.run(&["grep", "-p", "$A.unwrap()"]);
    out.assert_code(0);
    assert_eq!(out.stdout, "B.RS:1:13: x.unwrap()\n");
}

#[test]
fn differs_matches_in_a_misread_doc_comment_are_not_found() {
    // The `//` comment continues onto the next line (a C line continuation), so the
    // parser reads `/**` as part of it and the `*`-led lines after it as code, with
    // errors; ast-grep matches `* v = foo(x)` there. The prefilter sees a doc block and
    // never parses the file (so it is not listed among parse errors either).
    let repo = TestRepo::new();
    repo.write(
        "e.c",
        "int f(void) {\n  int v = 0; // see below \\\n/**\n * v = foo(x);\n */\n  return v;\n}\n",
    );
    repo.write(
        "g.c",
        "int f(void) {\n  int v = 0;\n  v = foo(x);\n  return v;\n}\n",
    );
    repo.commit_all("init");
    let out = repo.run(&["grep", "-p", "$V = foo($A)"]);
    out.assert_code(0);
    assert_eq!(out.stdout, "g.c:3:3: v = foo(x)\n");
    assert!(!out.stderr.contains("parsed with errors"), "{}", out.stderr);
}

// Papercuts.

#[test]
fn bare_invocation_is_a_usage_error_with_help_on_stderr() {
    let repo = TestRepo::new();
    let out = repo.run(&[]);
    out.assert_code(2);
    assert_eq!(out.stdout, "");
    assert!(out.stderr.contains("Usage:"), "{}", out.stderr);
    // Asking for help is no error.
    let out = repo.run(&["--help"]);
    out.assert_code(0);
    assert!(out.stdout.contains("Usage:"), "{}", out.stdout);
}

#[test]
fn readme_guide_and_cargo_toml_agree() {
    let root = env!("CARGO_MANIFEST_DIR");
    let readme = std::fs::read_to_string(format!("{root}/README.md")).expect("README");
    let cargo = std::fs::read_to_string(format!("{root}/Cargo.toml")).expect("Cargo.toml");
    let version = cargo
        .lines()
        .find_map(|l| l.strip_prefix("rust-version = \""))
        .and_then(|v| v.strip_suffix('"'))
        .expect("rust-version");
    assert!(
        readme.contains(&format!("Rust toolchain ({version} or newer")),
        "README names another Rust version than {version}"
    );
    for key in ["keywords = ", "categories = "] {
        assert!(cargo.contains(key), "Cargo.toml lacks {key}");
    }
    // Every error code of exit 3 is in the guide's exit-code table.
    let exit_codes =
        std::fs::read_to_string(format!("{root}/docs/src/exit-codes.md")).expect("exit codes");
    let table_row = exit_codes
        .lines()
        .find(|l| l.starts_with("| 3 |"))
        .expect("exit 3 row");
    assert!(table_row.contains("already-applied"), "{table_row}");
    assert!(std::path::Path::new(&format!("{root}/CHANGELOG.md")).is_file());
}

#[test]
fn the_example_workflow_can_run_its_jobs() {
    let root = env!("CARGO_MANIFEST_DIR");
    let wf = std::fs::read_to_string(format!("{root}/fixtures/scan/github-workflow.yml"))
        .expect("workflow");
    // The check job's condition can be met: the workflow runs on pull requests.
    assert!(wf.contains("if: github.event_name == 'pull_request'"));
    let on = wf
        .split("\non:")
        .nth(1)
        .and_then(|s| s.split("\n\n").next())
        .expect("on:");
    assert!(on.contains("pull_request"), "{on}");
    // Not from crates.io, where the crate is not published.
    assert!(!wf.contains("cargo install --locked git-astedit"), "{wf}");
    // Every job that pushes may write.
    let jobs = wf.split("\njobs:\n").nth(1).expect("jobs");
    for job in jobs
        .split("\n  ")
        .filter(|j| !j.starts_with(' ') && j.contains(':'))
    {
        let name = job.lines().next().unwrap_or_default();
        if job.contains("git push") {
            assert!(
                job.contains("contents: write"),
                "job {name} pushes without write permission"
            );
        }
    }
}

#[test]
fn pre_commit_hooks_filter_by_language() {
    let root = env!("CARGO_MANIFEST_DIR");
    let hooks = std::fs::read_to_string(format!("{root}/.pre-commit-hooks.yaml")).expect("hooks");
    // astedit-scan, astedit-check (on the lines being committed), their -all forms
    // and astedit-check-changed, each filtered by language.
    assert_eq!(hooks.matches("- id: ").count(), 5);
    assert_eq!(hooks.matches("types_or: ").count(), 5, "{hooks}");
    for tag in ["javascript", "ts", "tsx", "python", "rust", "go", "java"] {
        assert!(hooks.contains(&format!(" {tag},")), "{tag} missing");
    }
}

#[test]
fn a_hook_apply_rolled_back_behind_its_back_cannot_be_undone_and_says_so() {
    // What pre-commit does when the fixes conflict with stashed unstaged changes:
    // the hook applied (journal: applied, with the hook's reason), then pre-commit
    // restored the files.
    let repo = TestRepo::new();
    repo.write(
        "astedit.toml",
        "[[rules]]\nid = \"r\"\nlanguage = \"ts\"\nmessage = \"m\"\nrule.pattern = \"foo($A)\"\nfix = \"bar($A)\"\n",
    );
    repo.write("a.ts", "foo(1);\n");
    repo.commit_all("init");
    let reason = "pre-commit hook; if pre-commit rolled these fixes back, there is nothing to undo";
    repo.run(&["scan", "--apply", "--reason", reason, "a.ts"])
        .assert_code(1);
    assert_eq!(repo.read_string("a.ts"), "bar(1);\n");
    let log = repo.run(&["--json", "log"]).assert_code(0).json();
    assert_eq!(log["events"][0]["event"], "applied");
    assert_eq!(log["events"][0]["reason"], reason);
    // pre-commit's rollback.
    repo.git(&["checkout", "--", "a.ts"]);
    let before = repo.snapshot();
    let out = repo.run(&["undo"]);
    out.assert_code(3);
    assert!(out.stderr.contains("a.ts"), "{}", out.stderr);
    assert_eq!(repo.snapshot(), before, "undo wrote something");
    repo.fsck();
}

#[test]
fn under_pre_commit_a_rolled_back_fix_leaves_a_true_journal() {
    // The real framework (from PyPI; skipped with a message when it cannot be had):
    // unstaged changes that conflict with the hook's fixes make pre-commit roll the
    // fixes back.
    let Some(pre_commit) = crate::scan::pre_commit() else {
        return;
    };
    let repo = TestRepo::new();
    repo.write(
        "astedit.toml",
        "[[rules]]\nid = \"r\"\nlanguage = \"ts\"\nmessage = \"m\"\nrule.pattern = \"foo($A)\"\nfix = \"bar($A)\"\n",
    );
    repo.write("a.ts", "foo(1);\n");
    repo.commit_all("init");
    repo.write("a.ts", "foo(1);\nfoo(2);\n");
    repo.git(&["add", "a.ts"]);
    // Unstaged: a line right after the one the fix changes.
    repo.write("a.ts", "foo(1);\nfoo(2);\nfoo(3);\n");
    let bin_dir = crate::util::bin()
        .parent()
        .map(std::path::Path::to_path_buf)
        .unwrap_or_default();
    let path = format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let cache = tempfile::tempdir().expect("tempdir");
    let out = std::process::Command::new(&pre_commit)
        .args(["try-repo", env!("CARGO_MANIFEST_DIR"), "astedit-scan"])
        .current_dir(repo.path())
        .env("PATH", &path)
        .env("PRE_COMMIT_HOME", cache.path())
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_AUTHOR_NAME", "T")
        .env("GIT_AUTHOR_EMAIL", "t@example.com")
        .env("GIT_COMMITTER_NAME", "T")
        .env("GIT_COMMITTER_EMAIL", "t@example.com")
        .output()
        .expect("run pre-commit");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(text.contains("Rolling back fixes"), "{text}");
    // The user's bytes are back, unstaged change included.
    assert_eq!(repo.read_string("a.ts"), "foo(1);\nfoo(2);\nfoo(3);\n");
    // The journal says what happened and why undo cannot take it back.
    let log = repo.run(&["--json", "log"]).assert_code(0).json();
    assert_eq!(log["events"][0]["event"], "applied");
    assert!(
        log["events"][0]["reason"]
            .as_str()
            .is_some_and(|r| r.contains("nothing to undo")),
        "{log}"
    );
    let before = repo.snapshot();
    repo.run(&["undo"]).assert_code(3);
    assert_eq!(repo.snapshot(), before);
    repo.fsck();
}
