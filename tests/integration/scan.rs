//! Integration tests: `scan` (rules, findings, --check/--stage/--apply, --cached,
//! shards), `merge`, `hook install`, and the pre-commit framework.

use std::path::Path;
use std::path::PathBuf;
use std::process::Command;

use crate::util::TestRepo;

/// Two JavaScript rules: one whose fix needs re-runs, one with a constraint.
const TOML_RULES: &str = r#"
[[rules]]
id = "strict-equality"
language = "javascript"
severity = "error"
message = "use === instead of =="
rule.pattern = "$A == $B"
constraints.B.not.kind = "null"
fix = "$A === $B"
files = ["src/**"]

[[rules]]
id = "redundant-parens"
language = "javascript"
severity = "warning"
message = "redundant parentheses around $X"
rule.pattern = "($X)"
constraints.X.kind = "identifier"
fix = "$X"
"#;

/// The same rules as ast-grep YAML.
const YAML_RULES: &str = r#"id: strict-equality
language: javascript
severity: error
message: use === instead of ==
rule:
  pattern: $A == $B
constraints:
  B:
    not:
      kind: "null"
fix: $A === $B
files:
  - src/**
---
id: redundant-parens
language: javascript
severity: warning
message: redundant parentheses around $X
rule:
  pattern: ($X)
constraints:
  X:
    kind: identifier
fix: $X
"#;

const BAD_JS: &str = "let y = ((a));\nif (x == 1) { f(((b))) }\nif (x == null) {}\n";
const FIXED_JS: &str = "let y = a;\nif (x === 1) { f(b) }\nif (x == null) {}\n";

/// A repository with the TOML rules and a few files that break them, committed.
fn repo_with_rules() -> TestRepo {
    let repo = TestRepo::new();
    repo.write("astedit.toml", TOML_RULES);
    repo.write("src/a.js", BAD_JS);
    repo.write("src/b.js", "if (p == q) {}\n");
    repo.write("lib/c.js", "if (p == q) { ((z)) }\n");
    repo.write("src/ok.js", "const ok = 1;\n");
    repo.commit_all("init");
    repo
}

/// The id on the `staged preview <id>.` / `staged and applied <id>` line (stderr).
fn staged_id(stderr: &str) -> String {
    for marker in ["staged preview ", "staged and applied ", "Staged preview "] {
        if let Some(rest) = stderr.split(marker).nth(1) {
            let id: String = rest.chars().take_while(|c| c.is_ascii_hexdigit()).collect();
            if !id.is_empty() {
                return id;
            }
        }
    }
    panic!("no preview id in:\n{stderr}");
}

/// The trees (before, after) of a stored preview.
fn trees(repo: &TestRepo, id: &str) -> (String, String) {
    let r = format!("refs/astedit/{id}");
    (
        repo.git(&["rev-parse", &format!("{r}~^{{tree}}")]),
        repo.git(&["rev-parse", &format!("{r}^{{tree}}")]),
    )
}

fn blob_at(repo: &TestRepo, rev: &str, path: &str) -> String {
    repo.git(&["cat-file", "blob", &format!("{rev}:{path}")])
}

#[test]
fn findings_are_reported_per_line_and_error_severity_exits_1() {
    let repo = repo_with_rules();
    let out = repo.run(&["scan"]);
    out.assert_code(1);
    assert_eq!(
        out.stdout,
        "lib/c.js:1:16: warning[redundant-parens]: redundant parentheses around z\n\
         src/a.js:1:10: warning[redundant-parens]: redundant parentheses around a\n\
         src/a.js:2:5: error[strict-equality]: use === instead of ==\n\
         src/a.js:2:18: warning[redundant-parens]: redundant parentheses around b\n\
         src/b.js:1:5: error[strict-equality]: use === instead of ==\n"
    );
    assert!(out.stderr.contains("fixable"), "{}", out.stderr);

    // Paths are relative to the current folder, and pathspecs narrow the set.
    let out = repo.run_in("src", &["scan", "a.js"]);
    out.assert_code(1);
    assert!(
        out.stdout.starts_with("a.js:1:10: warning"),
        "{}",
        out.stdout
    );
    assert!(!out.stdout.contains("b.js"), "{}", out.stdout);

    // Only warnings: exit 0.
    let out = repo.run(&["scan", "lib"]);
    out.assert_code(0);
    assert_eq!(out.stdout.lines().count(), 1, "{}", out.stdout);

    // --json: deserializable findings with rule, severity and 1-based positions.
    let out = repo.run(&["--json", "scan"]);
    out.assert_code(1);
    let v = out.json();
    assert_eq!(v["mode"], "report");
    assert_eq!(v["error_count"], 2);
    let f = &v["findings"][2];
    assert_eq!(f["path"], "src/a.js");
    assert_eq!(f["rule"], "strict-equality");
    assert_eq!(f["severity"], "error");
    assert_eq!(
        (f["line"].as_u64(), f["column"].as_u64()),
        (Some(2), Some(5))
    );
    assert_eq!(f["text"], "x == 1");
    assert_eq!(f["fixable"], true);

    // GitHub annotations and SARIF.
    let out = repo.run(&["scan", "--format", "github", "src/b.js"]);
    assert_eq!(
        out.stdout,
        "::error file=src/b.js,line=1,col=5,endLine=1,endColumn=11,title=strict-equality::use === instead of ==\n"
    );
    let out = repo.run(&["scan", "--format", "sarif"]);
    out.assert_code(1);
    let v = out.json();
    assert_eq!(v["version"], "2.1.0");
    let run = &v["runs"][0];
    assert_eq!(run["tool"]["driver"]["rules"][0]["id"], "strict-equality");
    assert_eq!(run["results"].as_array().map(Vec::len), Some(5));
    let r = &run["results"][4];
    assert_eq!(r["ruleId"], "strict-equality");
    assert_eq!(r["level"], "error");
    assert_eq!(
        r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
        "src/b.js"
    );
    assert_eq!(
        r["locations"][0]["physicalLocation"]["region"]["startLine"],
        1
    );
}

#[test]
fn toml_rule_and_the_same_yaml_rule_stage_the_same_preview() {
    let repo = repo_with_rules();
    repo.write("rules/js.yml", YAML_RULES);
    repo.commit_all("yaml rules");

    let from_toml = repo.run(&["scan", "--stage"]);
    from_toml.assert_code(0);
    let toml_id = staged_id(&from_toml.stderr);
    let from_yaml = repo.run(&["scan", "--stage", "--config", "rules/js.yml"]);
    from_yaml.assert_code(0);
    let yaml_id = staged_id(&from_yaml.stderr);
    assert_ne!(toml_id, yaml_id);
    assert_eq!(trees(&repo, &toml_id), trees(&repo, &yaml_id));
    assert_eq!(from_toml.stdout, from_yaml.stdout, "same diff printed");
    assert_eq!(
        blob_at(&repo, &format!("refs/astedit/{toml_id}"), "src/a.js"),
        FIXED_JS
    );
    // The `files` glob keeps strict-equality out of lib/.
    assert_eq!(
        blob_at(&repo, &format!("refs/astedit/{toml_id}"), "lib/c.js"),
        "if (p == q) { z }\n"
    );

    // An sgconfig.yml project with its rule folder means the same again.
    repo.write("sgconfig.yml", "ruleDirs:\n  - rules\n");
    let from_sg = repo.run(&["scan", "--stage", "--config", "sgconfig.yml"]);
    from_sg.assert_code(0);
    assert_eq!(
        trees(&repo, &toml_id),
        trees(&repo, &staged_id(&from_sg.stderr))
    );

    // The preview records the rule ids and their counts.
    let show = repo.run(&["--json", "show", &toml_id]);
    show.assert_code(0);
    let meta = &show.json()["meta"];
    assert_eq!(meta["kind"], "scan");
    assert_eq!(
        meta["rules"],
        serde_json::json!([
            {"rule": "strict-equality", "count": 2},
            {"rule": "redundant-parens", "count": 6},
        ])
    );
    repo.fsck();
}

#[test]
fn check_prints_the_diff_and_writes_nothing_then_passes_after_apply() {
    let repo = repo_with_rules();
    repo.write("src/b.js", "if (p == q) {}\n// not committed\n");
    let before = repo.snapshot();

    let check = repo.run(&["scan", "--check"]);
    check.assert_code(1);
    assert!(
        check.stdout.contains("diff --git a/src/a.js b/src/a.js\n"),
        "{}",
        check.stdout
    );
    assert!(
        check.stdout.contains("-if (x == 1) { f(((b))) }\n"),
        "{}",
        check.stdout
    );
    assert!(
        check.stdout.contains("+if (x === 1) { f(b) }\n"),
        "{}",
        check.stdout
    );
    assert!(
        check.stdout.contains("+if (p === q) {}\n"),
        "{}",
        check.stdout
    );
    assert!(check.stderr.contains("would be made"), "{}", check.stderr);
    assert_eq!(repo.snapshot(), before, "--check must not write");
    assert!(repo.astedit_refs().is_empty(), "--check must not stage");

    // --json carries the same diff.
    let json = repo.run(&["--json", "scan", "--check"]);
    json.assert_code(1);
    let v = json.json();
    assert_eq!(v["mode"], "check");
    assert_eq!(v["id"], serde_json::Value::Null);
    assert!(v["diff"]
        .as_str()
        .is_some_and(|d| d.contains("+if (p === q) {}")));

    let apply = repo.run(&["scan", "--apply"]);
    apply.assert_code(1); // files changed: the pre-commit convention
    let id = staged_id(&apply.stderr);
    assert_eq!(repo.read_string("src/a.js"), FIXED_JS);
    assert_eq!(
        repo.read_string("src/b.js"),
        "if (p === q) {}\n// not committed\n"
    );
    assert!(repo.astedit_refs().is_empty(), "applied: no longer pending");

    let again = repo.run(&["scan", "--check"]);
    again.assert_code(0);
    assert_eq!(again.stdout, "");
    assert!(again.stderr.contains("No fixes needed"), "{}", again.stderr);
    repo.run(&["scan", "--apply"]).assert_code(0);

    // And the whole scan is one undoable transaction.
    repo.run(&["undo", &id]).assert_code(0);
    assert_eq!(repo.read_string("src/a.js"), BAD_JS);
    repo.fsck();
}

#[test]
fn a_fix_that_makes_new_matches_converges_in_one_run() {
    let repo = TestRepo::new();
    repo.write("astedit.toml", TOML_RULES);
    // Each fix of `($X)` exposes the next layer, which matched nothing before it.
    repo.write("deep.js", "g(x, ((((((y)))))));\nlet k = (((((w)))));\n");
    repo.commit_all("init");
    let apply = repo.run(&["scan", "--apply"]);
    apply.assert_code(1);
    assert_eq!(repo.read_string("deep.js"), "g(x, y);\nlet k = w;\n");
    assert!(!apply.stderr.contains("still changed"), "{}", apply.stderr);
    repo.run(&["scan", "--check"]).assert_code(0);

    // A bound that is too small is hit, and said.
    repo.write("deep.js", "let k = (((((w)))));\n");
    let bounded = repo.run(&["scan", "--check", "--max-passes", "2"]);
    bounded.assert_code(1);
    assert!(
        bounded
            .stderr
            .contains("rule 'redundant-parens' still changed deep.js after 2 passes"),
        "{}",
        bounded.stderr
    );
    let v = repo
        .run(&["--json", "scan", "--check", "--max-passes", "2"])
        .json();
    assert_eq!(v["unconverged"][0]["rule"], "redundant-parens");
}

#[test]
fn cached_scans_the_staged_content_not_a_later_unstaged_edit() {
    let repo = TestRepo::new();
    repo.write("astedit.toml", TOML_RULES);
    repo.write("src/a.js", "const clean = 1;\n");
    repo.commit_all("init");

    // Staged: a violation. Work tree: fixed again, unstaged.
    repo.write("src/a.js", "if (x == 1) {}\n");
    repo.git(&["add", "src/a.js"]);
    repo.write("src/a.js", "if (x === 1) {}\n");
    repo.run(&["scan", "--check"]).assert_code(0);
    let cached = repo.run(&["scan", "--check", "--cached"]);
    cached.assert_code(1);
    assert!(
        cached
            .stdout
            .contains("-if (x == 1) {}\n+if (x === 1) {}\n"),
        "{}",
        cached.stdout
    );

    // The other way round: staged clean, work tree broken.
    repo.write("src/a.js", "if (x === 1) {}\n");
    repo.git(&["add", "src/a.js"]);
    repo.write("src/a.js", "if (y == 2) {}\n");
    repo.run(&["scan", "--check", "--cached"]).assert_code(0);
    repo.run(&["scan", "--check"]).assert_code(1);
    // Findings too: the staged blob is what is read.
    let report = repo.run(&["scan", "--cached"]);
    report.assert_code(0);
    assert_eq!(report.stdout, "");

    // A new file only in the index is seen; an untracked one is not.
    repo.write("src/new.js", "if (n == 3) {}\n");
    repo.git(&["add", "src/new.js"]);
    repo.write("src/untracked.js", "if (u == 4) {}\n");
    let out = repo.run(&["scan", "--cached"]);
    out.assert_code(1);
    assert_eq!(
        out.stdout,
        "src/new.js:1:5: error[strict-equality]: use === instead of ==\n"
    );
}

#[test]
fn the_installed_hook_blocks_a_commit_the_rules_would_change() {
    let repo = TestRepo::new();
    repo.write("astedit.toml", TOML_RULES);
    repo.write("src/a.js", "const clean = 1;\n");
    repo.commit_all("init");

    let install = repo.run(&["hook", "install"]);
    install.assert_code(0);
    let hook = repo.path().join(".git/hooks/pre-commit");
    let script = std::fs::read_to_string(&hook).expect("hook written");
    assert!(script.contains("scan --check --cached"), "{script}");

    repo.write("src/a.js", "if (x == 1) {}\n");
    repo.git(&["add", "src/a.js"]);
    let blocked = repo.git_output(&["commit", "-q", "-m", "violation"]);
    assert_ne!(blocked.code, 0, "the hook must block the commit");
    let said = format!("{}{}", blocked.stdout, blocked.stderr);
    assert!(said.contains("+if (x === 1) {}"), "{said}");
    assert_eq!(repo.git(&["rev-list", "--count", "HEAD"]).trim(), "1");

    // Fixing the work tree alone is not enough: the hook reads the index.
    repo.run(&["scan", "--apply"]).assert_code(1);
    assert_ne!(
        repo.git_output(&["commit", "-q", "-m", "still staged"])
            .code,
        0
    );
    repo.git(&["add", "src/a.js"]);
    repo.git(&["commit", "-q", "-m", "fixed"]);
    assert_eq!(repo.git(&["rev-list", "--count", "HEAD"]).trim(), "2");

    // Installing again is a no-op; a foreign hook is refused without --force.
    repo.run(&["hook", "install"]).assert_code(0);
    std::fs::write(&hook, "#!/bin/sh\necho team hook\n").expect("write");
    let refused = repo.run(&["hook", "install"]);
    refused.assert_code(4);
    assert!(
        refused.stderr.contains("already exists"),
        "{}",
        refused.stderr
    );
    assert!(refused.stderr.contains("--force"), "{}", refused.stderr);
    assert_eq!(
        std::fs::read_to_string(&hook).expect("read"),
        "#!/bin/sh\necho team hook\n"
    );
    repo.run(&["hook", "install", "--force"]).assert_code(0);
    assert!(std::fs::read_to_string(&hook)
        .expect("read")
        .contains("scan --check --cached"));
    assert_eq!(
        std::fs::read_to_string(repo.path().join(".git/hooks/pre-commit.astedit-backup"))
            .expect("backup"),
        "#!/bin/sh\necho team hook\n"
    );
}

#[test]
fn two_shards_staged_separately_and_merged_equal_one_unsharded_run() {
    let repo = TestRepo::new();
    repo.write("astedit.toml", TOML_RULES);
    for i in 0..12 {
        repo.write(
            &format!("src/f{i}.js"),
            format!("if (v{i} == {i}) {{ (((w{i}))) }}\n"),
        );
    }
    repo.commit_all("init");

    let whole = repo.run(&["scan", "--stage"]);
    whole.assert_code(0);
    let whole_id = staged_id(&whole.stderr);

    let s1 = repo.run(&["scan", "--stage", "--shard", "1/2"]);
    s1.assert_code(0);
    let s2 = repo.run(&["scan", "--stage", "--shard", "2/2"]);
    s2.assert_code(0);
    let (id1, id2) = (staged_id(&s1.stderr), staged_id(&s2.stderr));
    let n1 = repo.git(&[
        "diff",
        "--name-only",
        &format!("refs/astedit/{id1}~"),
        &format!("refs/astedit/{id1}"),
    ]);
    let n2 = repo.git(&[
        "diff",
        "--name-only",
        &format!("refs/astedit/{id2}~"),
        &format!("refs/astedit/{id2}"),
    ]);
    assert!(
        !n1.is_empty() && !n2.is_empty(),
        "both shards have work:\n{n1}\n{n2}"
    );
    assert_eq!(n1.lines().count() + n2.lines().count(), 12);

    // Overlapping previews are refused, naming the paths.
    let overlap = repo.run(&["merge", &id1, &whole_id, "--keep"]);
    overlap.assert_code(2);
    let first = n1.lines().next().unwrap_or_default();
    assert!(overlap.stderr.contains(first), "{}", overlap.stderr);

    let merged = repo.run(&["merge", &id1, &id2]);
    merged.assert_code(0);
    let merged_id = staged_id(&merged.stdout);
    assert_eq!(trees(&repo, &merged_id), trees(&repo, &whole_id));
    // The shards are consumed; the merged preview and the unsharded one stay.
    let mut refs = repo.astedit_refs();
    refs.sort();
    let mut expected = vec![
        format!("refs/astedit/{merged_id}"),
        format!("refs/astedit/{whole_id}"),
    ];
    expected.sort();
    assert_eq!(refs, expected);
    let meta = &repo.run(&["--json", "show", &merged_id]).json()["meta"];
    let whole_meta = &repo.run(&["--json", "show", &whole_id]).json()["meta"];
    assert_eq!(meta["replacements"], whole_meta["replacements"]);
    let mut counts: Vec<(String, u64)> = meta["rules"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|r| {
            (
                r["rule"].as_str().unwrap_or("").to_string(),
                r["count"].as_u64().unwrap_or(0),
            )
        })
        .collect();
    counts.sort();
    assert_eq!(
        counts,
        vec![
            ("redundant-parens".to_string(), 36),
            ("strict-equality".to_string(), 12)
        ]
    );
    repo.fsck();
}

#[test]
fn previews_travel_between_clones_and_merge_there() {
    let origin = TestRepo::new();
    origin.write("astedit.toml", TOML_RULES);
    for i in 0..6 {
        origin.write(&format!("src/f{i}.js"), format!("if (a{i} == 1) {{}}\n"));
    }
    origin.commit_all("init");
    let ci = TestRepo::new();
    ci.git(&["pull", "-q", origin.path().to_str().unwrap_or("."), "main"]);
    let a = origin.run(&["scan", "--stage", "--shard", "1/2"]);
    let b = origin.run(&["scan", "--stage", "--shard", "2/2"]);
    let (ia, ib) = (staged_id(&a.stderr), staged_id(&b.stderr));
    ci.git(&[
        "fetch",
        "-q",
        origin.path().to_str().unwrap_or("."),
        "refs/astedit/*:refs/astedit/*",
    ]);
    let merged = ci.run(&["merge", &ia, &ib]);
    merged.assert_code(0);
    ci.run(&["apply"]).assert_code(0);
    ci.run(&["scan", "--check"]).assert_code(0);
}

#[test]
fn bad_rule_files_name_the_file_the_rule_and_the_field() {
    let repo = TestRepo::new();
    repo.write("src/a.js", "f(1);\n");
    repo.commit_all("init");
    let cases: &[(&str, &str, &[&str])] = &[
        (
            "rules/typo.yml",
            "id: good\nlanguage: js\nrule:\n  pattern: f($A)\n---\nid: typo\nlanguage: js\nrule:\n  pattrn: f($A)\n",
            &["rules/typo.yml:6", "rule 'typo'", "field 'rule'", "pattrn"],
        ),
        (
            "rules/lang.yml",
            "id: lang\nlanguage: klingon\nrule:\n  pattern: f($A)\n",
            &["rules/lang.yml:1", "rule 'lang'", "field 'language'", "klingon"],
        ),
        (
            "rules/fix.yml",
            "id: fixvar\nlanguage: js\nrule:\n  pattern: f($A)\nfix: g($B)\n",
            &["rule 'fixvar'", "field 'fix'", "`B`"],
        ),
        (
            "rules/kind.yml",
            "id: kind\nlanguage: js\nrule:\n  kind: no_such_kind\n",
            &["rule 'kind'", "field 'rule'", "no_such_kind"],
        ),
        (
            "rules/key.yml",
            "id: key\nlanguage: js\nrule:\n  pattern: f($A)\nmesage: hi\n",
            &["rule 'key'", "field 'mesage'", "did you mean 'message'"],
        ),
        (
            "rules/sev.yml",
            "id: sev\nlanguage: js\nseverity: fatal\nrule:\n  pattern: f($A)\n",
            &["rule 'sev'", "field 'severity'", "fatal"],
        ),
        (
            "rules/glob.yml",
            "id: glob\nlanguage: js\nrule:\n  pattern: f($A)\nfiles: ['src/[']\n",
            &["rule 'glob'", "field 'files'"],
        ),
        (
            "rules/noid.yml",
            "language: js\nrule:\n  pattern: f($A)\n",
            &["rules/noid.yml", "rule '#1'", "field 'id'"],
        ),
        (
            "rules/syntax.yml",
            "id: x\nrule: [\n",
            &["rules/syntax.yml", "line 2"],
        ),
        (
            "bad.toml",
            "[[rules]]\nid = \"t\"\nlanguage = \"js\"\nrule.patern = \"f($A)\"\n",
            &["bad.toml:2", "rule 't'", "field 'rule'", "patern"],
        ),
        (
            "dup.toml",
            "[[rules]]\nid = \"d\"\nlanguage = \"js\"\nrule.pattern = \"f($A)\"\n[[rules]]\nid = \"d\"\nlanguage = \"js\"\nrule.pattern = \"g($A)\"\n",
            &["rule 'd'", "field 'id'", "already used"],
        ),
    ];
    for (file, text, expected) in cases {
        repo.write(file, text);
        let out = repo.run(&["scan", "--config", file]);
        out.assert_code(2);
        for needle in *expected {
            assert!(
                out.stderr.contains(needle),
                "{file}: expected {needle:?} in:\n{}",
                out.stderr
            );
        }
        let json = repo.run(&["--json", "scan", "--config", file]);
        json.assert_code(2);
        let code = json.json()["error"]["code"].as_str().map(str::to_string);
        assert!(
            matches!(code.as_deref(), Some("bad-rule" | "bad-rule-file")),
            "{file}: {code:?}"
        );
    }

    // No config at all: exit 2 with a hint.
    let none = repo.run(&["scan"]);
    none.assert_code(2);
    assert!(none.stderr.contains("astedit.toml"), "{}", none.stderr);
    // A missing --config file, and a bad shard.
    repo.run(&["scan", "--config", "nope.toml"]).assert_code(2);
    repo.write("astedit.toml", TOML_RULES);
    repo.run(&["scan", "--shard", "3/2"]).assert_code(2);
    repo.run(&["scan", "--rule-id", "nope"]).assert_code(2);
}

#[test]
fn the_example_rules_in_fixtures_load_and_work() {
    let repo = TestRepo::new();
    let example = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/astedit.toml"),
    )
    .expect("fixtures/astedit.toml");
    repo.write("astedit.toml", &example);
    repo.write(
        "src/lib.rs",
        "fn f(v: Vec<u8>) -> bool {\n    v.first().unwrap();\n    v.len() == 0\n}\n#[test]\nfn t() {\n    Some(1).unwrap();\n}\n",
    );
    repo.write("src/a.ts", "var a = 1;\n");
    repo.write("src/vendor/b.ts", "var b = 1;\n");
    repo.write("a.py", "if x == None:\n    pass\n");
    repo.commit_all("init");
    let out = repo.run(&["scan"]);
    out.assert_code(1);
    assert_eq!(
        out.stdout,
        "a.py:1:4: error[none-comparison]: compare with None using 'is', not '=='\n\
         src/a.ts:1:1: warning[no-var]: use let or const instead of var\n\
         src/lib.rs:2:5: warning[no-unwrap-outside-tests]: unwrap() panics on v.first()'s error; return the error or use expect(\"why\")\n\
         src/lib.rs:3:5: warning[len-zero]: use v.is_empty() instead of comparing len() with 0\n"
    );
    repo.run(&["scan", "--apply"]).assert_code(1);
    assert!(repo
        .read_string("src/lib.rs")
        .contains("    v.is_empty()\n"));
    assert_eq!(repo.read_string("a.py"), "if x is None:\n    pass\n");
    // What is left is a finding for a person, not an error: the check passes.
    repo.run(&["scan", "--check"]).assert_code(0);
}

/// A Python environment with pre-commit, made once per target folder; `None` (and a
/// message) when it cannot be installed, e.g. offline.
pub(crate) fn pre_commit() -> Option<PathBuf> {
    let venv = Path::new(env!("CARGO_TARGET_TMPDIR")).join("pre-commit-venv");
    let exe = venv.join("bin/pre-commit");
    if exe.is_file() {
        return Some(exe);
    }
    let _ = std::fs::create_dir_all(env!("CARGO_TARGET_TMPDIR"));
    let lock = Path::new(env!("CARGO_TARGET_TMPDIR")).join("pre-commit-venv.lock");
    // Tests run in parallel; one of them installs, the others wait for it.
    for _ in 0..600 {
        if exe.is_file() {
            return Some(exe);
        }
        if std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&lock)
            .is_ok()
        {
            break;
        }
        // A lock left by a killed run: take it over.
        let stale = std::fs::metadata(&lock)
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.elapsed().ok())
            .is_some_and(|age| age.as_secs() > 900);
        if stale {
            let _ = std::fs::remove_file(&lock);
        }
        std::thread::sleep(std::time::Duration::from_millis(500));
    }
    let ok = Command::new("python3")
        .args(["-m", "venv"])
        .arg(&venv)
        .status()
        .is_ok_and(|s| s.success())
        && Command::new(venv.join("bin/pip"))
            .args(["install", "-q", "--disable-pip-version-check", "pre-commit"])
            .status()
            .is_ok_and(|s| s.success());
    let _ = std::fs::remove_file(&lock);
    if ok && exe.is_file() {
        Some(exe)
    } else {
        eprintln!("skipped: pre-commit could not be installed from PyPI");
        None
    }
}

#[test]
fn the_pre_commit_framework_runs_the_hook_definition() {
    let Some(pre_commit) = pre_commit() else {
        return;
    };
    let repo = repo_with_rules();
    let bin_dir = crate::util::bin()
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default();
    let path = format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let cache = tempfile::tempdir().expect("tempdir");
    let try_repo = |hook: &str| {
        let out = Command::new(&pre_commit)
            .args(["try-repo", env!("CARGO_MANIFEST_DIR"), hook, "--all-files"])
            .current_dir(repo.path())
            .env("PATH", &path)
            .env("PRE_COMMIT_HOME", cache.path())
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_AUTHOR_NAME", "T")
            .env("GIT_AUTHOR_EMAIL", "t@example.com")
            .env("GIT_COMMITTER_NAME", "T")
            .env("GIT_COMMITTER_EMAIL", "t@example.com")
            .output()
            .expect("run pre-commit");
        (
            out.status.code().unwrap_or(-1),
            format!(
                "{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            ),
        )
    };

    // On committed code, the hooks of the lines being committed have nothing to say.
    let (code, text) = try_repo("astedit-check");
    assert_eq!(code, 0, "{text}");
    let (code, text) = try_repo("astedit-scan");
    assert_eq!(code, 0, "{text}");
    assert_eq!(repo.read_string("src/a.js"), BAD_JS);

    // The check of whole files fails with the diff and changes nothing.
    let (code, text) = try_repo("astedit-check-all");
    assert_eq!(code, 1, "{text}");
    assert!(text.contains("+if (x === 1) { f(b) }"), "{text}");
    assert_eq!(repo.read_string("src/a.js"), BAD_JS);

    // The fixing hook fails (it changed files), then everything passes.
    let (code, text) = try_repo("astedit-scan-all");
    assert_eq!(code, 1, "{text}");
    assert_eq!(repo.read_string("src/a.js"), FIXED_JS);
    let (code, text) = try_repo("astedit-check-all");
    assert_eq!(code, 0, "{text}");
    let (code, text) = try_repo("astedit-scan-all");
    assert_eq!(code, 0, "{text}");
}

#[test]
fn an_ast_grep_project_with_rule_and_util_folders_works_unchanged() {
    let repo = TestRepo::new();
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/scan");
    for file in [
        "sgconfig.yml",
        "rules/no-console-in-functions.yml",
        "rules/strict-equality.yml",
        "utils/console-call.yml",
    ] {
        let text = std::fs::read_to_string(fixture.join(file)).expect("fixture");
        repo.write(file, text);
    }
    repo.write(
        "app.js",
        "console.log(1);\nfunction f(a) {\n  console.warn(a == 2);\n}\n",
    );
    repo.commit_all("init");
    // Found at the root without --config.
    let out = repo.run(&["scan"]);
    out.assert_code(1);
    assert_eq!(
        out.stdout,
        "app.js:3:3: warning[no-console-in-functions]: console output left in a function\n\
         app.js:3:16: error[strict-equality]: use === instead of ==\n"
    );
    repo.run(&["scan", "--apply"]).assert_code(1);
    assert_eq!(
        repo.read_string("app.js"),
        "console.log(1);\nfunction f(a) {\n  console.warn(a === 2);\n}\n"
    );
    repo.run(&["scan", "--check"]).assert_code(0);
}

/// Files no rule can match in are read but not parsed (so their parse errors are not
/// reported); a rule that needs no text (`kind` only) parses every file.
#[test]
fn files_no_rule_can_match_are_not_parsed() {
    let repo = TestRepo::new();
    repo.write(
        "astedit.toml",
        r#"
[[rules]]
id = "no-foo"
language = "javascript"
message = "foo"
rule.pattern = "foo($A)"
"#,
    );
    repo.write("x.js", "let x = (;\n");
    repo.write("y.js", "foo(1);\nlet y = (;\n");
    repo.commit_all("init");
    let out = repo.run(&["--json", "scan"]);
    out.assert_code(0);
    let v = out.json();
    assert_eq!(v["files_searched"], 2, "{v}");
    assert_eq!(v["findings"].as_array().map(Vec::len), Some(1), "{v}");
    assert_eq!(v["findings"][0]["path"], "y.js", "{v}");
    assert_eq!(
        v["parse_errors"]["paths"],
        serde_json::json!(["y.js"]),
        "{v}"
    );

    repo.write(
        "astedit.toml",
        r#"
[[rules]]
id = "numbers"
language = "javascript"
message = "a number"
rule.kind = "number"
"#,
    );
    let out = repo.run(&["--json", "scan"]);
    out.assert_code(0);
    let v = out.json();
    assert_eq!(v["findings"].as_array().map(Vec::len), Some(1), "{v}");
    assert_eq!(
        v["parse_errors"]["paths"],
        serde_json::json!(["x.js", "y.js"]),
        "{v}"
    );
}

#[test]
fn scan_apply_verify_applies_only_fixes_that_pass() {
    let repo = repo_with_rules();
    let before = repo.snapshot();
    // A failing check: exit 1 verify-failed, nothing written, the fixes kept as a
    // pending preview the error names.
    let out = repo.run(&[
        "--json",
        "scan",
        "--apply",
        "--verify",
        "echo checked; grep -q '(x == 1)' src/a.js",
    ]);
    out.assert_code(1);
    let err = out.json();
    assert_eq!(err["error"]["code"], "verify-failed", "{err}");
    assert_eq!(err["error"]["details"]["output"], "checked\n");
    let id = err["error"]["details"]["id"]
        .as_str()
        .expect("id")
        .to_string();
    assert_eq!(repo.astedit_refs(), vec![format!("refs/astedit/{id}")]);
    assert_eq!(repo.snapshot(), before);
    repo.run(&["discard", &id]).assert_code(0);
    // --verify goes with --apply only.
    repo.run(&["scan", "--stage", "--verify", "true"])
        .assert_code(2);
    // A passing check: applied, the check in the report.
    let out = repo.run(&[
        "--json",
        "scan",
        "--apply",
        "--verify",
        "grep -q '(x === 1)' src/a.js",
        "--verify-timeout",
        "60",
    ]);
    out.assert_code(1); // files changed: the pre-commit convention
    let v = out.json();
    assert_eq!(v["verified"]["passed"], true, "{v}");
    assert_eq!(v["applied"], true);
    crate::contract::validate(&repo, "scan", &v);
    assert_eq!(repo.read_string("src/a.js"), FIXED_JS);
    assert!(repo.astedit_refs().is_empty());
    let text = repo.run(&["undo"]);
    text.assert_code(0);
    let out = repo.run(&["scan", "--apply", "--verify", "true"]);
    out.assert_code(1);
    assert!(
        out.stderr.contains("passed: `true` exited 0"),
        "{}",
        out.stderr
    );
    repo.fsck();
}
