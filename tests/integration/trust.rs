//! Rewrites that never break code silently (issue 25 items 3 and 4): kept text a
//! template repeats, blank lines of moved captures, blocks a deletion empties.

use crate::util::TestRepo;

const PATTERN: &str = "assert response.status_code == $C";
const TEMPLATE: &str = "assert response.status_code == $C, response.text";

fn asserts() -> TestRepo {
    let repo = TestRepo::new();
    repo.write(
        "test_api.py",
        "def test_a():\n    assert response.status_code == 200, response.text\n    assert response.status_code == 201\n",
    );
    repo.write("test_b.py", "assert response.status_code == 404\n");
    repo.commit_all("init");
    repo
}

#[test]
fn a_template_that_repeats_kept_text_is_warned_and_flagged() {
    let repo = asserts();
    let out = repo.run(&["--json", "edit", "-p", PATTERN, "-r", TEMPLATE]);
    out.assert_code(0);
    let v = out.json();
    crate::contract::validate(&repo, "edit", &v);
    assert_eq!(v["repeated_kept_text"], 1, "{v}");
    let files = v["files"].as_array().expect("files");
    let api = files
        .iter()
        .find(|f| f["path"] == "test_api.py")
        .expect("test_api.py");
    assert_eq!(api["flags"], serde_json::json!(["repeats-kept-text"]));
    assert_eq!(api["changes"][0]["repeated_kept"], ", response.text");
    assert!(api["changes"][1].get("repeated_kept").is_none(), "{api}");
    let b = files
        .iter()
        .find(|f| f["path"] == "test_b.py")
        .expect("test_b.py");
    assert_eq!(b["flags"], serde_json::json!([]));
    let warnings = v["warnings"].to_string();
    assert!(warnings.contains("test_api.py:2:5"), "{warnings}");
    assert!(warnings.contains("repeats-kept-text"), "{warnings}");
    // The preview's metadata keeps the flag (list, show, the server read it there).
    let id = v["id"].as_str().expect("id");
    let shown = repo.run(&["--json", "show", id]).json();
    assert!(shown.to_string().contains("repeats-kept-text"), "{shown}");
    repo.run(&["discard", id]).assert_code(0);

    // The text names the first site on stderr.
    let out = repo.run(&["edit", "-p", PATTERN, "-r", TEMPLATE]);
    out.assert_code(0);
    assert!(
        out.stderr
            .contains("repeats the text kept after the match (`, response.text`)")
            && out.stderr.contains("1 site: test_api.py:2:5"),
        "{}",
        out.stderr
    );
    repo.run(&["discard"]).assert_code(0);

    // `-i` says it on the hunk.
    let out = repo.run_with(
        ".",
        &["edit", "-i", "-p", PATTERN, "-r", TEMPLATE, "test_api.py"],
        &[],
        Some(b"n\nn\n"),
    );
    assert!(
        out.stdout
            .contains("warning: `, response.text` is kept after this change"),
        "{}",
        out.stdout
    );
    assert_eq!(
        out.stdout.matches("is kept after this change").count(),
        1,
        "{}",
        out.stdout
    );
}

#[test]
fn blank_lines_of_a_moved_capture_stay_blank() {
    let repo = TestRepo::new();
    repo.write(
        "a.js",
        "function f() {\n  if (x) {\n    a();\n\n    b();\n  }\n}\n",
    );
    repo.write("a.py", "def f():\n    if x:\n        a()\n\n        b()\n");
    repo.commit_all("init");
    repo.run(&[
        "edit",
        "-p",
        "if ($A) { $$$B }",
        "-r",
        "if ($A) {\n  try {\n    $$$B\n  } finally {}\n}",
        "--apply",
        "a.js",
    ])
    .assert_code(0);
    repo.run(&[
        "edit",
        "-p",
        "if $A:\n    $$$B",
        "-r",
        "if $A:\n    try:\n        $$$B\n    finally:\n        pass",
        "--apply",
        "a.py",
    ])
    .assert_code(0);
    assert_eq!(
        repo.read_string("a.js"),
        "function f() {\n  if (x) {\n    try {\n      a();\n\n      b();\n    } finally {}\n  }\n}\n"
    );
    assert_eq!(
        repo.read_string("a.py"),
        "def f():\n    if x:\n        try:\n            a()\n\n            b()\n        finally:\n            pass\n"
    );
}

#[test]
fn a_deletion_that_empties_a_block_is_flagged() {
    let repo = TestRepo::new();
    repo.write("a.py", "def f():\n    if x:\n        log()\n    return 1\n");
    repo.write("b.py", "def g():\n    log()\n    return 2\n");
    repo.write("c.js", "if (y) {\n  log();\n}\n");
    repo.commit_all("init");
    let out = repo.run(&["--json", "edit", "-p", "log()", "-r", "", "a.py", "b.py"]);
    out.assert_code(0);
    let v = out.json();
    crate::contract::validate(&repo, "edit", &v);
    let flags = |v: &serde_json::Value, path: &str| {
        v["files"]
            .as_array()
            .expect("files")
            .iter()
            .find(|f| f["path"] == path)
            .map(|f| f["flags"].clone())
    };
    assert_eq!(
        flags(&v, "a.py"),
        Some(serde_json::json!(["leaves-empty-block"])),
        "{v}"
    );
    assert_eq!(flags(&v, "b.py"), Some(serde_json::json!([])), "{v}");
    let warnings = v["warnings"].to_string();
    assert!(
        warnings.contains("a deletion leaves an empty block") && warnings.contains("a.py"),
        "{warnings}"
    );
    repo.run(&["discard"]).assert_code(0);
    let out = repo.run(&["edit", "-p", "log();", "-r", "", "c.js"]);
    out.assert_code(0);
    assert!(
        out.stderr
            .contains("a deletion leaves an empty block (flag leaves-empty-block) in 1 file: c.js"),
        "{}",
        out.stderr
    );
}

/// `grep` reports the node matched, `edit` replaces up to the last part the pattern
/// covers and keeps the rest: `grep --json` carries both.
#[test]
fn grep_json_carries_the_matched_and_the_replaced_range() {
    let repo = TestRepo::new();
    repo.write("r.rb", "raise A, \"m\", bt\nraise B, \"n\"\n");
    repo.commit_all("init");
    let v = repo.run(&["--json", "grep", "-p", "raise $E, $M"]).json();
    crate::contract::validate(&repo, "grep", &v);
    let first = &v["matches"][0];
    assert_eq!(first["text"], "raise A, \"m\", bt");
    assert_eq!(
        (first["start_byte"].as_u64(), first["end_byte"].as_u64()),
        (Some(0), Some(16))
    );
    assert_eq!(first["replaced"]["text"], "raise A, \"m\"");
    assert_eq!(first["replaced"]["end_byte"], 12);
    assert_eq!(first["replaced"]["end_column"], 13);
    // Where the two are the same, only the match is given.
    assert!(v["matches"][1].get("replaced").is_none(), "{v}");
    // And edit replaces exactly that range, keeping `, bt`.
    repo.run(&["edit", "-p", "raise $E, $M", "-r", "fail $E, $M", "--apply"])
        .assert_code(0);
    assert_eq!(
        repo.read_string("r.rb"),
        "fail A, \"m\", bt\nfail B, \"n\"\n"
    );
}

/// `scan`'s fixes are held to the same checks: a fix that empties a block flags its
/// file, in the report, the preview and the warnings. A rule's fix replaces the whole
/// node matched, as in ast-grep, so it keeps no text past the pattern to repeat.
#[test]
fn scan_fixes_flag_emptied_blocks_and_replace_whole_nodes() {
    let repo = TestRepo::new();
    repo.write(
        "astedit.toml",
        r#"
[[rules]]
id = "assert-text"
language = "python"
rule.pattern = "assert response.status_code == $C"
fix = "assert response.status_code == $C, response.text"

[[rules]]
id = "no-log"
language = "javascript"
rule.pattern = "log();"
fix = ""
"#,
    );
    repo.write(
        "t.py",
        "assert response.status_code == 200, response.text\nassert response.status_code == 201\n",
    );
    repo.write("a.js", "if (y) {\n  log();\n}\n");
    repo.commit_all("init");
    let out = repo.run(&["--json", "scan", "--stage"]);
    out.assert_code(0);
    let v = out.json();
    crate::contract::validate(&repo, "scan", &v);
    let file = |path: &str| {
        v["files"]
            .as_array()
            .expect("files")
            .iter()
            .find(|f| f["path"] == path)
            .cloned()
            .unwrap_or_default()
    };
    assert_eq!(
        file("a.js")["flags"],
        serde_json::json!(["leaves-empty-block"]),
        "{v}"
    );
    assert_eq!(file("t.py")["flags"], serde_json::json!([]), "{v}");
    assert_eq!(file("t.py")["repeated_kept_text"], 0);
    let id = v["id"].as_str().expect("id");
    let after = repo.git(&["cat-file", "blob", &format!("refs/astedit/{id}:t.py")]);
    assert_eq!(
        after,
        "assert response.status_code == 200, response.text\nassert response.status_code == 201, response.text\n"
    );
    let shown = repo.run(&["--json", "show", id]).json().to_string();
    assert!(shown.contains("leaves-empty-block"), "{shown}");
    repo.run(&["discard", id]).assert_code(0);
    let out = repo.run(&["scan", "--stage"]);
    assert!(
        out.stderr.contains(
            "a deleting fix leaves an empty block (flag leaves-empty-block) in 1 file: a.js"
        ),
        "{}",
        out.stderr
    );
}
