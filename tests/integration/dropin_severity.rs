//! Severities given on the command line as ast-grep 0.51.1 reads them (issue 51): a
//! severity with no id (`--error`, `--warning`, `--info`, `--hint`) or with a rule's id
//! turns on a rule whose file says `severity: off`; `--off` turns rules off; a
//! severity naming a rule wins over one for all rules, whichever comes first. An
//! `ast-grep-ignore` comment that silences nothing is reported (rule
//! `unused-suppression`, a hint) when the project's rules run, not for rules given
//! alone (`-r FILE`, `--inline-rules`), unless a severity names it.
//!
//! The comparison with ast-grep needs ast-grep 0.51.1 (`ASTEDIT_AST_GREP`, else
//! `ast-grep` on PATH); without one it is skipped with a message, unless
//! ASTEDIT_REQUIRE_AST_GREP is set. The rest runs everywhere.

use crate::util::TestRepo;

/// A project with a rule its file turns off (with a fix) and one that runs.
fn project() -> TestRepo {
    let repo = TestRepo::new();
    repo.write("sgconfig.yml", "ruleDirs: [rules]\n");
    repo.write(
        "rules/off.yml",
        "id: quiet\nlanguage: js\nseverity: off\nmessage: log $A\n\
         rule: {pattern: console.log($A)}\nfix: logger.info($A)\n",
    );
    repo.write(
        "rules/on.yml",
        "id: loud\nlanguage: js\nseverity: info\nrule: {pattern: foo($A)}\n",
    );
    repo.write("a.js", "console.log(1);\nfoo(2);\n");
    repo.commit_all("init");
    repo
}

/// `(rule, severity)` of each finding of `scan --json ARGS`, in order.
fn found(repo: &TestRepo, args: &[&str]) -> Vec<(String, String)> {
    let mut full = vec!["--json", "scan"];
    full.extend_from_slice(args);
    let out = repo.run(&full);
    let v = out.json();
    v["findings"]
        .as_array()
        .unwrap_or_else(|| panic!("{args:?}: {}", out.stderr))
        .iter()
        .map(|f| {
            (
                f["rule"].as_str().unwrap_or("").to_string(),
                f["severity"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect()
}

fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
    list.iter()
        .map(|(r, s)| (r.to_string(), s.to_string()))
        .collect()
}

#[test]
fn a_severity_turns_on_a_rule_its_file_turns_off() {
    let repo = project();
    // Twice each: the second run reads the rules' plan from the result cache.
    for cache in ["--no-cache", "--no-cache", "", ""] {
        let with = |args: &[&str]| {
            let mut all: Vec<&str> = args.to_vec();
            if !cache.is_empty() {
                all.insert(0, cache);
            }
            found(&repo, &all)
        };
        assert_eq!(with(&[]), pairs(&[("loud", "info")]));
        assert_eq!(
            with(&["--error"]),
            pairs(&[("quiet", "error"), ("loud", "error")])
        );
        assert_eq!(
            with(&["--hint=quiet"]),
            pairs(&[("quiet", "hint"), ("loud", "info")])
        );
        assert_eq!(
            with(&["--error", "--off=quiet"]),
            pairs(&[("loud", "error")])
        );
        assert_eq!(
            with(&["--error=quiet", "--off"]),
            pairs(&[("quiet", "error")])
        );
        assert_eq!(
            with(&["--warning", "--min-severity", "warning"]),
            pairs(&[("quiet", "warning"), ("loud", "warning")])
        );
        assert_eq!(with(&["--hint", "--min-severity", "info"]), pairs(&[]));
    }
    // Turned on, its fix is one too.
    let out = repo.run(&["scan", "--warning=quiet", "--check"]);
    out.assert_code(1);
    assert!(out.stdout.contains("+logger.info(1);"), "{}", out.stdout);
    repo.run(&["scan", "--check"]).assert_code(0);
}

#[test]
fn command_line_severities_read_as_ast_greps() {
    let Some(ast_grep) = crate::lsp_astgrep::ast_grep_or_skip() else {
        return;
    };
    let repo = project();
    for flags in [
        &[][..],
        &["--error"],
        &["--warning"],
        &["--info"],
        &["--hint"],
        &["--error=quiet"],
        &["--error=loud"],
        &["--off"],
        &["--error", "--off"],
        &["--error", "--off=quiet"],
        &["--error=quiet", "--off"],
        &["--off=loud", "--error"],
        &["--hint=loud", "--error"],
        &["--error=loud", "--hint"],
    ] {
        let mut args = vec!["scan", "--json=stream"];
        args.extend_from_slice(flags);
        let theirs = crate::dropin_extension::run_ast_grep(&ast_grep, &repo, &args);
        let ours = repo.run(&args);
        let mut expected: Vec<&str> = std::str::from_utf8(&theirs.stdout)
            .expect("UTF-8")
            .lines()
            .collect();
        let mut got: Vec<&str> = ours.stdout.lines().collect();
        expected.sort_unstable();
        got.sort_unstable();
        assert_eq!(got, expected, "{flags:?}: {}", ours.stderr);
        assert_eq!(Some(ours.code), theirs.status.code(), "{flags:?}");
    }
}

/// The rule ids `scan --json=stream ARGS` reports with `tool`, sorted.
fn stream_ids(repo: &TestRepo, tool: Option<&std::path::Path>, args: &[&str]) -> Vec<String> {
    let mut full = vec!["scan", "--json=stream"];
    full.extend_from_slice(args);
    let stdout = match tool {
        Some(tool) => {
            let out = crate::dropin_extension::run_ast_grep(tool, repo, &full);
            String::from_utf8(out.stdout).expect("UTF-8")
        }
        None => repo.run(&full).stdout,
    };
    let mut ids: Vec<String> = stdout
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).expect("a JSON line");
            v["ruleId"].as_str().unwrap_or("").to_string()
        })
        .collect();
    ids.sort();
    ids
}

#[test]
fn unused_suppressions_only_when_the_projects_rules_run() {
    let repo = project();
    repo.write(
        "b.js",
        "// ast-grep-ignore: loud
let q = 1;
",
    );
    repo.commit_all("a comment that silences nothing");
    let cases: [(&[&str], &[&str]); 5] = [
        (&[], &["loud", "unused-suppression"]),
        (&["-c", "sgconfig.yml"], &["loud", "unused-suppression"]),
        (&["-r", "rules/on.yml"], &["loud"]),
        (
            &[
                "--inline-rules",
                "id: loud\nlanguage: js\nrule: {pattern: foo($A)}\n",
            ],
            &["loud"],
        ),
        (
            &["-r", "rules/on.yml", "--hint=unused-suppression"],
            &["loud", "unused-suppression"],
        ),
    ];
    let ast_grep = crate::lsp_astgrep::ast_grep_or_skip();
    for (args, expected) in cases {
        assert_eq!(stream_ids(&repo, None, args), expected, "{args:?}");
        if let Some(tool) = &ast_grep {
            assert_eq!(
                stream_ids(&repo, Some(tool), args),
                expected,
                "ast-grep {args:?}"
            );
        }
    }
}
