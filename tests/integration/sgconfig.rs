//! An ast-grep project's `sgconfig.yml` beyond its rules: `languageGlobs`. The
//! expected findings are what ast-grep 0.51.1 reports on the same files. And project
//! files from an untrusted clone (issue 35 item 3): CI running a pull request's
//! `sgconfig.yml` reads and writes nothing outside the repository, quotes no file
//! that is not a rule, and does not loop on symbolic links.

use crate::suppress::findings;
use crate::util::TestRepo;

fn project() -> TestRepo {
    let repo = TestRepo::new();
    repo.write(
        "sgconfig.yml",
        "ruleDirs: [rules]\nlanguageGlobs:\n  c: [\"*.blk\"]\n  typescript: [\"*.js\"]\n",
    );
    repo.write(
        "rules/c.yml",
        "id: no-goto\nlanguage: C\nseverity: error\nmessage: no goto\nrule: {kind: goto_statement}\n",
    );
    repo.write(
        "rules/ts.yml",
        "id: no-any\nlanguage: TypeScript\nseverity: warning\nmessage: no any\n\
         rule: {pattern: 'let $A: any = $B'}\nfix: 'let $A: unknown = $B'\n",
    );
    repo.write("src/a.blk", "int f() { goto out; out: return 0; }\n");
    repo.write("b.c", "int g() { goto x; x: return 1; }\n");
    // `let a: any` is not JavaScript: only as TypeScript does the rule find it.
    repo.write("src/x.js", "let a: any = 1;\n");
    repo.write("y.ts", "let b: any = 2;\n");
    repo.commit_all("project");
    repo
}

#[test]
fn language_globs_give_files_their_language() {
    let repo = project();
    let expected = [
        "b.c no-goto 1:11 error",
        "src/a.blk no-goto 1:11 error",
        "src/x.js no-any 1:1 warning",
        "y.ts no-any 1:1 warning",
    ];
    let out = repo.run(&["--json", "scan"]);
    out.assert_code(1);
    assert_eq!(findings(&out.json()), expected);
    assert!(!out.stderr.contains("not supported"), "{}", out.stderr);
    // The staged blobs are read by the same globs.
    assert_eq!(
        findings(&repo.run(&["--json", "scan", "--cached"]).json()),
        expected
    );
    // Fixes reach the glob-mapped file too.
    repo.run(&["scan", "--apply"]).assert_code(1);
    // (The match is the whole declaration, `;` included, as in ast-grep.)
    assert_eq!(repo.read_string("src/x.js"), "let a: unknown = 1\n");
}

#[test]
fn bad_language_globs_are_refused_with_the_key() {
    let repo = project();
    repo.write(
        "sgconfig.yml",
        "ruleDirs: [rules]\nlanguageGlobs:\n  klingon: [\"*.kl\"]\n",
    );
    let out = repo.run(&["--json", "scan"]);
    out.assert_code(2);
    let message = out.json()["error"]["message"]
        .as_str()
        .unwrap_or("")
        .to_string();
    assert!(message.contains("languageGlobs"), "{message}");
    repo.write(
        "sgconfig.yml",
        "ruleDirs: [rules]\nlanguageGlobs:\n  c: [\"[\"]\n",
    );
    repo.run(&["scan"]).assert_code(2);
}

const RULE: &str = "id: no-print\nlanguage: python\nseverity: error\nmessage: no print\n\
                    rule: {pattern: print($A)}\n";
const SECRET: &str = "ghp_S3CRET";

/// A project with one rule, one test and a Python file, committed.
fn guarded() -> TestRepo {
    let repo = TestRepo::new();
    repo.write(
        "sgconfig.yml",
        "ruleDirs: [rules]\ntestConfigs: [{testDir: tests}]\n",
    );
    repo.write("rules/no-print.yml", RULE);
    repo.write(
        "tests/no-print.yml",
        "id: no-print\nvalid: ['x = 1']\ninvalid: ['print(1)']\n",
    );
    repo.write("a.py", "print(1)\n");
    repo.commit_all("project");
    repo
}

/// The error's message and code of a refused `--json` run (exit 2).
fn refusal(repo: &TestRepo, args: &[&str]) -> (String, String) {
    let mut all = vec!["--json"];
    all.extend_from_slice(args);
    let out = repo.run(&all);
    out.assert_code(2);
    let v = out.json();
    (
        v["error"]["message"].as_str().unwrap_or("").to_string(),
        v["error"]["code"].as_str().unwrap_or("").to_string(),
    )
}

#[test]
fn folders_a_project_file_names_outside_the_repository_are_refused_naming_the_key() {
    let repo = guarded();
    let outside = tempfile::tempdir().expect("tempdir");
    std::fs::write(
        outside.path().join("r.yml"),
        RULE.replace("no-print", "far"),
    )
    .expect("write");
    let abs = outside.path().display().to_string();
    // Relative with `..`, absolute, and a committed symbolic link.
    let rel = format!(
        "../{}",
        outside.path().file_name().unwrap().to_string_lossy()
    );
    let link = repo.path().join("linked");
    std::os::unix::fs::symlink(outside.path(), &link).expect("symlink");
    for key in ["ruleDirs", "utilDirs"] {
        for entry in [abs.as_str(), rel.as_str(), "linked"] {
            let config = if key == "ruleDirs" {
                format!("ruleDirs: ['{entry}']\n")
            } else {
                format!("ruleDirs: [rules]\nutilDirs: ['{entry}']\n")
            };
            repo.write("sgconfig.yml", &config);
            for args in [&["scan"][..], &["test"][..]] {
                let (message, _) = refusal(&repo, args);
                assert!(
                    message.contains(&format!("{key}: '{entry}' is outside the repository")),
                    "{config} {args:?}: {message}"
                );
            }
        }
    }
    // astedit.toml's keys too.
    repo.write("sgconfig.yml", "ruleDirs: [rules]\n");
    repo.write("astedit.toml", format!("rule-files = ['{abs}']\n"));
    let (message, _) = refusal(&repo, &["scan"]);
    assert!(message.contains("rule-files: '"), "{message}");
    std::fs::remove_file(repo.path().join("astedit.toml")).expect("rm");
    // A test folder outside.
    for entry in [abs.as_str(), "linked"] {
        repo.write(
            "sgconfig.yml",
            format!("ruleDirs: [rules]\ntestConfigs: [{{testDir: '{entry}'}}]\n"),
        );
        let (message, _) = refusal(&repo, &["test"]);
        assert!(
            message.contains(&format!("testDir: '{entry}' is outside the repository")),
            "{message}"
        );
    }
    // Inside the repository, through a link or `..` that stays in: read as before.
    std::fs::remove_file(&link).expect("rm");
    std::os::unix::fs::symlink(repo.path().join("rules"), &link).expect("symlink");
    repo.write("sgconfig.yml", "ruleDirs: [linked, 'rules/../rules2']\n");
    repo.write("rules2/x.yml", RULE.replace("no-print", "again"));
    repo.run(&["scan"]).assert_code(1);
}

#[test]
fn a_file_that_is_not_a_rule_is_never_quoted_in_an_error() {
    let repo = guarded();
    // Not YAML (a key file), a scalar, a `.env`: in the rule, utility and test folders.
    let files = [
        format!("-----BEGIN KEY-----\n{SECRET}: [\n"),
        format!("TOKEN={SECRET}\nfoo: bar\n"),
        format!("{SECRET}\n"),
        format!("[{SECRET}]\n"),
    ];
    for text in &files {
        for (config, path, args) in [
            ("ruleDirs: [rules]\n", "rules/zz.yml", &["scan"][..]),
            (
                "ruleDirs: [rules]\nutilDirs: [utils]\n",
                "utils/zz.yml",
                &["scan"][..],
            ),
            (
                "ruleDirs: [rules]\ntestConfigs: [{testDir: tests}]\n",
                "tests/zz.yml",
                &["test"][..],
            ),
            (
                "ruleDirs: [rules]\ntestConfigs: [{testDir: tests}]\n",
                "tests/__snapshots__/zz.yml",
                &["test"][..],
            ),
        ] {
            repo.write("sgconfig.yml", config);
            repo.write(path, text);
            for json in [true, false] {
                let mut all = if json { vec!["--json"] } else { vec![] };
                all.extend_from_slice(args);
                let out = repo.run(&all);
                out.assert_code(2);
                let shown = format!("{}{}", out.stdout, out.stderr);
                assert!(shown.contains("zz.yml"), "{path}: {shown}");
                assert!(
                    !shown.contains(SECRET) && !shown.contains("BEGIN") && !shown.contains("TOKEN"),
                    "{path} {text:?}: {shown}"
                );
            }
            std::fs::remove_file(repo.path().join(path)).expect("rm");
        }
    }
}

#[test]
fn test_update_writes_no_snapshot_outside_the_repository() {
    let repo = guarded();
    let outside = tempfile::tempdir().expect("tempdir");
    let written = || {
        std::fs::read_dir(outside.path())
            .expect("read")
            .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
            .collect::<Vec<_>>()
    };
    // An absolute snapshotDir, and one that climbs out.
    for dir in [outside.path().display().to_string(), "../..".to_string()] {
        repo.write(
            "sgconfig.yml",
            format!("ruleDirs: [rules]\ntestConfigs: [{{testDir: tests, snapshotDir: '{dir}'}}]\n"),
        );
        let (message, _) = refusal(&repo, &["test", "-U"]);
        assert!(message.contains("snapshotDir: '"), "{message}");
    }
    assert_eq!(written(), Vec::<String>::new());
    // A rule id that names another folder.
    repo.write(
        "sgconfig.yml",
        "ruleDirs: [rules]\ntestConfigs: [{testDir: tests}]\n",
    );
    let escape = format!("../../../../../../../../..{}/x", outside.path().display());
    repo.write(
        "rules/no-print.yml",
        RULE.replace("id: no-print", &format!("id: '{escape}'")),
    );
    repo.write(
        "tests/no-print.yml",
        format!("id: '{escape}'\ninvalid: ['print(1)']\n"),
    );
    let (message, code) = refusal(&repo, &["test", "-U"]);
    assert_eq!(code, "unsafe-snapshot", "{message}");
    assert!(!repo.path().join("tests/__snapshots__").exists());
    assert_eq!(written(), Vec::<String>::new());
    // A committed symbolic link for the snapshot folder.
    repo.write("rules/no-print.yml", RULE);
    repo.write(
        "tests/no-print.yml",
        "id: no-print\ninvalid: ['print(1)']\n",
    );
    std::os::unix::fs::symlink(outside.path(), repo.path().join("tests/__snapshots__"))
        .expect("symlink");
    repo.commit_all("link");
    let (message, code) = refusal(&repo, &["test", "-U"]);
    assert_eq!(code, "unsafe-snapshot", "{message}");
    assert!(message.contains("symbolic link"), "{message}");
    assert_eq!(written(), Vec::<String>::new());
    // With a real folder, the snapshot is written there.
    std::fs::remove_file(repo.path().join("tests/__snapshots__")).expect("rm");
    repo.run(&["test", "-U"]).assert_code(0);
    assert!(repo.exists("tests/__snapshots__/no-print-snapshot.yml"));
}

#[test]
fn symbolic_links_in_rule_and_test_folders_are_not_followed() {
    let repo = guarded();
    // Two links to the folder itself: a walk that followed them would never end.
    for dir in ["rules", "tests"] {
        for name in ["a", "b"] {
            std::os::unix::fs::symlink(".", repo.path().join(dir).join(name)).expect("symlink");
        }
    }
    // A linked rule file is not read either (as ast-grep's walk).
    std::os::unix::fs::symlink(
        repo.path().join("rules/no-print.yml"),
        repo.path().join("rules/copy.yml"),
    )
    .expect("symlink");
    let timed = |args: &[&str]| {
        let mut cmd = std::process::Command::new("timeout");
        repo.env(&mut cmd);
        cmd.current_dir(repo.path())
            .arg("120")
            .arg(crate::util::bin())
            .args(args);
        crate::util::run_command(cmd)
    };
    let out = timed(&["--json", "scan"]);
    out.assert_code(1);
    assert_eq!(findings(&out.json()), ["a.py no-print 1:1 error"]);
    let out = timed(&["test", "-U"]);
    out.assert_code(0);
}
