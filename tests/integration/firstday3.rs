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

// Item 5, on a terminal: with no pager the default cap spares a person a flood, and
// the note says where it stopped; under a pager every match goes to it.
#[test]
fn grep_on_a_terminal_caps_only_where_no_pager_runs() {
    let repo = TestRepo::new();
    let body: String = (0..403).map(|i| format!("f({i});\n")).collect();
    repo.write("a.js", body);
    repo.commit_all("init");
    let count = |text: &str| text.lines().filter(|l| l.contains(": f(")).count();

    let out = crate::look::on_tty(
        &repo,
        &["grep", "-p", "f($A)"],
        &[("GIT_PAGER", "cat")],
        None,
    );
    out.assert_code(0);
    assert_eq!(count(&out.stdout), 200, "{}", out.stdout);
    assert!(
        out.stdout.contains("stopped at 200 of 403 matches"),
        "{}",
        out.stdout
    );

    let out = crate::look::on_tty(
        &repo,
        &["grep", "-p", "f($A)"],
        &[("GIT_PAGER", "sed -n p")],
        None,
    );
    out.assert_code(0);
    assert_eq!(count(&out.stdout), 403, "{}", out.stdout);
    assert!(!out.stdout.contains("stopped at"), "{}", out.stdout);
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

// Item 7: `list` with nothing pending says so on stderr, and how to stage one; stdout
// stays empty for a script.
#[test]
fn list_with_nothing_pending_says_how_to_stage_one() {
    let repo = TestRepo::new();
    repo.write("a.js", "f(1);\n");
    repo.commit_all("init");
    let out = repo.run(&["list"]);
    out.assert_code(0);
    assert_eq!(out.stdout, "");
    assert!(out.stderr.contains("No pending previews"), "{}", out.stderr);
    assert!(out.stderr.contains("git astedit edit -p"), "{}", out.stderr);
    let json = repo.run(&["--json", "list"]).assert_code(0).json();
    assert_eq!(json["previews"], serde_json::json!([]));
}

// Item 7: outside a repository, one line says so (and the hint), with no internal
// causes under it.
#[test]
fn not_a_repository_is_one_line_and_a_hint() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = crate::util::run_command({
        let mut cmd = std::process::Command::new(crate::util::bin());
        cmd.arg("list")
            .current_dir(dir.path())
            .env(
                "GIT_CEILING_DIRECTORIES",
                dir.path().parent().expect("parent"),
            )
            .env_remove("GIT_DIR");
        cmd
    });
    out.assert_code(2);
    assert!(
        out.stderr.contains("not a git repository"),
        "{}",
        out.stderr
    );
    assert!(!out.stderr.contains("caused by"), "{}", out.stderr);
    assert!(out.stderr.contains("hint: "), "{}", out.stderr);
}

// Item 7: a mistyped language gets the one it is near, not all of them; the server's
// `next` is that same call with `lang` fixed (arguments, never a sentence).
#[test]
fn a_mistyped_language_is_suggested_on_the_command_line_and_to_an_agent() {
    let repo = TestRepo::new();
    repo.write("a.js", "f(1);\n");
    repo.commit_all("init");
    let out = repo.run(&["grep", "-p", "f($A)", "-l", "javscript"]);
    out.assert_code(2);
    assert!(
        out.stderr.contains("did you mean JavaScript?"),
        "{}",
        out.stderr
    );
    assert!(!out.stderr.contains("Bash"), "{}", out.stderr);
    // Nothing near: the list.
    let out = repo.run(&["grep", "-p", "f($A)", "-l", "cobol"]);
    out.assert_code(2);
    assert!(
        out.stderr.contains("known languages: Bash"),
        "{}",
        out.stderr
    );

    let mut server = crate::mcp::Server::start(&repo);
    server.handshake("2025-06-18", "firstday");
    let result = server.call(
        "ast_grep",
        serde_json::json!({"pattern": "f($A)", "lang": "javscript"}),
    );
    assert_eq!(result["isError"], true, "{result}");
    let block = result["content"][1]["text"].as_str().unwrap_or_default();
    let json: serde_json::Value = serde_json::from_str(block).expect("error JSON");
    let next = &json["error"]["next"];
    assert_eq!(next["tool"], "ast_grep", "{json}");
    assert_eq!(
        next["arguments"],
        serde_json::json!({"pattern": "f($A)", "lang": "JavaScript"}),
        "{json}"
    );
    // A bad pattern: the same arguments, and what to change in words beside them.
    let result = server.call("ast_grep", serde_json::json!({"pattern": ""}));
    let block = result["content"][1]["text"].as_str().unwrap_or_default();
    let json: serde_json::Value = serde_json::from_str(block).expect("error JSON");
    let next = &json["error"]["next"];
    assert!(next["arguments"].is_object(), "{json}");
    assert!(next["change"].is_string(), "{json}");
}

// Item 7: `help grep` does not list ast-grep's -k, which is refused with what to type.
#[test]
fn help_grep_does_not_list_an_unsupported_flag() {
    let repo = TestRepo::new();
    let out = repo.run(&["help", "grep"]);
    out.assert_code(0);
    assert!(!out.stdout.contains("--kind"), "{}", out.stdout);
    let out = repo.run(&["grep", "-k", "call_expression", "-p", "f()"]);
    out.assert_code(2);
    assert!(out.stderr.contains("--inline-rules"), "{}", out.stderr);
}

/// Two rules whose messages use a metavariable they do not capture: two warnings.
const WARNED_RULES: &str = r#"
[[rules]]
id = "one"
language = "javascript"
message = "uses $NOPE"
rule.pattern = "f($A)"

[[rules]]
id = "two"
language = "javascript"
message = "uses $NADA"
rule.pattern = "g($A)"
"#;

// Item 7: the warnings about a rule project's files are said once; later scans of the
// same rules say how many in one line, and the command that lists them.
#[test]
fn rule_file_warnings_are_said_once_then_counted() {
    let repo = TestRepo::new();
    repo.write("astedit.toml", WARNED_RULES);
    repo.write("a.js", "f(1);\n");
    repo.commit_all("init");
    let first = repo.run(&["scan"]);
    assert_eq!(
        first
            .stderr
            .matches("which the rule does not capture")
            .count(),
        2,
        "{}",
        first.stderr
    );
    let again = repo.run(&["scan"]);
    assert_eq!(again.stdout, first.stdout);
    assert!(
        !again.stderr.contains("which the rule does not capture"),
        "{}",
        again.stderr
    );
    assert!(
        again.stderr.contains("2 warnings about the rule files, as on the last scan; `git astedit scan --no-cache` lists them"),
        "{}",
        again.stderr
    );
    let listed = repo.run(&["scan", "--no-cache"]);
    assert_eq!(
        listed
            .stderr
            .matches("which the rule does not capture")
            .count(),
        2,
        "{}",
        listed.stderr
    );
    // A changed rule file: said again.
    repo.write("astedit.toml", format!("{WARNED_RULES}\n"));
    let changed = repo.run(&["scan"]);
    assert_eq!(
        changed
            .stderr
            .matches("which the rule does not capture")
            .count(),
        2,
        "{}",
        changed.stderr
    );
}

// Item 6: the guide names only scripts and files this repository has (it named a
// `docs/tools.sh` that never existed). Paths under src/ are examples of a user's code.
#[test]
fn the_guide_names_only_files_the_repository_has() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let path =
        regex::Regex::new(r"`((?:docs|dist|bench|fixtures|tests|\.ci|\.github)/[A-Za-z0-9_./-]+)`")
            .expect("regex");
    let mut docs = vec![root.join("README.md")];
    let mut dirs = vec![root.join("docs/src")];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).expect("docs") {
            let p = entry.expect("entry").path();
            if p.is_dir() {
                dirs.push(p);
            } else if p.extension().is_some_and(|e| e == "md") {
                docs.push(p);
            }
        }
    }
    let mut missing = Vec::new();
    for doc in docs {
        let text = std::fs::read_to_string(&doc).expect("read");
        for c in path.captures_iter(&text) {
            let named = &c[1];
            // A placeholder (FIXTURE, OUTDIR) or what a run makes (node_modules).
            let placeholder = named.chars().any(|ch| ch.is_ascii_uppercase())
                && named
                    .split('/')
                    .any(|part| part.chars().all(|ch| ch.is_ascii_uppercase()));
            if placeholder || named.contains("node_modules") {
                continue;
            }
            if !root.join(named).exists() {
                missing.push(format!("{}: {named}", doc.display()));
            }
        }
    }
    assert!(missing.is_empty(), "{}", missing.join("\n"));
}

/// One Claude Code hook event for `session`, on stdin of `agent-hook claude-code`.
fn claude_event(repo: &TestRepo, session: &str, event: &str, tool: &str) -> crate::util::Output {
    let mut ev = serde_json::json!({
        "session_id": session,
        "cwd": repo.path().to_str().expect("utf-8"),
        "hook_event_name": event,
        "tool_name": tool,
        "tool_input": {"file_path": repo.path().join("a.js").to_str().expect("utf-8"),
                       "old_string": "f(1);", "new_string": "g(1);"},
    });
    if event == "PostToolUse" {
        ev["tool_response"] = serde_json::json!({"originalFile": "f(1);\n"});
    }
    let out = repo.run_with(
        ".",
        &["agent-hook", "claude-code"],
        &[],
        Some(ev.to_string().as_bytes()),
    );
    out.assert_code(0);
    out
}

// Item 7: the lock error and the journal spell an agent's session one way,
// `claude-code/session:<id>`.
#[test]
fn the_lock_error_and_the_journal_name_a_session_alike() {
    let repo = TestRepo::new();
    repo.write("a.js", "f(1);\n");
    repo.commit_all("init");
    claude_event(&repo, "sess-7", "PostToolUse", "Read");
    claude_event(&repo, "sess-7", "PreToolUse", "Edit");
    // The session's turn holds the repository: an apply is told whose it is.
    let out = repo.run(&["undo"]);
    out.assert_code(6);
    assert!(
        out.stderr.contains("claude-code/session:sess-7"),
        "{}",
        out.stderr
    );
    repo.write("a.js", "g(1);\n");
    claude_event(&repo, "sess-7", "PostToolUse", "Edit");
    let log = repo.run(&["log"]);
    assert!(
        log.stdout.contains("claude-code/session:sess-7"),
        "{}",
        log.stdout
    );
}

// Item 7: the undo of an agent's own edit (journalled by agent-hook) does not leave a
// preview pending that nobody staged, and does not say it does.
#[test]
fn undo_of_an_agents_own_edit_leaves_no_preview_pending() {
    let repo = TestRepo::new();
    repo.write("a.js", "f(1);\n");
    repo.commit_all("init");
    claude_event(&repo, "sess-8", "PostToolUse", "Read");
    claude_event(&repo, "sess-8", "PreToolUse", "Edit");
    repo.write("a.js", "g(1);\n");
    claude_event(&repo, "sess-8", "PostToolUse", "Edit");
    let out = repo.run(&["undo"]);
    out.assert_code(0);
    assert_eq!(repo.read_string("a.js"), "f(1);\n");
    assert!(!out.stdout.contains("pending again"), "{}", out.stdout);
    assert!(out.stdout.contains("nothing is pending"), "{}", out.stdout);
    assert!(repo.astedit_refs().is_empty(), "{:?}", repo.astedit_refs());
    let list = repo.run(&["list"]);
    assert_eq!(list.stdout, "", "{}", list.stdout);
    // A staged preview's undo still leaves it pending, to apply again by its id.
    repo.run(&["edit", "-p", "f($A)", "-r", "h($A)", "--apply"])
        .assert_code(0);
    let out = repo.run(&["--json", "undo"]).assert_code(0).json();
    assert_eq!(out["state"], "pending", "{out}");
    assert_eq!(repo.run(&["list"]).stdout.lines().count(), 1);
    repo.fsck();
}

/// The README's section under `heading` (to the next `## `).
fn readme_section(heading: &str) -> String {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(root.join("README.md")).expect("README");
    let start = text
        .find(&format!("\n{heading}\n"))
        .unwrap_or_else(|| panic!("no {heading}"));
    let rest = &text[start + heading.len() + 2..];
    let end = rest.find("\n## ").unwrap_or(rest.len());
    rest[..end].to_string()
}

// Item 1: until a release exists, the install section leads with what works from a
// checkout and keeps the registry commands under "after the first release".
#[test]
fn the_install_section_leads_with_what_works_today() {
    let install = readme_section("## Install");
    assert!(install.contains("No release is published yet"), "{install}");
    let first_block = install
        .split("```sh\n")
        .nth(1)
        .and_then(|b| b.split("```").next())
        .expect("a first sh block");
    assert!(
        first_block.contains("cargo install --locked --path ."),
        "{first_block}"
    );
    let after = install
        .find("After the first release")
        .expect("the registry lines' heading");
    for registry in [
        "pipx install git-astedit",
        "npm install -g git-astedit",
        "cargo binstall git-astedit",
        "cargo install --locked git-astedit",
    ] {
        let at = install
            .find(&format!("\n{registry}"))
            .unwrap_or_else(|| panic!("{registry} missing"));
        assert!(
            at > after,
            "{registry} is before \"After the first release\""
        );
    }
}

// Item 2: the demo shows the build's progress and says the first build is long; the
// README says how long it took, measured.
#[test]
fn the_demo_shows_its_build_and_the_readme_says_how_long_it_takes() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let demo = std::fs::read_to_string(root.join("fixtures/demo.sh")).expect("demo.sh");
    let build = demo
        .lines()
        .find(|l| l.starts_with("cargo build"))
        .expect("the build line");
    assert!(!build.contains("--quiet"), "{build}");
    assert!(demo.contains("the first build takes"), "{demo}");
    let install = readme_section("## Install");
    let times = install
        .split("### How long the first build takes")
        .nth(1)
        .expect("the build-time section");
    assert!(times.contains("./fixtures/demo.sh"), "{times}");
    assert!(times.contains(" min"), "{times}");
}

// Done means: the README's two commands, timed on a fresh clone; the test command is the
// one `.ci/run` runs, so CI cannot drift from what a reader types.
#[test]
fn the_quick_start_gives_two_timed_commands_and_ci_runs_the_second() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let quick = readme_section("## Quick start");
    let block = quick
        .split("```sh\n")
        .nth(1)
        .and_then(|b| b.split("```").next())
        .expect("the two commands' block");
    let commands: Vec<&str> = block
        .lines()
        .map(|l| l.split('#').next().unwrap_or("").trim())
        .filter(|l| !l.is_empty())
        .collect();
    assert_eq!(commands, ["./fixtures/demo.sh", "cargo test --locked"]);
    assert!(
        quick.contains("fresh clone") && quick.contains(" min"),
        "{quick}"
    );
    let ci = std::fs::read_to_string(root.join(".ci/run")).expect(".ci/run");
    assert!(
        ci.lines()
            .any(|l| !l.trim_start().starts_with('#') && l.contains("cargo test --locked")),
        "{ci}"
    );
}
