//! `review`'s grouping (issue 50): the same change at another indentation depth is one
//! group, and lines re-indented relative to each other stand apart.

use crate::util::TestRepo;

/// Stages `edit` with these arguments; the preview's id.
fn stage(repo: &TestRepo, args: &[&str]) -> String {
    let mut full = vec!["--json", "edit"];
    full.extend_from_slice(args);
    let v = repo.run(&full).assert_code(0).json();
    v["id"].as_str().expect("id").to_string()
}

fn review(repo: &TestRepo, id: &str) -> serde_json::Value {
    repo.run(&["--json", "review", id]).assert_code(0).json()
}

/// The groups' (count, outlier?, representative's first before line) in order.
fn shape(v: &serde_json::Value) -> Vec<(u64, bool, String)> {
    v["groups"]
        .as_array()
        .expect("groups")
        .iter()
        .map(|g| {
            (
                g["count"].as_u64().expect("count"),
                g["outlier"].is_string(),
                g["representative"]["before"]
                    .as_str()
                    .expect("before")
                    .lines()
                    .next()
                    .unwrap_or("")
                    .to_string(),
            )
        })
        .collect()
}

/// A call whose argument spans lines, at nesting depth `depth`; the rewrite puts the
/// argument on lines of its own, so its lines are re-indented.
fn wrapped(depth: usize, arg_indent: usize) -> String {
    let pad = "  ".repeat(depth);
    format!(
        "{pad}foo({{\n{}a: 1,\n{pad}}});\n",
        " ".repeat(pad.len() + arg_indent)
    )
}

#[test]
fn the_same_change_at_another_depth_is_one_group_lines_indented_otherwise_stand_apart() {
    let repo = TestRepo::new();
    for i in 0..4 {
        // Depth 1 in a function, depth 2 in an `if`, depth 3 in a loop in an `if`.
        repo.write(
            &format!("src/m{i}.js"),
            format!(
                "function f{i}() {{\n{}  if (x) {{\n{}    for (;;) {{\n{}    }}\n  }}\n}}\n",
                wrapped(1, 2),
                wrapped(2, 2),
                wrapped(3, 2)
            ),
        );
    }
    // One call whose argument's line sits six columns in, not two: after the rewrite
    // its lines are still indented otherwise relative to the first one.
    repo.write(
        "src/odd.js",
        format!("function odd() {{\n{}}}\n", wrapped(1, 6)),
    );
    repo.commit_all("init");
    let id = stage(&repo, &["-p", "foo($A)", "-r", "bar(\n  $A\n)"]);
    let v = review(&repo, &id);
    assert_eq!(v["sites"], 13, "{v:#}");
    assert_eq!(
        shape(&v),
        vec![
            (1, true, "  foo({".to_string()),
            (12, false, "  foo({".to_string()),
        ],
        "{v:#}"
    );
    assert_eq!(v["outliers"], 1);
    assert_eq!(v["groups"][0]["files"], serde_json::json!(["src/odd.js"]));
    // The usual change, written relative to the site's first line: the argument's
    // lines two columns deeper, then four.
    assert_eq!(
        v["groups"][1]["template"], "-foo+bar…+⏎  …-⏎  +⏎    …+⏎  }…-}…",
        "{v:#}"
    );
}
