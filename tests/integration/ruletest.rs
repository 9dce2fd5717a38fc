//! `git astedit test`: ast-grep rule tests, on the public ast-grep projects under
//! `../shared/acceptance/ast-grep-projects` (by path, copied into a temporary
//! repository) and on small projects built here for each verdict.

use std::path::Path;
use std::path::PathBuf;

use crate::util::TestRepo;

fn projects_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/acceptance/ast-grep-projects")
}

/// Copies the files of `src` into `repo` (the project under test) and commits them.
fn copy_project(src: &Path, repo: &TestRepo) {
    fn walk(root: &Path, dir: &Path, repo: &TestRepo) {
        let mut entries: Vec<_> = std::fs::read_dir(dir)
            .expect("read project")
            .filter_map(Result::ok)
            .map(|e| e.path())
            .collect();
        entries.sort();
        for path in entries {
            if path.is_dir() {
                walk(root, &path, repo);
            } else {
                let rel = path.strip_prefix(root).expect("inside");
                repo.write(
                    &rel.to_string_lossy(),
                    std::fs::read(&path).expect("read file"),
                );
            }
        }
    }
    walk(src, src, repo);
    repo.commit_all("project");
}

/// The public projects pass as ast-grep 0.51.1 says they do: 76/76 and 2/2.
#[test]
fn public_projects_pass_as_in_ast_grep() {
    let root = projects_dir();
    if !root.is_dir() {
        eprintln!("SKIPPED: {} not found", root.display());
        return;
    }
    for (name, rules) in [("codemods", 76), ("lading", 2)] {
        let repo = TestRepo::new();
        copy_project(&root.join(name), &repo);
        let out = repo.run(&["test"]);
        out.assert_code(0);
        assert!(
            out.stdout.starts_with(&format!("Running {rules} tests\n")),
            "{name}: {}",
            out.stdout
        );
        assert!(
            out.stdout
                .ends_with(&format!("\ntest result: ok. {rules} passed; 0 failed;\n")),
            "{name}: {}",
            out.stdout
        );
        let json = repo.run(&["--json", "test"]);
        json.assert_code(0);
        let v = json.json();
        assert_eq!(v["passed"], rules, "{name}");
        assert_eq!(v["failed"], 0, "{name}");
        assert_eq!(v["not_found"].as_array().map(Vec::len), Some(0), "{name}");
        // `scan` finds what ast-grep 0.51.1's `scan` finds there: nothing (measured
        // with `ast-grep scan --json=stream` on both copies).
        let scan = repo.run(&["--json", "scan"]);
        scan.assert_code(0);
        let v = scan.json();
        assert_eq!(
            v["findings"].as_array().map(Vec::len),
            Some(0),
            "{name}: {v}"
        );
        assert_eq!(v["error_count"], 0, "{name}");
        assert!(
            v["rules"].as_array().is_some_and(|r| r.len() >= rules),
            "{name}: {}",
            v["rules"]
        );
        // Nothing written, nothing changed.
        assert_eq!(repo.git(&["status", "--porcelain"]), "", "{name}");
    }
}

/// A project whose snapshots are removed fails on snapshots only; `-U` writes them
/// back, in a form that reads back to the same verdicts.
#[test]
fn update_all_rewrites_removed_snapshots() {
    let root = projects_dir().join("lading");
    if !root.is_dir() {
        eprintln!("SKIPPED: {} not found", root.display());
        return;
    }
    let repo = TestRepo::new();
    copy_project(&root, &repo);
    let snap = "lints/tests/__snapshots__/no-as-imports-snapshot.yml";
    std::fs::remove_file(repo.path().join(snap)).expect("remove snapshot");
    let out = repo.run(&["test"]);
    out.assert_code(1);
    assert!(out
        .stdout
        .contains("[Wrong] No no-as-imports baseline found."));
    assert!(out
        .stdout
        .contains("FAIL no-as-imports  ........WWWWWWWW\n"));
    assert!(out.stdout.ends_with("test failed. 1 passed; 1 failed;\n"));
    assert!(out.stderr.contains("hint: only snapshots differ"));
    let v = repo.run(&["--json", "test"]).json();
    assert_eq!(v["snapshots_only"], true);
    assert!(!repo.exists(snap));

    let out = repo.run(&["test", "-U"]);
    out.assert_code(0);
    assert!(out.stderr.contains(&format!("wrote {snap}")));
    assert!(repo.exists(snap));
    repo.run(&["test"]).assert_code(0);
    let v = repo.run(&["--json", "test", "--filter", "^no-as"]).json();
    assert_eq!(v["passed"], 1);
    assert_eq!(v["rules"][0]["cases"][8]["status"], "reported");
}

const SGCONFIG: &str = "ruleDirs: [rules]\ntestConfigs:\n  - testDir: tests\n";
const RULE: &str = "id: no-var\nlanguage: TypeScript\nseverity: error\nmessage: use let\n\
                    rule: {pattern: 'var $A = $B'}\nfix: 'let $A = $B'\n";

fn small_project(test: &str) -> TestRepo {
    let repo = TestRepo::new();
    repo.write("sgconfig.yml", SGCONFIG);
    repo.write("rules/no-var.yml", RULE);
    repo.write("tests/no-var-test.yml", test);
    repo.commit_all("project");
    repo
}

#[test]
fn each_verdict_and_its_letter() {
    // A valid case the rule reports (noisy), an invalid one it does not (missing), and
    // a reported one without a snapshot (wrong).
    let repo =
        small_project("id: no-var\nvalid: ['var a = 1']\ninvalid: ['let b = 2', 'var c = 3']\n");
    let out = repo.run(&["test"]);
    out.assert_code(1);
    assert!(out.stdout.contains(
        "[Noisy] Expect no-var to report no issue, but some issues found in:\n\n  var a = 1\n"
    ));
    assert!(out.stdout.contains(
        "[Missing] Expect rule no-var to report issues, but none found in:\n\n  let b = 2\n"
    ));
    assert!(out.stdout.contains("FAIL no-var  NMW\n"), "{}", out.stdout);
    assert!(out.stdout.ends_with("test failed. 0 passed; 1 failed;\n"));
    let v = repo.run(&["--json", "test"]).json();
    let statuses: Vec<&str> = v["rules"][0]["cases"]
        .as_array()
        .expect("cases")
        .iter()
        .map(|c| c["status"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(statuses, ["noisy", "missing", "wrong"]);
    crate::contract::validate(&repo, "test", &v);
    assert_eq!(v["snapshots_only"], false);
    // The generated snapshot carries the fix.
    assert_eq!(v["rules"][0]["cases"][2]["actual"]["fixed"], "let c = 3");
    assert_eq!(v["rules"][0]["cases"][2]["actual"]["labels"][0]["start"], 0);
    // Without snapshot tests an invalid case only has to be reported.
    let v = repo
        .run(&["--json", "test", "--skip-snapshot-tests"])
        .json();
    assert_eq!(v["rules"][0]["cases"][2]["status"], "reported");
}

#[test]
fn a_changed_snapshot_shows_a_diff_and_interactive_accepts_it() {
    let repo = small_project("id: no-var\nvalid: ['let a = 1']\ninvalid: ['var c = 3']\n");
    repo.run(&["test", "-U"]).assert_code(0);
    let snap = "tests/__snapshots__/no-var-snapshot.yml";
    let written = repo.read_string(snap);
    assert!(written.contains("fixed: let c = 3"), "{written}");
    // The rule's fix changes: the snapshot no longer matches.
    repo.write(
        "rules/no-var.yml",
        RULE.replace("fix: 'let $A = $B'", "fix: 'const $A = $B'"),
    );
    let out = repo.run(&["test"]);
    out.assert_code(1);
    assert!(out
        .stdout
        .contains("[Wrong] no-var snapshot is different from baseline.\nDiff:\n"));
    assert!(
        out.stdout
            .contains("-fixed: let c = 3\n+fixed: const c = 3\n"),
        "{}",
        out.stdout
    );
    let v = repo.run(&["--json", "test"]).json();
    assert_eq!(v["rules"][0]["cases"][1]["expected"]["fixed"], "let c = 3");
    assert_eq!(v["rules"][0]["cases"][1]["actual"]["fixed"], "const c = 3");
    crate::contract::validate(&repo, "test", &v);
    // `n` keeps the old snapshot; `y` takes the new one.
    repo.run_with("", &["test", "-i"], &[], Some(b"n\n"))
        .assert_code(1);
    assert_eq!(repo.read_string(snap), written);
    let out = repo.run_with("", &["test", "-i"], &[], Some(b"y\n"));
    out.assert_code(0);
    assert!(out.stderr.contains("Accept new snapshot?"));
    assert!(repo.read_string(snap).contains("fixed: const c = 3"));
    // -i and --json do not go together.
    repo.run(&["--json", "test", "-i"]).assert_code(2);
}

#[test]
fn off_rules_unknown_ids_filters_and_bad_input() {
    let repo = small_project(
        "id: no-var\nvalid: ['let a = 1']\ninvalid: ['var c = 3']\n---\nid: nope\nvalid: ['x']\n",
    );
    repo.write(
        "rules/off.yml",
        "id: off-rule\nlanguage: TypeScript\nseverity: off\nrule: {pattern: 'debugger'}\n",
    );
    repo.write(
        "tests/off-test.yml",
        "id: off-rule\nvalid: ['let a = 1']\ninvalid: ['debugger']\n",
    );
    repo.run(&["test", "-U"]).assert_code(0);
    let out = repo.run(&["test"]);
    out.assert_code(0);
    assert!(out.stdout.starts_with("Running 3 tests\n"));
    assert!(out.stdout.contains("Configuration not found! nope\n"));
    assert!(out.stdout.contains("Configuration not found! off-rule\n"));
    assert!(out
        .stdout
        .ends_with("test result: ok. 1 passed; 0 failed;\n"));
    // --include-off runs the disabled rule too (its snapshot is missing: -U writes it).
    let v = repo.run(&["--json", "test", "--include-off", "-U"]).json();
    assert_eq!(v["passed"], 2);
    assert_eq!(v["not_found"], serde_json::json!(["nope"]));
    crate::contract::validate(&repo, "test", &v);
    assert!(repo.exists("tests/__snapshots__/off-rule-snapshot.yml"));
    // --filter keeps the matching rules only.
    let v = repo.run(&["--json", "test", "--filter", "^no-"]).json();
    assert_eq!(v["tests"], 1);
    let bad = repo.run(&["--json", "test", "--filter", "("]);
    bad.assert_code(2);
    assert_eq!(bad.json()["error"]["code"], "usage");
    // A test file that is not a rule test: exit 2, named.
    repo.write("tests/broken.yml", "valid: [1, 2\n");
    let bad = repo.run(&["--json", "test"]);
    bad.assert_code(2);
    assert_eq!(bad.json()["error"]["code"], "bad-test");
    assert!(bad.json()["error"]["message"]
        .as_str()
        .unwrap_or("")
        .contains("tests/broken.yml"));
}

#[test]
fn test_dir_flag_and_missing_config() {
    let repo = TestRepo::new();
    repo.write("astedit.toml", "rule-files = [\"r.yml\"]\n");
    repo.write("r.yml", RULE);
    repo.write(
        "t/no-var.yml",
        "id: no-var\nvalid: ['let a = 1']\ninvalid: ['var c = 3']\n",
    );
    repo.commit_all("x");
    // No sgconfig.yml: say what to give.
    let out = repo.run(&["test"]);
    out.assert_code(2);
    assert!(out.stderr.contains("--test-dir"), "{}", out.stderr);
    let out = repo.run(&["test", "--test-dir", "t", "--skip-snapshot-tests"]);
    out.assert_code(0);
    assert!(out.stdout.contains("PASS no-var  ..\n"));
}

#[test]
fn snapshot_dir_names_the_snapshot_folder_and_update_all_writes_there() {
    let repo = small_project("id: no-var\nvalid: ['let a = 1']\ninvalid: ['var c = 3']\n");
    // No snapshot yet: --update-all (the long -U) writes it under --snapshot-dir.
    let out = repo.run(&["test", "--snapshot-dir", "snaps", "--update-all"]);
    out.assert_code(0);
    let written = repo.path().join("tests/snaps/no-var-snapshot.yml");
    assert!(written.is_file(), "{}", out.stdout);
    assert!(!repo.path().join("tests/__snapshots__").exists());
    // Read back from there: passes; from the default folder it is missing.
    let out = repo.run(&["test", "--snapshot-dir", "snaps"]);
    out.assert_code(0);
    assert!(out.stdout.contains("1 passed; 0 failed"), "{}", out.stdout);
    let out = repo.run(&["test"]);
    out.assert_code(1);
}
