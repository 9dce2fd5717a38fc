//! Integration tests: `grep -A/-B/-C N` context lines (text and JSON), and `-C DIR`
//! only before the command, as in git.

use crate::contract::validate;
use crate::util::TestRepo;

/// `x.js` has calls on lines 3, 7 and 13-14 (one call over two lines); `y.js` one on
/// its first line.
fn setup() -> TestRepo {
    let repo = TestRepo::new();
    repo.write(
        "x.js",
        "a\nb\nf(1)\nc\nd\ne\nf(2)\ng\nh\ni\nj\nk\nf(3,\n  4)\nl\n",
    );
    repo.write("y.js", "f(9)\nz\n");
    repo.commit_all("init");
    repo
}

#[test]
fn dash_c_two_prints_two_lines_around_merges_groups_and_separates_them() {
    let repo = setup();
    let out = repo.run(&["grep", "-p", "f($$$A)", "-C", "2"]);
    out.assert_code(0);
    // 3 and 7: contexts 1-5 and 5-9 overlap, one group; 13-14 is a multi-line match
    // shown whole; `--` between groups, across files too.
    assert_eq!(
        out.stdout,
        "x.js-1-a\nx.js-2-b\nx.js:3:1: f(1)\nx.js-4-c\nx.js-5-d\nx.js-6-e\nx.js:7:1: f(2)\n\
         x.js-8-g\nx.js-9-h\n--\nx.js-11-j\nx.js-12-k\nx.js:13:1: f(3,\nx.js:14:   4)\n\
         x.js-15-l\n--\ny.js:1:1: f(9)\ny.js-2-z\n"
    );
    // The long spellings are the same flags.
    let long = repo.run(&["grep", "-p", "f($$$A)", "--context", "2"]);
    long.assert_code(0);
    assert_eq!(long.stdout, out.stdout);
}

#[test]
fn after_and_before_context_alone() {
    let repo = setup();
    let after = repo.run(&["grep", "-p", "f($A)", "-A", "1", "x.js"]);
    after.assert_code(0);
    assert_eq!(
        after.stdout,
        "x.js:3:1: f(1)\nx.js-4-c\n--\nx.js:7:1: f(2)\nx.js-8-g\n"
    );
    let before = repo.run(&["grep", "-p", "f($A)", "--before-context", "1", "x.js"]);
    before.assert_code(0);
    assert_eq!(
        before.stdout,
        "x.js-2-b\nx.js:3:1: f(1)\n--\nx.js-6-e\nx.js:7:1: f(2)\n"
    );
    // -A and -B win over -C on their side; touching groups (4 then 5) merge without `--`.
    let mixed = repo.run(&["grep", "-p", "f($A)", "-C", "3", "-A", "0", "x.js"]);
    mixed.assert_code(0);
    assert_eq!(
        mixed.stdout,
        "x.js-1-a\nx.js-2-b\nx.js:3:1: f(1)\nx.js-4-c\nx.js-5-d\nx.js-6-e\nx.js:7:1: f(2)\n"
    );
}

#[test]
fn without_context_nothing_changes() {
    let repo = setup();
    let out = repo.run(&["grep", "-p", "f($$$A)"]);
    out.assert_code(0);
    assert_eq!(
        out.stdout,
        "x.js:3:1: f(1)\nx.js:7:1: f(2)\nx.js:13:1: f(3,…\ny.js:1:1: f(9)\n"
    );
    let json = repo.run(&["--json", "grep", "-p", "f($$$A)"]);
    json.assert_code(0);
    let v = json.json();
    assert!(v["matches"][0].get("context_before").is_none(), "{v}");
    assert!(v["matches"][0].get("context_after").is_none(), "{v}");
}

#[test]
fn max_count_applies_to_matches_with_their_context() {
    let repo = setup();
    let out = repo.run(&["grep", "-p", "f($A)", "-C", "1", "--max-count", "1"]);
    out.assert_code(0);
    assert_eq!(
        out.stdout.lines().take(3).collect::<Vec<_>>(),
        ["x.js-2-b", "x.js:3:1: f(1)", "x.js-4-c"]
    );
    assert!(out.stderr.contains("stopped at 1 of"), "{}", out.stderr);
}

#[test]
fn json_matches_carry_context_lines_that_fit_the_schema() {
    let repo = setup();
    let out = repo.run(&["--json", "grep", "-p", "f($$$A)", "-C", "2"]);
    out.assert_code(0);
    let v = out.json();
    validate(&repo, "grep", &v);
    let lines = |m: &serde_json::Value, key: &str| -> Vec<(u64, String)> {
        m[key]
            .as_array()
            .unwrap_or_else(|| panic!("{key} missing: {m}"))
            .iter()
            .map(|l| {
                (
                    l["line"].as_u64().expect("line"),
                    l["text"].as_str().expect("text").to_string(),
                )
            })
            .collect()
    };
    let first = &v["matches"][0];
    assert_eq!(
        lines(first, "context_before"),
        [(1, "a".to_string()), (2, "b".to_string())]
    );
    assert_eq!(
        lines(first, "context_after"),
        [(4, "c".to_string()), (5, "d".to_string())]
    );
    // Each match has its own context in JSON (not merged), after its last line.
    let multi = &v["matches"][2];
    assert_eq!(multi["line"], 13);
    assert_eq!(multi["text"], "f(3,\n  4)");
    assert_eq!(lines(multi, "context_after"), [(15, "l".to_string())]);
    // At the top of a file there is nothing before.
    let top = &v["matches"][3];
    assert_eq!(top["path"], "y.js");
    assert_eq!(lines(top, "context_before"), []);
    assert_eq!(lines(top, "context_after"), [(2, "z".to_string())]);

    // -A alone: both lists present, the one not asked for empty.
    let after = repo.run(&["--json", "grep", "-p", "f($A)", "-A", "1", "y.js"]);
    after.assert_code(0);
    let v = after.json();
    validate(&repo, "grep", &v);
    assert_eq!(lines(&v["matches"][0], "context_before"), []);
    assert_eq!(
        lines(&v["matches"][0], "context_after"),
        [(2, "z".to_string())]
    );
}

#[test]
fn crlf_lines_are_shown_without_their_carriage_return() {
    let repo = TestRepo::new();
    repo.write("w.js", "a\r\nf(1)\r\nb\r\n");
    repo.commit_all("init");
    let out = repo.run(&["grep", "-p", "f($A)", "-C", "1"]);
    out.assert_code(0);
    assert_eq!(out.stdout, "w.js-1-a\nw.js:2:1: f(1)\nw.js-3-b\n");
}

#[test]
fn dash_c_dir_before_the_command_still_changes_folder() {
    let repo = setup();
    let outside = tempfile::tempdir().expect("tempdir");
    let dir = repo.path().to_string_lossy().into_owned();
    let mut cmd = repo.command(".", &["-C", &dir, "grep", "-p", "f($A)", "-C", "1", "y.js"]);
    cmd.current_dir(outside.path());
    let out = cmd.output().expect("run");
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "y.js:1:1: f(9)\ny.js-2-z\n"
    );
    let mut cmd = repo.command(".", &["-C", &dir, "list"]);
    cmd.current_dir(outside.path());
    assert_eq!(cmd.output().expect("run").status.code(), Some(0));
}

#[test]
fn dash_c_after_another_command_is_a_usage_error_that_says_where_it_goes() {
    let repo = setup();
    let out = repo.run(&["list", "-C", "."]);
    out.assert_code(2);
    assert!(
        out.stderr.contains("-C DIR goes before the command"),
        "{}",
        out.stderr
    );
    let out = repo.run(&["--json", "list", "-C", "."]);
    out.assert_code(2);
    let v = out.json();
    assert_eq!(v["error"]["code"], "usage");
    assert!(
        v["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("-C DIR goes before the command")),
        "{v}"
    );
    // A context count that is not a number is a usage error, not a folder.
    let out = repo.run(&["grep", "-p", "f($A)", "-C", "src"]);
    out.assert_code(2);
    assert!(!out.stderr.contains("folder"), "{}", out.stderr);
}
