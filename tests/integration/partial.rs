//! Integration tests: partial apply (`apply ID -- PATHSPEC…`), its `split` journal
//! event, and undo of the applied part.

use crate::util::log_events;
use crate::util::TestRepo;

const FOLDERS: [&str; 5] = ["a", "b", "c", "d", "e"];

/// A committed repository with two files in each of five folders, and a pending
/// preview rewriting `foo(…)` to `bar(…)` in all ten. Returns the preview id.
fn five_folders() -> (TestRepo, String) {
    let repo = TestRepo::new();
    for f in FOLDERS {
        repo.write(&format!("{f}/one.js"), format!("foo({f}1);\nfoo({f}2);\n"));
        repo.write(&format!("{f}/two.js"), format!("foo({f}3);\n"));
    }
    repo.commit_all("five folders");
    let out = repo.run(&["edit", "-p", "foo($A)", "-r", "bar($A)", "--json"]);
    out.assert_code(0);
    let id = out.json()["id"].as_str().expect("id").to_string();
    (repo, id)
}

fn original(f: &str, file: &str) -> String {
    match file {
        "one.js" => format!("foo({f}1);\nfoo({f}2);\n"),
        _ => format!("foo({f}3);\n"),
    }
}

fn rewritten(f: &str, file: &str) -> String {
    original(f, file).replace("foo", "bar")
}

/// Every file holds the rewrite in `applied` folders and the original elsewhere.
#[track_caller]
fn assert_tree(repo: &TestRepo, applied: &[&str]) {
    for f in FOLDERS {
        for file in ["one.js", "two.js"] {
            let want = if applied.contains(&f) {
                rewritten(f, file)
            } else {
                original(f, file)
            };
            assert_eq!(repo.read_string(&format!("{f}/{file}")), want, "{f}/{file}");
        }
    }
}

fn refs(repo: &TestRepo) -> Vec<String> {
    repo.git(&["for-each-ref", "--format=%(refname)", "refs/astedit"])
        .lines()
        .map(str::to_string)
        .collect()
}

#[test]
fn partial_apply_of_two_folders_then_undo_then_the_remainder() {
    let (repo, parent) = five_folders();
    let out = repo.run(&["apply", &parent, "--json", "--", "a", "c/"]);
    out.assert_code(0);
    let v = out.json();
    assert_eq!(v["schema_version"], 2, "{v}");
    assert_eq!(v["action"], "applied");
    let split = &v["split"];
    assert_eq!(split["parent"], parent.as_str(), "{v}");
    let part = split["selected"].as_str().expect("selected").to_string();
    let rest = split["remainder"].as_str().expect("remainder").to_string();
    assert_eq!(v["id"], part.as_str());
    assert_ne!(part, parent);
    assert_ne!(rest, parent);
    assert_eq!(
        v["files"],
        serde_json::json!(["a/one.js", "a/two.js", "c/one.js", "c/two.js"])
    );
    assert_eq!(split["remainder_file_count"], 6);

    // Bytes on disk: a and c rewritten, the others untouched.
    assert_tree(&repo, &["a", "c"]);
    // Refs: the parent and the applied part are gone, the remainder is pending.
    assert_eq!(refs(&repo), vec![format!("refs/astedit/{rest}")]);

    // The remainder's diff is the other three folders' rewrite, nothing of a or c.
    let diff = repo.run(&["show", &rest]);
    diff.assert_code(0);
    for f in ["b", "d", "e"] {
        assert!(
            diff.stdout.contains(&format!("+++ b/{f}/one.js")),
            "{}",
            diff.stdout
        );
    }
    assert!(!diff.stdout.contains("a/one.js") && !diff.stdout.contains("c/two.js"));
    assert!(
        diff.stdout.contains(&format!("remainder part of {parent}")),
        "{}",
        diff.stdout
    );
    let shown = repo.run(&["show", &rest, "--json"]);
    shown.assert_code(0);
    let meta = &shown.json()["meta"];
    assert_eq!(meta["details"]["split_from"], parent.as_str(), "{meta}");
    assert_eq!(meta["replacements"], 9, "{meta}");
    assert_eq!(meta["files"].as_array().map(Vec::len), Some(6));

    // `list` shows the remainder only, saying what it is part of.
    let list = repo.run(&["list"]);
    assert!(
        list.stdout.contains(&rest) && !list.stdout.contains(&part),
        "{}",
        list.stdout
    );
    assert!(list.stdout.contains("remainder part of"), "{}", list.stdout);

    // `show` and `apply` of the split parent name its parts.
    let gone = repo.run(&["show", &parent]);
    gone.assert_code(2);
    assert!(
        gone.stderr.contains(&part) && gone.stderr.contains(&rest) && gone.stderr.contains("split"),
        "{}",
        gone.stderr
    );
    repo.run(&["apply", &parent]).assert_code(2);

    // Undo of the partial apply undoes that part only.
    repo.run(&["undo", &part]).assert_code(0);
    assert_tree(&repo, &[]);
    let mut pending = refs(&repo);
    pending.sort();
    let mut want = vec![
        format!("refs/astedit/{part}"),
        format!("refs/astedit/{rest}"),
    ];
    want.sort();
    assert_eq!(pending, want);

    // The log tells one change's line: staged → split → applied → undone.
    let log = repo.run(&["log", &part, "--json"]);
    log.assert_code(0);
    let mut events = log_events(&log.json());
    events.reverse();
    assert_eq!(
        events,
        vec![
            ("staged".to_string(), parent.clone()),
            ("split".to_string(), parent.clone()),
            ("applied".to_string(), part.clone()),
            ("undone".to_string(), part.clone()),
        ]
    );
    let text = repo.run(&["log", &parent]);
    assert!(
        text.stdout
            .contains(&format!("into: {part} (selected) + {rest} (remainder)")),
        "{}",
        text.stdout
    );

    // The remainder is still applicable, and applies b, d, e only.
    repo.run(&["apply", &rest]).assert_code(0);
    assert_tree(&repo, &["b", "d", "e"]);
    assert_eq!(refs(&repo), vec![format!("refs/astedit/{part}")]);
    // And the undone part applies again by its id: the whole rewrite is in.
    repo.run(&["apply", &part]).assert_code(0);
    assert_tree(&repo, &FOLDERS);
    assert!(refs(&repo).is_empty());
    repo.fsck();
}

#[test]
fn a_stale_file_outside_the_selection_does_not_block_the_partial_apply() {
    let (repo, parent) = five_folders();
    repo.write("e/two.js", "foo(changed);\n");
    // The whole preview is stale…
    repo.run(&["apply", &parent]).assert_code(3);
    // …but its part under b is not.
    let out = repo.run(&["apply", &parent, "--json", "--", "b"]);
    out.assert_code(0);
    let rest = out.json()["split"]["remainder"]
        .as_str()
        .expect("remainder")
        .to_string();
    assert_eq!(repo.read_string("b/one.js"), rewritten("b", "one.js"));
    assert_eq!(repo.read_string("e/two.js"), "foo(changed);\n");
    // The remainder holds the stale file, and its apply refuses naming it.
    let stale = repo.run(&["apply", &rest]);
    stale.assert_code(3);
    assert!(stale.stderr.contains("e/two.js"), "{}", stale.stderr);
    assert_eq!(repo.read_string("a/one.js"), original("a", "one.js"));
}

#[test]
fn a_stale_selected_file_refuses_and_splits_nothing() {
    let (repo, parent) = five_folders();
    repo.write("a/one.js", "foo(changed);\n");
    let out = repo.run(&["apply", &parent, "--", "a"]);
    out.assert_code(3);
    assert!(out.stderr.contains("a/one.js"), "{}", out.stderr);
    assert_eq!(refs(&repo), vec![format!("refs/astedit/{parent}")]);
    assert_tree_except(&repo, "a/one.js");
}

#[track_caller]
fn assert_tree_except(repo: &TestRepo, skip: &str) {
    for f in FOLDERS {
        for file in ["one.js", "two.js"] {
            let path = format!("{f}/{file}");
            if path != skip {
                assert_eq!(repo.read_string(&path), original(f, file), "{path}");
            }
        }
    }
}

#[test]
fn a_pathspec_matching_nothing_is_exit_2_and_changes_nothing() {
    let (repo, parent) = five_folders();
    repo.write("z/other.js", "foo(z);\n");
    let out = repo.run(&["apply", &parent, "--", "a", "nowhere", "z"]);
    out.assert_code(2);
    assert!(
        out.stderr.contains("'nowhere'") && out.stderr.contains("'z'"),
        "{}",
        out.stderr
    );
    assert!(!out.stderr.contains("'a'"), "{}", out.stderr);
    assert_eq!(refs(&repo), vec![format!("refs/astedit/{parent}")]);
    assert_tree(&repo, &[]);
    let json = repo.run(&["apply", &parent, "--json", "--", "nowhere"]);
    json.assert_code(2);
}

#[test]
fn pathspecs_are_relative_to_the_current_folder_and_all_of_it_is_a_plain_apply() {
    let (repo, parent) = five_folders();
    // From inside d, `one.js` is d/one.js.
    let out = repo.run_in("d", &["apply", &parent, "--json", "--", "one.js"]);
    out.assert_code(0);
    let v = out.json();
    assert_eq!(v["files"], serde_json::json!(["d/one.js"]), "{v}");
    let rest = v["split"]["remainder"]
        .as_str()
        .expect("remainder")
        .to_string();
    // A pathspec covering every file: an ordinary apply, no split.
    let out = repo.run(&["apply", &rest, "--json", "--", "*.js"]);
    out.assert_code(0);
    let v = out.json();
    assert_eq!(v["id"], rest.as_str());
    assert!(v.get("split").is_none(), "{v}");
    assert_tree(&repo, &FOLDERS);
    assert!(refs(&repo).is_empty());
}

#[test]
fn an_apply_failing_after_the_split_names_both_parts() {
    let (repo, parent) = five_folders();
    // The index lock refuses `--index` once the preview is split.
    let lock = repo.path().join(".git/index.lock");
    std::fs::write(&lock, "").expect("lock");
    let out = repo.run(&["apply", &parent, "--index", "--json", "--", "a"]);
    std::fs::remove_file(&lock).expect("unlock");
    assert_ne!(out.code, 0);
    let mut pending = refs(&repo);
    assert_eq!(pending.len(), 2, "{pending:?}");
    assert!(!pending.contains(&format!("refs/astedit/{parent}")));
    let err: serde_json::Value = serde_json::from_str(&out.stdout)
        .or_else(|_| serde_json::from_str(&out.stderr))
        .unwrap_or_else(|e| panic!("no JSON error ({e}): {}{}", out.stdout, out.stderr));
    let split = &err["error"]["details"]["split"];
    let selected = split["selected"].as_str().expect("selected").to_string();
    pending.sort();
    assert!(
        pending.contains(&format!("refs/astedit/{selected}")),
        "{err}"
    );
    assert_tree(&repo, &[]);
    // The selected part applies by its id once the index is free.
    repo.run(&["apply", &selected]).assert_code(0);
    assert_tree(&repo, &["a"]);
}

#[test]
fn partial_apply_json_fits_the_schema() {
    let (repo, parent) = five_folders();
    let out = repo.run(&["apply", &parent, "--json", "--", "e"]);
    out.assert_code(0);
    let schema = repo.run(&["schema", "apply"]);
    schema.assert_code(0);
    let schema = schema.json();
    let validator = jsonschema::draft202012::options()
        .build(&schema)
        .expect("schema compiles");
    let value = out.json();
    let errors: Vec<String> = validator
        .iter_errors(&value)
        .map(|e| e.to_string())
        .collect();
    assert!(errors.is_empty(), "{errors:?}\n{value:#}");
}
