//! The library's calls against real temporary git repositories: bytes on disk, refs and
//! the journal checked after each, as the CLI's integration tests check them.

use std::path::Path;

mod common;
use common::git;
use common::repo_with;

use astedit::Action;
use astedit::ApplyOptions;
use astedit::Edit;
use astedit::Identity;
use astedit::Options;
use astedit::Origin;
use astedit::Programs;
use astedit::Repository;

fn read(dir: &Path, path: &str) -> String {
    std::fs::read_to_string(dir.join(path)).unwrap()
}

fn open(dir: &Path) -> Repository {
    let options = Options::new().identity(Identity::session("test-harness", "s1"));
    Repository::open_with(dir, options).expect("open")
}

#[test]
fn replace_stages_applies_and_undoes_with_the_identity_journalled() {
    let dir = repo_with(&[("a.py", "x = 1\nprint(x)\n")]);
    let repo = open(dir.path());

    let staged = repo
        .stage(&Edit::replace("a.py", "x = 1", "x = 2").reason("bump"))
        .unwrap();
    let id = staged.id.clone().expect("staged");
    assert_eq!(staged.files, ["a.py"]);
    assert_eq!(staged.changes, 1);
    assert!(staged.diff.contains("-x = 1\n+x = 2\n"), "{}", staged.diff);
    assert!(
        staged.json.contains("\"schema_version\""),
        "{}",
        staged.json
    );
    // Staging touches no work-tree file; the preview is a ref.
    assert_eq!(read(dir.path(), "a.py"), "x = 1\nprint(x)\n");
    let refs = git(
        dir.path(),
        &["for-each-ref", "--format=%(refname)", "refs/astedit/"],
    );
    assert!(refs.contains(&id), "{refs}");

    let listed = repo.list().unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].id, id);
    assert_eq!(listed[0].origin, Origin::MadeHere);
    assert_eq!(listed[0].agent.as_deref(), Some("test-harness/session:s1"));
    assert_eq!(listed[0].reason.as_deref(), Some("bump"));
    assert_eq!(repo.diff(&id).unwrap(), staged.diff);

    let applied = repo.apply(&id, &ApplyOptions::default()).unwrap();
    assert_eq!(applied.action, Action::Applied);
    assert_eq!(applied.written, ["a.py"]);
    assert_eq!(read(dir.path(), "a.py"), "x = 2\nprint(x)\n");
    assert!(repo.list().unwrap().is_empty());

    let undone = repo.undo(&id, Some("no")).unwrap();
    assert_eq!(undone.action, Action::Undone);
    assert_eq!(read(dir.path(), "a.py"), "x = 1\nprint(x)\n");

    let journal = repo.journal(0).unwrap();
    let kinds: Vec<&str> = journal.iter().map(|e| e.event.as_str()).collect();
    assert_eq!(kinds, ["undone", "applied", "staged"]);
    for event in &journal {
        assert_eq!(event.id, id);
        assert_eq!(event.agent.as_deref(), Some("test-harness/session:s1"));
        assert_eq!(event.who, "Test <test@example.com>");
    }
    assert_eq!(journal[0].reason.as_deref(), Some("no"));
}

#[test]
fn a_file_changed_since_staging_makes_apply_stale_and_writes_nothing() {
    let dir = repo_with(&[("a.py", "x = 1\n")]);
    let repo = open(dir.path());
    let id = repo
        .stage(&Edit::replace("a.py", "x = 1", "x = 2"))
        .unwrap()
        .id
        .unwrap();
    std::fs::write(dir.path().join("a.py"), "x = 1  # mine\n").unwrap();
    let err = repo.apply(&id, &ApplyOptions::default()).unwrap_err();
    assert!(err.is_stale(), "{}: {err}", err.code());
    assert_eq!(err.exit_code(), 3);
    assert_eq!(read(dir.path(), "a.py"), "x = 1  # mine\n");
    // Still pending, to refresh or discard.
    assert_eq!(repo.list().unwrap()[0].id, id);
    let discarded = repo.discard(&id, Some("stale")).unwrap();
    assert_eq!(discarded.action, Action::Discarded);
    assert!(repo.list().unwrap().is_empty());
    assert_eq!(repo.journal(1).unwrap()[0].event, "discarded");
}

#[test]
fn every_kind_of_edit_stages_without_touching_the_work_tree() {
    let files = [
        ("src/a.py", "print(x)\nprint(y)\n"),
        ("src/b.py", "z = x\n"),
    ];
    let dir = repo_with(&files);
    let repo = open(dir.path());
    let check = |edit: Edit, paths: &[&str], changes: usize, diff: &str| {
        let staged = repo.stage(&edit).unwrap();
        assert!(staged.id.is_some(), "{edit:?}");
        assert_eq!(staged.files, paths, "{edit:?}");
        assert_eq!(staged.changes, changes, "{edit:?}");
        assert!(staged.diff.contains(diff), "{edit:?}: {}", staged.diff);
        for (path, text) in files {
            assert_eq!(read(dir.path(), path), text);
        }
    };
    check(
        Edit::rewrite("print($A)", "log($A)").lang("python"),
        &["src/a.py"],
        2,
        "+log(x)\n+log(y)\n",
    );
    check(
        Edit::rewrite("print($A)", "log($A)")
            .paths(["src/b.py"])
            .then_rewrite("x", "w"),
        &["src/b.py"],
        1,
        "+z = w\n",
    );
    let patch =
        "*** Begin Patch\n*** Update File: src/b.py\n@@\n-z = x\n+z = x + 1\n*** End Patch\n";
    check(Edit::patch(patch), &["src/b.py"], 1, "+z = x + 1\n");
    let rules = "id: x-to-v\nlanguage: python\nrule:\n  pattern: x\nfix: v\n";
    check(Edit::rules(rules), &["src/a.py", "src/b.py"], 2, "+z = v\n");
    check(
        Edit::write("src/new.py", "n = 1\n"),
        &["src/new.py"],
        1,
        "+n = 1\n",
    );
    assert_eq!(repo.list().unwrap().len(), 5);
    assert!(!dir.path().join("src/new.py").exists());
}

#[test]
fn nothing_to_change_stages_nothing() {
    let dir = repo_with(&[("a.py", "x = 1\n")]);
    let repo = open(dir.path());
    let staged = repo
        .stage(&Edit::rewrite("print($A)", "log($A)").lang("python"))
        .unwrap();
    assert_eq!(staged.id, None);
    assert!(repo.list().unwrap().is_empty());
}

#[test]
fn bad_input_gets_its_code_and_loses_nothing() {
    let dir = repo_with(&[("a.py", "x = 1\n")]);
    let repo = open(dir.path());
    let misuse = repo.stage(&Edit::patch("x").lang("python")).unwrap_err();
    assert_eq!(misuse.code(), "usage");
    assert!(misuse.message().contains("Edit::lang"), "{misuse}");
    let not_once = repo.stage(&Edit::replace("a.py", "nope", "y")).unwrap_err();
    assert_eq!(not_once.code(), "text-not-found", "{not_once}");
    assert_eq!(not_once.exit_code(), 5);
    assert!(not_once.hint().is_some());
    let outside = repo
        .stage(&Edit::write("../outside.py", "x\n"))
        .unwrap_err();
    assert_ne!(outside.exit_code(), 0);
    assert!(!dir.path().parent().unwrap().join("outside.py").exists());
    let unknown = repo
        .apply("ffffffff", &ApplyOptions::default())
        .unwrap_err();
    assert_eq!(unknown.code(), "unknown-id", "{unknown}");
    assert!(repo.list().unwrap().is_empty());
    assert_eq!(read(dir.path(), "a.py"), "x = 1\n");
    let err = Repository::open(dir.path().join("no/such/folder")).unwrap_err();
    assert_eq!(err.exit_code(), 2, "{}: {err}", err.code());
}

#[test]
fn programs_run_only_when_the_policy_allows() {
    let dir = repo_with(&[("a.py", "x = 1\n")]);
    let refusing = open(dir.path());
    let id = refusing
        .stage(&Edit::replace("a.py", "x = 1", "x = 2"))
        .unwrap()
        .id
        .unwrap();
    let marker = dir.path().join("ran");
    let verify = ApplyOptions {
        verify: Some(format!("touch '{}'", marker.display())),
        ..ApplyOptions::default()
    };
    let err = refusing.apply(&id, &verify).unwrap_err();
    assert_eq!(err.code(), "run-not-allowed", "{err}");
    assert!(!marker.exists(), "the command ran");
    assert_eq!(read(dir.path(), "a.py"), "x = 1\n");

    let allowing =
        Repository::open_with(dir.path(), Options::new().programs(Programs::Allow)).unwrap();
    let failing = ApplyOptions {
        verify: Some("exit 1".into()),
        ..ApplyOptions::default()
    };
    assert_ne!(allowing.apply(&id, &failing).unwrap_err().exit_code(), 0);
    assert_eq!(read(dir.path(), "a.py"), "x = 1\n");
    allowing.apply(&id, &verify).unwrap();
    assert!(marker.exists(), "the command did not run");
    assert_eq!(read(dir.path(), "a.py"), "x = 2\n");
}

#[test]
fn apply_with_a_commit_makes_one_commit_of_exactly_the_preview() {
    let dir = repo_with(&[("a.py", "x = 1\n"), ("b.py", "b = 1\n")]);
    let repo = open(dir.path());
    std::fs::write(dir.path().join("b.py"), "b = 2  # not mine to commit\n").unwrap();
    let id = repo
        .stage(&Edit::replace("a.py", "x = 1", "x = 2"))
        .unwrap()
        .id
        .unwrap();
    let options = ApplyOptions {
        commit: Some("bump x".into()),
        reason: Some("release".into()),
        ..ApplyOptions::default()
    };
    let applied = repo.apply(&id, &options).unwrap();
    let commit = applied.commit.expect("a commit");
    assert_eq!(git(dir.path(), &["rev-parse", "HEAD"]).trim(), commit);
    assert_eq!(
        git(dir.path(), &["show", "--format=", "--name-only", "HEAD"]),
        "a.py\n"
    );
    assert_eq!(git(dir.path(), &["log", "-1", "--format=%s"]), "bump x\n");
    assert_eq!(read(dir.path(), "b.py"), "b = 2  # not mine to commit\n");
}

#[test]
fn a_held_index_lock_refuses_an_apply_that_commits_and_writes_nothing() {
    let dir = repo_with(&[("a.py", "x = 1\n")]);
    let repo = open(dir.path());
    let id = repo
        .stage(&Edit::replace("a.py", "x = 1", "x = 2"))
        .unwrap()
        .id
        .unwrap();
    // Another git command is writing the index.
    std::fs::write(dir.path().join(".git/index.lock"), "").unwrap();
    let options = ApplyOptions {
        commit: Some(String::new()),
        ..ApplyOptions::default()
    };
    let err = repo.apply(&id, &options).unwrap_err();
    assert_eq!(err.code(), "locked", "{err}");
    assert_eq!(err.exit_code(), 6);
    assert_eq!(read(dir.path(), "a.py"), "x = 1\n");
    assert_eq!(git(dir.path(), &["rev-list", "--count", "HEAD"]), "1\n");
    // The lock is the other command's: left where it is, and the preview stays pending.
    assert!(dir.path().join(".git/index.lock").exists());
    assert_eq!(repo.list().unwrap()[0].id, id);
}

#[test]
fn malformed_patterns_patches_and_rules_are_refused_before_anything_is_staged() {
    let dir = repo_with(&[("a.py", "x = 1\n")]);
    let repo = open(dir.path());
    let bad = [
        Edit::rewrite("print(", "log($A)").lang("python"),
        Edit::patch("*** Begin Patch\n*** Frobnicate File: a.py\n*** End Patch\n"),
        Edit::rules("id: r\nlanguage: python\nrule: [not, a, rule\n"),
        Edit::rules("id: r\nlanguage: nosuchlanguage\nrule:\n  pattern: x\nfix: y\n"),
    ];
    for edit in bad {
        let err = repo.stage(&edit).unwrap_err();
        assert_eq!(err.exit_code(), 2, "{edit:?}: {}: {err}", err.code());
        assert!(!err.message().is_empty());
    }
    assert!(repo.list().unwrap().is_empty());
    let refs = git(dir.path(), &["for-each-ref", "refs/astedit/"]);
    assert_eq!(refs, "");
    assert_eq!(read(dir.path(), "a.py"), "x = 1\n");
}
