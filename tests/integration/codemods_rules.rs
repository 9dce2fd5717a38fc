//! Integration tests: how a scan's rules fix a file (issue 53): a rule's own output is
//! not matched again, the same `edits:` of several rules made once, rules that only
//! edit around their match, `edit --selector`, and the words of a refreshed summary.

use crate::util::TestRepo;

/// `scan --stage --json` with `args`: its JSON (exit 0 or 1, findings left or not).
fn scan_stage(repo: &TestRepo, args: &[&str]) -> serde_json::Value {
    let mut all = vec!["scan", "--stage"];
    all.extend_from_slice(args);
    all.push("--json");
    let out = repo.run(&all);
    assert!(
        out.code == 0 || out.code == 1,
        "{}\n{}",
        out.stdout,
        out.stderr
    );
    out.json()
}

fn id_of(v: &serde_json::Value) -> String {
    v["id"]
        .as_str()
        .or_else(|| v["staged"]["id"].as_str())
        .unwrap_or_else(|| panic!("an id in {v}"))
        .to_string()
}

#[test]
fn a_refreshed_scan_preview_counts_fixes_in_english() {
    let repo = TestRepo::new();
    repo.write(
        "astedit.toml",
        "[[rules]]\nid = \"no-bar\"\nlanguage = \"javascript\"\nrule.pattern = \"bar($A)\"\n\
         fix = \"qux($A)\"\nmessage = \"no bar\"\nseverity = \"warning\"\n",
    );
    repo.write("a.js", "bar(1);\nbar(2);\n\n\n\nlet x = 1;\n");
    repo.commit_all("init");
    let old = id_of(&scan_stage(&repo, &[]));
    repo.write("a.js", "bar(1);\nbar(2);\n\n\n\nlet x  =  1;\nbar(3);\n");
    let v = repo.run(&["refresh", &old, "--json"]).json();
    assert_eq!(v["state"], "refreshed", "{v}");
    let new = v["successor"].as_str().expect("a successor").to_string();
    let shown = repo.run(&["show", &new, "--json"]).json();
    let summary = shown["preview"]["summary"].as_str().expect("a summary");
    assert!(
        summary.starts_with("3 fixes in 1 file (refreshed from "),
        "{summary}"
    );
}
