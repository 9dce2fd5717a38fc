//! Integration tests: `edit -i` and `scan -i` with scripted answers on stdin stage
//! exactly the accepted changes (checked in the preview's blobs) and write nothing
//! until `apply`.

use crate::util::Output;
use crate::util::TestRepo;

const QUESTION: &str = "Apply this change [y,n,a,d,q,e,?]? ";

/// `foo($A)` → `bar($A)`: three changes in a.js, two in b.js.
fn two_files() -> TestRepo {
    let repo = TestRepo::new();
    repo.write("a.js", "foo(1);\nfoo(2);\nfoo(3);\n");
    repo.write("b.js", "foo(4);\nother();\nfoo(5);\n");
    repo.commit_all("init");
    repo
}

fn edit_i(repo: &TestRepo, answers: &str, extra: &[&str]) -> Output {
    let mut args = vec!["edit", "-i", "-p", "foo($A)", "-r", "bar($A)"];
    args.extend_from_slice(extra);
    repo.run_with(".", &args, &[], Some(answers.as_bytes()))
}

/// The one pending preview's id.
fn only_id(repo: &TestRepo) -> String {
    let refs = repo.astedit_refs();
    assert_eq!(refs.len(), 1, "{refs:?}");
    refs[0].trim_start_matches("refs/astedit/").to_string()
}

/// The staged after-blob of `path`, or `None` when the preview does not touch it.
fn staged(repo: &TestRepo, id: &str, path: &str) -> Option<String> {
    let out = repo.git_output(&["cat-file", "blob", &format!("refs/astedit/{id}:{path}")]);
    (out.code == 0).then_some(out.stdout)
}

#[test]
fn a_mix_of_yes_and_no_stages_exactly_the_accepted_changes() {
    let repo = two_files();
    let before = repo.snapshot();
    let out = edit_i(&repo, "y\nn\ny\nn\ny\n", &[]);
    out.assert_code(0);
    // Five questions, each after its change's diff, on stdout like `git add -p`.
    assert_eq!(out.stdout.matches(QUESTION).count(), 5, "{}", out.stdout);
    assert!(
        out.stdout.contains(
            "diff --git a/a.js b/a.js\n--- a/a.js\n+++ b/a.js\n@@ -1,3 +1,3 @@ a.js:1:1\n\
             -foo(1);\n+bar(1);\n foo(2);\n foo(3);\n"
        ),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("3 replacements in 2 files"),
        "{}",
        out.stdout
    );
    let id = only_id(&repo);
    assert!(out.stdout.contains(&format!("Staged preview {id}.")));
    assert_eq!(
        staged(&repo, &id, "a.js").as_deref(),
        Some("bar(1);\nfoo(2);\nbar(3);\n")
    );
    assert_eq!(
        staged(&repo, &id, "b.js").as_deref(),
        Some("foo(4);\nother();\nbar(5);\n")
    );
    assert_eq!(repo.snapshot(), before, "the work tree was touched");
    repo.fsck();

    // Applying writes exactly what was staged.
    repo.run(&["apply", &id]).assert_code(0);
    assert_eq!(repo.read_string("a.js"), "bar(1);\nfoo(2);\nbar(3);\n");
}

#[test]
fn a_takes_and_d_skips_the_rest_of_its_file_only() {
    let repo = two_files();
    // a.js: n, then `a` takes foo(2) and foo(3) unasked. b.js: `d` skips both.
    let out = edit_i(&repo, "n\na\nd\n", &[]);
    out.assert_code(0);
    assert_eq!(out.stdout.matches(QUESTION).count(), 3, "{}", out.stdout);
    let id = only_id(&repo);
    assert_eq!(
        staged(&repo, &id, "a.js").as_deref(),
        Some("foo(1);\nbar(2);\nbar(3);\n")
    );
    assert_eq!(staged(&repo, &id, "b.js"), None);

    // `d` in the first file still asks about the second.
    repo.run(&["discard", &id]).assert_code(0);
    let out = edit_i(&repo, "y\nd\ny\nn\n", &[]);
    out.assert_code(0);
    assert_eq!(out.stdout.matches(QUESTION).count(), 4, "{}", out.stdout);
    let id = only_id(&repo);
    assert_eq!(
        staged(&repo, &id, "a.js").as_deref(),
        Some("bar(1);\nfoo(2);\nfoo(3);\n")
    );
    assert_eq!(
        staged(&repo, &id, "b.js").as_deref(),
        Some("bar(4);\nother();\nfoo(5);\n")
    );
}

#[test]
fn q_keeps_what_was_accepted_and_skips_the_rest() {
    let repo = two_files();
    let out = edit_i(&repo, "y\nq\ny\ny\n", &[]);
    out.assert_code(0);
    // Nothing is asked after `q`, in this file or the next.
    assert_eq!(out.stdout.matches(QUESTION).count(), 2, "{}", out.stdout);
    assert!(!out.stdout.contains("b.js"), "{}", out.stdout);
    let id = only_id(&repo);
    assert_eq!(
        staged(&repo, &id, "a.js").as_deref(),
        Some("bar(1);\nfoo(2);\nfoo(3);\n")
    );
    assert_eq!(staged(&repo, &id, "b.js"), None);
}

#[test]
fn end_of_input_is_quit() {
    let repo = two_files();
    let out = edit_i(&repo, "n\ny", &[]);
    out.assert_code(0);
    assert_eq!(out.stdout.matches(QUESTION).count(), 3, "{}", out.stdout);
    let id = only_id(&repo);
    assert_eq!(
        staged(&repo, &id, "a.js").as_deref(),
        Some("foo(1);\nbar(2);\nfoo(3);\n")
    );
    assert_eq!(staged(&repo, &id, "b.js"), None);

    // No input at all: nothing accepted, nothing staged.
    repo.run(&["discard", &id]).assert_code(0);
    let out = edit_i(&repo, "", &[]);
    out.assert_code(1);
    assert!(repo.astedit_refs().is_empty());
}

#[test]
fn an_unknown_answer_repeats_the_question_with_the_help() {
    let repo = two_files();
    let out = edit_i(&repo, "yes please\n?\nY\nd\nd\n", &[]);
    out.assert_code(0);
    assert!(
        out.stdout
            .contains("Unknown answer 'yes please'.\ny - apply this change\n"),
        "{}",
        out.stdout
    );
    // The help twice (unknown answer, `?`), the first question three times.
    assert_eq!(
        out.stdout.matches("? - print help").count(),
        2,
        "{}",
        out.stdout
    );
    assert_eq!(out.stdout.matches(QUESTION).count(), 5, "{}", out.stdout);
    let id = only_id(&repo);
    assert_eq!(
        staged(&repo, &id, "a.js").as_deref(),
        Some("bar(1);\nfoo(2);\nfoo(3);\n")
    );
}

#[test]
fn nothing_accepted_stages_nothing() {
    let repo = two_files();
    let before = repo.snapshot();
    let out = edit_i(&repo, "d\nn\nn\n", &[]);
    out.assert_code(1);
    assert!(
        out.stderr
            .contains("No change accepted (5 offered); nothing staged."),
        "{}",
        out.stderr
    );
    assert!(repo.astedit_refs().is_empty());
    assert_eq!(repo.snapshot(), before);
    // `log` has no staged event either.
    let log = repo.run(&["--json", "log"]);
    assert!(!log.stdout.contains("\"staged\""), "{}", log.stdout);
}

#[test]
fn nested_matches_are_asked_inner_first_and_staged_as_decided() {
    let repo = TestRepo::new();
    repo.write("n.js", "foo(foo(x));\n");
    repo.commit_all("init");
    // Inner declined, outer accepted: the outer rewrite keeps the inner text.
    let out = edit_i(&repo, "n\ny\n", &[]);
    out.assert_code(0);
    assert!(
        out.stdout.contains("-foo(foo(x));\n+foo(bar(x));\n"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("-foo(foo(x));\n+bar(foo(x));\n"),
        "{}",
        out.stdout
    );
    let id = only_id(&repo);
    assert_eq!(
        staged(&repo, &id, "n.js").as_deref(),
        Some("bar(foo(x));\n")
    );
}

#[test]
fn with_apply_the_accepted_changes_are_written() {
    let repo = two_files();
    let out = edit_i(&repo, "n\ny\nd\n", &["--apply"]);
    out.assert_code(0);
    assert!(out.stdout.contains("Staged and applied"), "{}", out.stdout);
    assert_eq!(repo.read_string("a.js"), "foo(1);\nbar(2);\nfoo(3);\n");
    assert_eq!(repo.read_string("b.js"), "foo(4);\nother();\nfoo(5);\n");
    assert!(repo.astedit_refs().is_empty());
    // And undone like any apply.
    repo.run(&["undo"]).assert_code(0);
    assert_eq!(repo.read_string("a.js"), "foo(1);\nfoo(2);\nfoo(3);\n");
}

#[test]
fn interactive_is_refused_with_json() {
    let repo = two_files();
    let out = edit_i(&repo, "y\n", &["--json"]);
    out.assert_code(2);
    assert_eq!(out.json()["error"]["code"], "usage", "{}", out.stdout);
    assert!(repo.astedit_refs().is_empty());

    repo.write("astedit.toml", RULES);
    for args in [
        &["scan", "-i", "--json"][..],
        &["scan", "--interactive", "--format", "sarif"],
        &["scan", "-i", "--check"],
        &["scan", "-i", "--config", "-"],
    ] {
        let out = repo.run_with(".", args, &[], Some(b"y\n"));
        out.assert_code(2);
        let said = format!("{}{}", out.stdout, out.stderr);
        assert!(
            said.contains("-i/--interactive cannot be combined with")
                || said.contains("'--interactive' cannot be used with '--check'"),
            "{args:?}: {said}"
        );
    }
    assert!(repo.astedit_refs().is_empty());
}

const RULES: &str = r#"
[[rules]]
id = "strict-equality"
language = "javascript"
severity = "error"
message = "use === ($A)"
rule.pattern = "$A == $B"
fix = "$A === $B"
"#;

fn scan_repo() -> TestRepo {
    let repo = TestRepo::new();
    repo.write("astedit.toml", RULES);
    repo.write("a.js", "if (a == 1) f(b == 2);\nc == 3;\n");
    repo.write("b.js", "d == 4;\n");
    repo.commit_all("init");
    repo
}

#[test]
fn scan_i_stages_the_accepted_fixes() {
    let repo = scan_repo();
    let before = repo.snapshot();
    let out = repo.run_with(".", &["scan", "-i"], &[], Some(b"n\ny\ny\nn\n"));
    out.assert_code(0);
    assert_eq!(out.stdout.matches(QUESTION).count(), 4, "{}", out.stdout);
    assert!(
        out.stdout
            .contains("@@ -1,2 +1,2 @@ a.js:1:5 rule strict-equality\n"),
        "{}",
        out.stdout
    );
    // The second change of a line is shown with the first one's decision made.
    assert!(
        out.stdout
            .contains("-if (a == 1) f(b == 2);\n+if (a == 1) f(b === 2);\n"),
        "{}",
        out.stdout
    );
    let id = only_id(&repo);
    assert_eq!(
        staged(&repo, &id, "a.js").as_deref(),
        Some("if (a == 1) f(b === 2);\nc === 3;\n")
    );
    assert_eq!(staged(&repo, &id, "b.js"), None);
    assert_eq!(repo.snapshot(), before);
    // The declined fixes are findings left for a person.
    assert!(
        out.stdout.contains("a.js:1:5: error[strict-equality]"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("b.js:1:1: error[strict-equality]"),
        "{}",
        out.stdout
    );
    assert!(
        out.stderr.contains("2 fixes in 1 file: staged preview"),
        "{}",
        out.stderr
    );
    let meta = repo.git(&["log", "-1", "--format=%B", &format!("refs/astedit/{id}")]);
    assert!(meta.contains("2 fixes in 1 file"), "{meta}");
}

#[test]
fn scan_i_with_apply_writes_the_accepted_fixes_and_nothing_accepted_stages_nothing() {
    let repo = scan_repo();
    let out = repo.run_with(".", &["scan", "-i", "--apply"], &[], Some(b"a\nn\n"));
    // As `scan --apply`: exit 1 when files were changed (or errors remain).
    out.assert_code(1);
    assert_eq!(
        repo.read_string("a.js"),
        "if (a === 1) f(b === 2);\nc === 3;\n"
    );
    assert_eq!(repo.read_string("b.js"), "d == 4;\n");

    let out = repo.run_with(".", &["scan", "-i"], &[], Some(b"n\n"));
    out.assert_code(1);
    assert!(
        out.stderr
            .contains("No change accepted (1 offered); nothing staged."),
        "{}",
        out.stderr
    );
    assert!(repo.astedit_refs().is_empty());
}

#[test]
fn answers_typed_on_a_terminal_work_too() {
    // util-linux `script` runs the command on a pseudo-terminal fed from our stdin.
    let has_script = std::process::Command::new("script")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !has_script {
        eprintln!("skipped: no util-linux `script` to make a pseudo-terminal");
        return;
    }
    let repo = two_files();
    let prepared = repo.command(".", &[]);
    let mut cmd = std::process::Command::new("timeout");
    cmd.env_clear();
    for (k, v) in prepared.get_envs() {
        if let Some(v) = v {
            cmd.env(k, v);
        }
    }
    let command = format!(
        "'{}' edit -i -p 'foo($A)' -r 'bar($A)'",
        crate::util::bin().display()
    );
    cmd.current_dir(repo.path())
        .args(["120", "script", "-qec", &command, "/dev/null"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped());
    let mut child = cmd.spawn().expect("spawn script");
    {
        use std::io::Write;
        let mut stdin = child.stdin.take().expect("stdin");
        stdin.write_all(b"n\ny\nn\nd\n").expect("answers");
    }
    let out = child.wait_with_output().expect("script runs");
    let shown = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{shown}");
    assert!(
        shown.contains("Apply this change [y,n,a,d,q,e,?]? "),
        "{shown}"
    );
    let id = only_id(&repo);
    assert_eq!(
        staged(&repo, &id, "a.js").as_deref(),
        Some("foo(1);\nbar(2);\nfoo(3);\n")
    );
    assert_eq!(staged(&repo, &id, "b.js"), None);
}

/// A scripted editor: `printf`s `text` over the file it is given (with `-` as the text,
/// leaves it alone), and notes each file it was given in `log`.
fn scripted_editor(repo: &TestRepo, name: &str, body: &str) -> String {
    let path = repo.path().join(format!(".git/{name}"));
    std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).expect("write editor");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    }
    path.display().to_string()
}

#[test]
fn e_stages_what_the_editor_saved_as_that_sites_replacement() {
    let repo = two_files();
    // The editor sees the proposed replacement, in a file named like the source file.
    let editor = scripted_editor(
        &repo,
        "ed.sh",
        "case \"$1\" in *a.js) ;; *) exit 3;; esac\n\
         [ \"$(cat \"$1\")\" = 'bar(1)' ] || exit 4\n\
         printf 'baz(1, \"edited\")\\n' > \"$1\"",
    );
    let out = repo.run_with(
        ".",
        &["edit", "-i", "-p", "foo($A)", "-r", "bar($A)"],
        &[("GIT_EDITOR", editor.as_str())],
        Some(b"e\nn\ny\nd\n"),
    );
    out.assert_code(0);
    assert!(
        out.stdout.contains("e - edit") || out.stdout.contains(QUESTION),
        "{}",
        out.stdout
    );
    let id = only_id(&repo);
    // The newline the editor added is not part of the replacement.
    assert_eq!(
        staged(&repo, &id, "a.js").as_deref(),
        Some("baz(1, \"edited\");\nfoo(2);\nbar(3);\n")
    );
    assert_eq!(staged(&repo, &id, "b.js"), None);
    repo.run(&["apply", &id]).assert_code(0);
    assert_eq!(
        repo.read_string("a.js"),
        "baz(1, \"edited\");\nfoo(2);\nbar(3);\n"
    );
}

#[test]
fn e_saved_unchanged_is_yes_saved_empty_is_no_and_a_failing_editor_asks_again() {
    let repo = two_files();
    let keep = scripted_editor(&repo, "keep.sh", "exit 0");
    let empty = scripted_editor(&repo, "empty.sh", ": > \"$1\"");
    let fail = scripted_editor(&repo, "fail.sh", "exit 1");
    // Unchanged: the proposed replacement, as `y`.
    let out = repo.run_with(
        ".",
        &["edit", "-i", "-p", "foo($A)", "-r", "bar($A)", "a.js"],
        &[("GIT_EDITOR", keep.as_str())],
        Some(b"e\nd\n"),
    );
    out.assert_code(0);
    let id = only_id(&repo);
    assert_eq!(
        staged(&repo, &id, "a.js").as_deref(),
        Some("bar(1);\nfoo(2);\nfoo(3);\n")
    );
    repo.run(&["discard", &id]).assert_code(0);
    // Empty: not made, as `n`, and said so.
    let out = repo.run_with(
        ".",
        &["edit", "-i", "-p", "foo($A)", "-r", "bar($A)", "a.js"],
        &[("GIT_EDITOR", empty.as_str())],
        Some(b"e\ny\nd\n"),
    );
    out.assert_code(0);
    assert!(
        out.stdout.contains("Saved empty: this change is not made."),
        "{}",
        out.stdout
    );
    let id = only_id(&repo);
    assert_eq!(
        staged(&repo, &id, "a.js").as_deref(),
        Some("foo(1);\nbar(2);\nfoo(3);\n")
    );
    repo.run(&["discard", &id]).assert_code(0);
    // A failing editor: said so, and the same change is asked about again. core.editor
    // is read when GIT_EDITOR is unset.
    repo.git(&["config", "core.editor", &fail]);
    let out = repo.run_with(
        ".",
        &["edit", "-i", "-p", "foo($A)", "-r", "bar($A)", "a.js"],
        &[],
        Some(b"e\ny\nd\n"),
    );
    out.assert_code(0);
    assert!(out.stdout.contains("error: the editor"), "{}", out.stdout);
    let id = only_id(&repo);
    assert_eq!(
        staged(&repo, &id, "a.js").as_deref(),
        Some("bar(1);\nfoo(2);\nfoo(3);\n")
    );
}

#[test]
fn scan_i_shows_a_change_in_an_embedded_block_at_its_lines_in_the_file() {
    let repo = TestRepo::new();
    repo.write("sgconfig.yml", "ruleDirs: [rules]\n");
    repo.write(
        "rules/no-var.yml",
        "id: no-var\nlanguage: JavaScript\nseverity: error\nmessage: use let\n\
         rule: {pattern: 'var $A = $B'}\nfix: 'let $A = $B'\n",
    );
    repo.write(
        "a.html",
        "<html>\n<head>\n</head>\n<body>\n  <script>var a = 1;\n    var b = 2;\n  \
         </script>\n</body>\n</html>\n",
    );
    repo.commit_all("page");
    let editor = scripted_editor(&repo, "ed.sh", "printf 'const b = 20' > \"$1\"");
    let out = repo.run_with(
        ".",
        &["scan", "-i"],
        &[("GIT_EDITOR", editor.as_str())],
        Some(b"y\ne\n"),
    );
    out.assert_code(0);
    // Host lines and context, not the block's own.
    assert!(
        out.stdout.contains(
            "@@ -2,7 +2,7 @@ a.html:5:11 rule no-var\n <head>\n </head>\n <body>\n\
             -  <script>var a = 1;\n+  <script>let a = 1\n     var b = 2;\n   </script>\n \
             </body>\n"
        ),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout
            .contains("@@ -3,7 +3,7 @@ a.html:6:5 rule no-var\n"),
        "{}",
        out.stdout
    );
    let id = only_id(&repo);
    assert_eq!(
        staged(&repo, &id, "a.html").as_deref(),
        Some(
            "<html>\n<head>\n</head>\n<body>\n  <script>let a = 1\n    const b = 20\n  \
             </script>\n</body>\n</html>\n"
        )
    );
}

/// `edit -i --changed-lines` asks only about the changes on changed lines.
#[test]
fn changed_lines_offers_only_changes_on_changed_lines() {
    let repo = two_files();
    repo.write("a.js", "foo(1);\nfoo(22);\nfoo(3);\nfoo(6);\n");
    let out = edit_i(&repo, "y\nn\n", &["--changed-lines"]);
    out.assert_code(0);
    assert_eq!(out.stdout.matches(QUESTION).count(), 2, "{}", out.stdout);
    let id = only_id(&repo);
    assert_eq!(
        staged(&repo, &id, "a.js").as_deref(),
        Some("foo(1);\nbar(22);\nfoo(3);\nfoo(6);\n")
    );
    assert_eq!(staged(&repo, &id, "b.js"), None);
}
