//! Refreshes that resolve a patch again or merge three-way: moved and reindented
//! context, changed rules, a selection, a formatter's whitespace, a semantic conflict.

use super::Mcp;
use crate::util::TestRepo;

#[test]
fn patch_preview_is_resolved_again_after_its_context_moved() {
    let repo = TestRepo::new();
    repo.write(
        "a.py",
        "def f():\n    x = 1\n    return x\n\ndef g():\n    return 2\n",
    );
    repo.commit_all("init");
    let patch = "*** Begin Patch\n*** Update File: a.py\n@@ def g():\n-    return 2\n+    return 3\n*** End Patch\n";
    let out = repo.run_with(".", &["patch", "--json"], &[], Some(patch.as_bytes()));
    out.assert_code(0);
    let old = out.json()["id"].as_str().expect("id").to_string();
    // Lines added above: the chunk's context moved down three lines.
    repo.write(
        "a.py",
        "import os\nimport sys\n\ndef f():\n    x = 1\n    return x\n\ndef g():\n    return 2\n",
    );
    repo.run(&["apply", &old]).assert_code(3);
    let out = repo.run(&["refresh", "--json"]);
    out.assert_code(0);
    let v = out.json();
    assert_eq!(v["files"][0]["how"], "repatched", "{v}");
    assert_eq!(v["same_counts"], true);
    let new = v["successor"].as_str().expect("successor");
    repo.run(&["apply", new]).assert_code(0);
    assert_eq!(
        repo.read_string("a.py"),
        "import os\nimport sys\n\ndef f():\n    x = 1\n    return x\n\ndef g():\n    return 3\n"
    );
    repo.fsck();
}

#[test]
fn merge_preview_is_refreshed_by_a_three_way_merge() {
    let repo = TestRepo::new();
    let lines = |tag: &str| {
        (1..=12)
            .map(|i| format!("line {i} {tag}\n"))
            .collect::<String>()
    };
    repo.write("a.txt", lines("a"));
    repo.write("b.txt", lines("b"));
    repo.commit_all("init");
    let stage = |file: &str, from: &str, to: &str| {
        let patch = format!(
            "*** Begin Patch\n*** Update File: {file}\n@@\n-{from}\n+{to}\n*** End Patch\n"
        );
        let out = repo.run_with(".", &["patch", "--json"], &[], Some(patch.as_bytes()));
        out.assert_code(0);
        out.json()["id"].as_str().expect("id").to_string()
    };
    let p1 = stage("a.txt", "line 2 a", "LINE 2 A");
    let p2 = stage("b.txt", "line 11 b", "LINE 11 B");
    let out = repo.run(&["merge", &p1, &p2, "--json"]);
    out.assert_code(0);
    let merged = out.json()["id"].as_str().expect("id").to_string();
    // Edits far from the preview's lines, in both files.
    repo.write("a.txt", lines("a").replace("line 10 a", "line ten a"));
    repo.write(
        "b.txt",
        lines("b").replace("line 1 b\n", "line 1 b\nnew line\n"),
    );
    let out = repo.run(&["refresh", &merged, "--json"]);
    out.assert_code(0);
    let v = out.json();
    assert!(
        v["files"]
            .as_array()
            .expect("rows")
            .iter()
            .all(|f| f["how"] == "merged"),
        "{v}"
    );
    let new = v["successor"].as_str().expect("successor").to_string();
    repo.run(&["apply", &new]).assert_code(0);
    assert_eq!(
        repo.read_string("a.txt"),
        lines("a")
            .replace("line 10 a", "line ten a")
            .replace("line 2 a", "LINE 2 A")
    );
    assert_eq!(
        repo.read_string("b.txt"),
        lines("b")
            .replace("line 1 b\n", "line 1 b\nnew line\n")
            .replace("line 11 b", "LINE 11 B")
    );

    // An edit on the preview's own line: a conflict naming the file and the line.
    repo.run(&["undo"]).assert_code(0);
    repo.write("a.txt", lines("a").replace("line 2 a", "line two a"));
    let out = repo.run(&["refresh", &new, "--json"]);
    out.assert_code(3);
    let v = out.json();
    assert_eq!(
        v["error"]["details"]["conflicts"][0]["path"], "a.txt",
        "{v}"
    );
    assert_eq!(
        v["error"]["details"]["conflicts"][0]["regions"],
        serde_json::json!([{"start": 2, "end": 2}])
    );
    repo.fsck();
}

#[test]
fn scan_preview_reruns_its_rules_and_merges_when_the_rules_changed() {
    let repo = TestRepo::new();
    let rule = "[[rules]]\nid = \"no-bar\"\nlanguage = \"javascript\"\nrule.pattern = \"bar($A)\"\nfix = \"qux($A)\"\nmessage = \"no bar\"\nseverity = \"warning\"\n";
    repo.write("astedit.toml", rule);
    repo.write("a.js", "bar(1);\n\n\n\nlet x = 1;\n");
    repo.write("b.js", "bar(2);\n\n\n\nlet y = 2;\n");
    repo.commit_all("init");
    let out = repo.run(&["scan", "--stage", "--json"]);
    out.assert_code(0);
    let old = out.json()["id"].as_str().expect("id").to_string();
    // A new match in a changed file: the rules re-run and find it.
    repo.write("a.js", "bar(1);\n\n\n\nlet x  =  1;\nbar(3);\n");
    let v = repo.run(&["refresh", &old, "--json"]).json();
    assert_eq!(v["state"], "refreshed", "{v}");
    assert_eq!(v["files"][0]["how"], "rerun", "{v}");
    assert_eq!(v["files"][0]["now"], 2);
    assert_eq!(v["same_counts"], false);
    let new = v["successor"].as_str().expect("successor").to_string();
    // The rule file changed: re-running would not be the reviewed change; b.js is
    // merged three-way instead, and the note says why.
    repo.write("astedit.toml", rule.replace("qux", "zap"));
    repo.write("b.js", "bar(2);\n\n\n\nlet y  =  2;\n");
    let v = repo.run(&["refresh", &new, "--json"]).json();
    assert_eq!(v["state"], "refreshed", "{v}");
    let b = v["files"]
        .as_array()
        .expect("rows")
        .iter()
        .find(|f| f["path"] == "b.js")
        .expect("b.js")
        .clone();
    assert_eq!(b["how"], "merged", "{v}");
    assert!(
        v["notes"][0]
            .as_str()
            .is_some_and(|n| n.contains("rule files changed")),
        "{v}"
    );
    let last = v["successor"].as_str().expect("successor").to_string();
    repo.run(&["apply", &last]).assert_code(0);
    assert_eq!(
        repo.read_string("a.js"),
        "qux(1);\n\n\n\nlet x  =  1;\nqux(3);\n"
    );
    assert_eq!(repo.read_string("b.js"), "qux(2);\n\n\n\nlet y  =  2;\n");
    repo.fsck();
}

/// `edit -i` staged a selection of the matches: a refresh merges the chosen changes
/// three-way instead of re-running the ops, which would take the refused ones too.
#[test]
fn a_selection_is_refreshed_by_merge_not_by_re_running_its_ops() {
    let repo = TestRepo::new();
    repo.write("a.js", "foo(1);\n\n\n\nfoo(2);\n\n\n\nlet x = 1;\n");
    repo.commit_all("init");
    let out = repo.run_with(
        ".",
        &["edit", "-i", "-p", "foo($A)", "-r", "bar($A)"],
        &[],
        Some(b"y\nn\n"),
    );
    out.assert_code(0);
    let old = repo.astedit_refs()[0]
        .trim_start_matches("refs/astedit/")
        .to_string();
    repo.write("a.js", "foo(1);\n\n\n\nfoo(2);\n\n\n\nlet x  =  1;\n");
    let v = repo.run(&["refresh", &old, "--json"]).json();
    assert_eq!(v["files"][0]["how"], "merged", "{v}");
    assert_eq!(v["same_counts"], true);
    let new = v["successor"].as_str().expect("successor").to_string();
    repo.run(&["apply", &new]).assert_code(0);
    assert_eq!(
        repo.read_string("a.js"),
        "bar(1);\n\n\n\nfoo(2);\n\n\n\nlet x  =  1;\n"
    );
}

/// Issue 24 item 4: a formatter's whitespace inside the sites an edit rewrites.
#[test]
fn refresh_goes_through_a_formatters_whitespace_and_says_so() {
    let repo = TestRepo::new();
    let before = "fn main() {\n    foo(1);\n    foo(2, 3);\n}\n";
    repo.write("src/a.rs", before);
    repo.commit_all("init");
    let out = repo.run(&["edit", "-p", "foo($$$A)", "-r", "bar($$$A)", "--json"]);
    out.assert_code(0);
    let old = out.json()["id"].as_str().expect("id").to_string();
    // The formatter's taste: spaces inside the parentheses, a call split over lines.
    let formatted = "fn main() {\n    foo( 1 );\n    foo(\n        2,\n        3\n    );\n}\n";
    repo.write("src/a.rs", formatted);
    repo.run(&["apply", &old]).assert_code(3);
    let out = repo.run(&["apply", &old, "--refresh", "--json"]);
    out.assert_code(0);
    let v = out.json();
    let notes = v["refreshed"]["notes"].to_string();
    assert!(
        notes.contains("only whitespace or formatting changed"),
        "{v}"
    );
    assert_eq!(v["refreshed"]["files"][0]["how"], "rerun", "{v}");
    assert!(
        v["refreshed"]["files"][0]["why"]
            .as_str()
            .is_some_and(|w| w.contains("only whitespace")),
        "{v}"
    );
    assert_eq!(
        repo.read_string("src/a.rs"),
        // The ops re-run on the formatted text: the layout inside the call's own
        // parentheses comes along with `$$$A`.
        "fn main() {\n    bar(1);\n    bar(\n        2,\n        3\n    );\n}\n"
    );
    repo.fsck();

    // The same through the server: resolve with refresh: true, the note in its report.
    let repo = TestRepo::new();
    repo.write("src/a.rs", before);
    repo.commit_all("init");
    let out = repo.run(&["edit", "-p", "foo($$$A)", "-r", "bar($$$A)", "--json"]);
    let old = out.json()["id"].as_str().expect("id").to_string();
    repo.write("src/a.rs", "fn main() {\n    foo( 1 );\n    foo(2,3);\n}\n");
    let mut mcp = Mcp::start(&repo);
    let r = mcp
        .resolve(serde_json::json!({"action": "apply", "id": old, "reason": "r", "refresh": true}));
    assert_eq!(r["isError"], false, "{r}");
    let notes = r["structuredContent"]["refreshed"]["notes"].to_string();
    assert!(
        notes.contains("only whitespace or formatting changed"),
        "{r}"
    );
    assert_eq!(
        repo.read_string("src/a.rs"),
        "fn main() {\n    bar(1);\n    bar(2,3);\n}\n"
    );
}

/// The same, but the formatter's run came with a real edit at a site: still a conflict.
#[test]
fn refresh_still_conflicts_on_a_semantic_change_among_formatting() {
    let repo = TestRepo::new();
    repo.write("src/a.rs", "fn main() {\n    foo(1);\n}\n");
    repo.commit_all("init");
    let out = repo.run(&["edit", "-p", "foo($A)", "-r", "bar($A)", "--json"]);
    out.assert_code(0);
    let old = out.json()["id"].as_str().expect("id").to_string();
    repo.write("src/a.rs", "fn main() {\n    foo( 2 );\n}\n");
    let out = repo.run(&["apply", &old, "--refresh", "--json"]);
    out.assert_code(3);
    assert_eq!(
        out.json()["error"]["code"],
        "refresh-conflict",
        "{}",
        out.stdout
    );
    // A string literal's spaces are not layout either.
    let repo = TestRepo::new();
    repo.write("src/a.rs", "fn main() {\n    foo(\"a b\");\n}\n");
    repo.commit_all("init");
    let out = repo.run(&["edit", "-p", "foo($A)", "-r", "bar($A)", "--json"]);
    let old = out.json()["id"].as_str().expect("id").to_string();
    repo.write("src/a.rs", "fn main() {\n    foo( \"a  b\" );\n}\n");
    let out = repo.run(&["refresh", &old, "--json"]);
    out.assert_code(3);
    assert_eq!(
        out.json()["error"]["code"],
        "refresh-conflict",
        "{}",
        out.stdout
    );
    assert_eq!(
        repo.read_string("src/a.rs"),
        "fn main() {\n    foo( \"a  b\" );\n}\n"
    );
}

/// A patch whose context a formatter re-indented (and left trailing blanks on) since.
#[test]
fn patch_refresh_goes_through_reindented_context() {
    let repo = TestRepo::new();
    repo.write(
        "a.js",
        "function f() {\n    let a = 1;\n    if (a) {\n        let b = 2;\n    }\n    return a;\n}\n",
    );
    repo.commit_all("init");
    let patch = "*** Begin Patch\n*** Update File: a.js\n@@\n     let a = 1;\n     if (a) {\n-        let b = 2;\n+        let b = 20;\n+        log(b);\n     }\n*** End Patch\n";
    let out = repo.run_with(".", &["patch", "--json"], &[], Some(patch.as_bytes()));
    out.assert_code(0);
    let old = out.json()["id"].as_str().expect("id").to_string();
    // Re-indented to two spaces, with a trailing blank on one context line.
    repo.write(
        "a.js",
        "function f() {\n  let a = 1; \n  if (a) {\n    let b = 2;\n  }\n  return a;\n}\n",
    );
    let out = repo.run(&["refresh", &old, "--json"]);
    out.assert_code(0);
    let v = out.json();
    assert_eq!(v["files"][0]["how"], "repatched", "{v}");
    assert!(
        v["notes"].to_string().contains("only in indentation"),
        "{v}"
    );
    let new = v["successor"].as_str().expect("successor").to_string();
    let text = repo.run(&["show", &new]);
    text.assert_code(0);
    repo.run(&["apply", &new]).assert_code(0);
    // Context kept as the file has it; the added lines at the new indentation.
    assert_eq!(
        repo.read_string("a.js"),
        "function f() {\n  let a = 1; \n  if (a) {\n    let b = 20;\n    log(b);\n  }\n  return a;\n}\n"
    );
    // A changed line of the chunk (not only its indentation) still conflicts.
    let repo = TestRepo::new();
    repo.write(
        "a.js",
        "function f() {\n    let a = 1;\n    if (a) {\n        let b = 2;\n    }\n    return a;\n}\n",
    );
    repo.commit_all("init");
    let out = repo.run_with(".", &["patch", "--json"], &[], Some(patch.as_bytes()));
    let old = out.json()["id"].as_str().expect("id").to_string();
    repo.write(
        "a.js",
        "function f() {\n  let a = 1;\n  if (a) {\n    let b = 3;\n  }\n  return a;\n}\n",
    );
    let out = repo.run(&["refresh", &old, "--json"]);
    out.assert_code(3);
    assert_eq!(
        out.json()["error"]["code"],
        "refresh-conflict",
        "{}",
        out.stdout
    );
    repo.fsck();
}
