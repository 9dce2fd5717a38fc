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
