//! Integration tests: finding the repository, paths relative to the current folder.

use crate::util::TestRepo;

#[test]
fn runs_from_a_subfolder_with_relative_pathspecs_and_paths() {
    let repo = TestRepo::new();
    repo.write("src/a/x.js", "f(1);\n");
    repo.write("src/b/y.js", "f(2);\n");
    repo.write("top.js", "f(3);\n");
    repo.commit_all("init");
    // No pathspec: the current folder and below, like `git grep`.
    let out = repo.run_in("src", &["grep", "-p", "f($A)"]);
    out.assert_code(0);
    assert_eq!(out.stdout, "a/x.js:1:1: f(1)\nb/y.js:1:1: f(2)\n");
    // Relative pathspecs, output relative to the current folder.
    let out = repo.run_in("src/a", &["grep", "-p", "f($A)", "../b", "../../top.js"]);
    out.assert_code(0);
    // Sorted by repository path (src/b/y.js before top.js), like `git grep`.
    assert_eq!(out.stdout, "../b/y.js:1:1: f(2)\n../../top.js:1:1: f(3)\n");
}

#[test]
fn dash_c_and_git_dir_work_tree() {
    let repo = TestRepo::new();
    repo.write("a.js", "f(1);\n");
    let outside = tempfile::tempdir().expect("tempdir");
    let dir = repo.path().to_string_lossy().into_owned();
    let mut cmd = repo.command(".", &["-C", &dir, "grep", "-p", "f($A)"]);
    cmd.current_dir(outside.path());
    let out = cmd.output().expect("run");
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "a.js:1:1: f(1)\n");

    let git_dir = repo.path().join(".git");
    let mut cmd = repo.command(".", &["grep", "-p", "f($A)"]);
    cmd.current_dir(outside.path())
        .env("GIT_DIR", &git_dir)
        .env("GIT_WORK_TREE", repo.path());
    let out = cmd.output().expect("run");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("a.js:1:1: f(1)"));
}

#[test]
fn not_a_repository_bare_and_reftable_are_clear_errors() {
    let plain = tempfile::tempdir().expect("tempdir");
    let repo = TestRepo::new();
    let mut cmd = repo.command(".", &["grep", "-p", "f($A)"]);
    cmd.current_dir(plain.path()).env(
        "GIT_CEILING_DIRECTORIES",
        plain.path().parent().expect("parent"),
    );
    let out = cmd.output().expect("run");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not a git repository"));

    let bare = TestRepo::with_init_args(&["--bare"]);
    let out = bare.run(&["grep", "-p", "f($A)"]);
    out.assert_code(2);
    assert!(out.stderr.contains("bare repository"), "{}", out.stderr);

    let reftable = TestRepo::with_init_args(&["--ref-format=reftable"]);
    let out = reftable.run(&["grep", "-p", "f($A)", "--json"]);
    out.assert_code(2);
    assert_eq!(out.json()["error"]["code"], "reftable-repository");
}

#[test]
fn help_works_outside_a_repository() {
    let plain = tempfile::tempdir().expect("tempdir");
    let repo = TestRepo::new();
    let mut cmd = repo.command(".", &["--help"]);
    cmd.current_dir(plain.path());
    let out = cmd.output().expect("run");
    assert_eq!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stdout).contains("grep"));
}
