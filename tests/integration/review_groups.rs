//! `review`'s grouping (issue 50): the same change at another indentation depth is one
//! group; each kind of outlier the issue lists stands apart from its op's usual change
//! (a comment kept or dropped, lines re-indented relative to each other, an import
//! added in one file only, a list deletion that took another separator); the static
//! HTML file stays under its byte cap and says what it left out.

use crate::util::TestRepo;

/// Stages `edit` with these arguments; the preview's id.
fn stage(repo: &TestRepo, args: &[&str]) -> String {
    let mut full = vec!["edit"];
    full.extend_from_slice(args);
    staged(repo, &full)
}

/// Runs this staging command line with `--json`; the preview's id.
pub(crate) fn staged(repo: &TestRepo, args: &[&str]) -> String {
    let mut full = vec!["--json"];
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

#[test]
fn a_comment_dropped_by_one_site_or_left_on_its_line_by_a_deletion_stands_apart() {
    let repo = TestRepo::new();
    repo.write(
        "a.js",
        "function f() {\n  console.log(a);\n  console.log(b);\n  console.log(c /* keep */);\n  console.log(d);\n}\n",
    );
    repo.write(
        "b.js",
        "function g() {\n  warn(a);\n  warn(b);\n  warn(c); // keep me\n  warn(d);\n  h();\n}\n",
    );
    repo.commit_all("init");
    // A rewrite that drops the comment inside one call.
    let id = stage(&repo, &["-p", "console.log($A)", "-r", "logger.info($A)"]);
    let v = review(&repo, &id);
    assert_eq!(
        shape(&v),
        vec![
            (1, true, "  console.log(c /* keep */);".to_string()),
            (3, false, "  console.log(a);".to_string()),
        ],
        "{v:#}"
    );
    repo.run(&["discard", &id]).assert_code(0);
    // A deletion that takes three statements with their lines, and leaves the
    // comment of the fourth on its line.
    let id = stage(&repo, &["-p", "warn($A);", "-r", ""]);
    let v = review(&repo, &id);
    assert_eq!(
        shape(&v),
        vec![
            (1, true, "  warn(c); // keep me".to_string()),
            (3, false, "  warn(a);".to_string()),
        ],
        "{v:#}"
    );
    assert_eq!(v["groups"][1]["template"], "-warn…;⏎");
    assert_eq!(v["groups"][0]["template"], "-warn…;");
}

#[test]
fn an_import_added_in_one_file_only_stands_apart() {
    let repo = TestRepo::new();
    for i in 0..3 {
        repo.write(
            &format!("src/m{i}.js"),
            format!(
                "import {{ logger }} from \"./log\";\nfunction f{i}() {{\n  console.log(a);\n  console.log(b);\n}}\n"
            ),
        );
    }
    repo.write(
        "src/new.js",
        "function g() {\n  console.log(a);\n  console.log(b);\n}\n",
    );
    repo.commit_all("init");
    let id = stage(
        &repo,
        &[
            "-p",
            "console.log($A)",
            "-r",
            "logger.info($A)",
            "--add-import",
            "import { logger } from \"./log\";",
        ],
    );
    let v = review(&repo, &id);
    assert_eq!(v["sites"], 8, "{v:#}");
    assert_eq!(v["dependents"], 1, "{v:#}");
    assert_eq!(
        shape(&v),
        vec![
            (2, true, "  console.log(a);".to_string()),
            (6, false, "  console.log(a);".to_string()),
        ],
        "{v:#}"
    );
    assert_eq!(v["groups"][0]["files"], serde_json::json!(["src/new.js"]));
    let t = v["groups"][0]["template"].as_str().expect("template");
    assert!(t.ends_with(" with +import…;"), "{t}");
    // Accepting the outlier group applies its file's import with it.
    let key = v["groups"][0]["key"].as_str().expect("key").to_string();
    repo.run(&["review", &id, "--accept", &key]).assert_code(0);
    repo.run(&["apply", &id]).assert_code(0);
    assert_eq!(
        repo.read_string("src/new.js"),
        "import { logger } from \"./log\";\n\nfunction g() {\n  logger.info(a);\n  logger.info(b);\n}\n"
    );
}

#[test]
fn a_list_deletion_that_took_another_separator_stands_apart() {
    let repo = TestRepo::new();
    repo.write(
        "c.js",
        "const flags = [a, DEBUG, b];\nconst more = [c, DEBUG, d];\nconst last = [e, DEBUG];\n",
    );
    repo.commit_all("init");
    let id = stage(&repo, &["-p", "DEBUG", "-r", ""]);
    let v = review(&repo, &id);
    assert_eq!(
        shape(&v),
        vec![
            (1, true, "const last = [e, DEBUG];".to_string()),
            (2, false, "const flags = [a, DEBUG, b];".to_string()),
        ],
        "{v:#}"
    );
    assert_eq!(v["groups"][0]["template"], "-,…DEBUG");
    assert_eq!(v["groups"][1]["template"], "-DEBUG…,");
}

#[test]
fn the_html_file_stays_under_its_cap_keeping_every_group_and_saying_what_it_left_out() {
    let repo = TestRepo::new();
    // 120 files of one 80 KB line each, each changed in its own way by a command:
    // 120 groups whose representative diffs would make a 19 MB file.
    let body = "x, ".repeat(80_000 / 3);
    for i in 0..120 {
        repo.write(&format!("src/m{i:03}.js"), format!("v{i} = [{body}];\n"));
    }
    repo.commit_all("init");
    let id = staged(
        &repo,
        &[
            "run",
            "--",
            "sh",
            "-c",
            "for f in src/*.js; do sed -i 's/^v\\([0-9]*\\) = /w\\1 = /' \"$f\"; done",
        ],
    );
    let v = review(&repo, &id);
    assert_eq!(v["sites"], 120, "{v:#}");
    let groups = v["groups"].as_array().expect("groups");
    assert_eq!(groups.len(), 120);
    let file = repo.path().join("review.html");
    repo.run(&["review", &id, "--html", file.to_str().expect("path")])
        .assert_code(0);
    let html = std::fs::read_to_string(&file).expect("html written");
    assert!(html.len() <= 5_000_000, "{} bytes", html.len());
    assert!(html.ends_with("</body></html>\n"));
    // Every group is still listed with its count; the counts are whole.
    assert!(
        html.contains("<b>120</b> sites in <b>120</b> groups"),
        "{}",
        html.chars().take(2000).collect::<String>()
    );
    for g in groups {
        let key = g["key"].as_str().expect("key");
        assert!(html.contains(&format!("href=\"#g-{key}\"")), "{key}");
    }
    // Some diffs are there, cut, and the others are said to be left out.
    let sections = html.matches("<section class=\"group").count();
    assert!(sections > 0 && sections < 120, "{sections}");
    assert!(html.contains("more bytes left out)"));
    assert!(
        html.contains(&format!(
            "Left out, to keep this file under 5 MB: {} listed groups have no representative diff here",
            120 - sections
        )),
        "{}",
        html.chars().take(3000).collect::<String>()
    );
}

#[test]
fn a_fix_nested_in_another_fixes_kept_text_is_the_rules_own_change_not_an_outlier() {
    let repo = TestRepo::new();
    // `var $A = $B` → `let $A = $B` keeps `$B`, whose own `var` the scan's next pass
    // fixes in the kept copy (as in the ES5 helpers of compiled code).
    let helper = "var extend = (function () {\n    var inner = function (d) {\n        return d;\n    };\n    return inner;\n})();\n";
    for i in 0..3 {
        repo.write(
            &format!("src/m{i}.js"),
            format!("{helper}var a{i} = 1;\nvar b{i} = a{i} + 1;\n"),
        );
    }
    repo.write(
        "rules/let.yml",
        "id: use-let\nlanguage: JavaScript\nrule:\n  pattern: var $A = $B\nfix: let $A = $B\n",
    );
    repo.commit_all("init");
    let id = crate::codemods::scan_stage(&repo, "rules/let.yml");
    let v = review(&repo, &id);
    // Each file: the helper (two fixes, one nested in the other: one site) and two
    // plain ones. The helpers' change is not the rule's usual one, but it is the
    // rule's: an outlier for that, never for a change the recipe does not make.
    assert_eq!(v["sites"], 9, "{v:#}");
    assert_eq!(
        shape(&v),
        vec![
            (3, true, "var extend = (function () {".to_string()),
            (6, false, "var a0 = 1;".to_string()),
        ],
        "{v:#}"
    );
    assert_eq!(
        v["groups"][0]["outlier"], "differs from the usual change of its rule (6 sites)",
        "{v:#}"
    );
    assert_eq!(v["groups"][0]["rule"], "use-let", "{v:#}");
    assert_eq!(
        v["groups"][0]["template"], "-var+let…-var+let…-;…-;",
        "{v:#}"
    );
    // Accepting the plain group applies those, not the helpers.
    let key = v["groups"][1]["key"].as_str().expect("key").to_string();
    repo.run(&["review", &id, "--accept", &key]).assert_code(0);
    repo.run(&["apply", &id]).assert_code(0);
    assert_eq!(
        repo.read_string("src/m1.js"),
        format!("{helper}let a1 = 1\nlet b1 = a1 + 1\n")
    );
}

#[test]
fn a_site_on_a_long_line_shows_the_line_around_it_only() {
    let repo = TestRepo::new();
    // Minified: 400 calls on one line of 8 KB.
    let line: String = (0..400).map(|i| format!("console.log(v{i:03});")).collect();
    repo.write("m.min.js", format!("{line}\n"));
    repo.commit_all("init");
    let id = stage(&repo, &["-p", "console.log($A)", "-r", "logger.info($A)"]);
    let v = review(&repo, &id);
    assert_eq!(v["sites"], 400, "{v:#}");
    let g = &v["groups"][0];
    let sites = repo
        .run(&[
            "--json",
            "review",
            &id,
            "--sites",
            g["key"].as_str().expect("key"),
            "--limit",
            "400",
        ])
        .assert_code(0)
        .json();
    let middle = &sites["sites"][200];
    // 160 characters either side of the site, `…` where the line goes on.
    let before = middle["before"].as_str().expect("before");
    assert_eq!(
        before,
        format!(
            "…{}console.log(v200){}…",
            &line[200 * 18 - 160..200 * 18],
            &line[200 * 18 + 17..200 * 18 + 17 + 160]
        )
    );
    assert!(
        middle["after"]
            .as_str()
            .expect("after")
            .contains("console.log(v199);logger.info(v200);console.log(v201)"),
        "{middle}"
    );
    // The first site's line is cut on its right only; the JSON stays small.
    let first = sites["sites"][0]["before"].as_str().expect("before");
    assert!(
        first.starts_with("console.log(v000);") && first.ends_with('…'),
        "{first}"
    );
    assert!(
        sites.to_string().len() < 400 * 1_000,
        "{}",
        sites.to_string().len()
    );
    // Decided and applied as usual.
    repo.run(&["review", &id, "--accept", "all"]).assert_code(0);
    repo.run(&["apply", &id]).assert_code(0);
    assert_eq!(
        repo.read_string("m.min.js"),
        format!("{}\n", line.replace("console.log(", "logger.info("))
    );
}
