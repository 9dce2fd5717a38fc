//! Our rule keys where ast-grep reads past them (issue 51, item 2): `imports:` and
//! `edits:` under a rule's `metadata: {astedit: …}` leave the project an ast-grep
//! project (`ast-grep test` and `ast-grep scan` pass on it unchanged) and still fix the
//! imports and the captured nodes here. The top-level form keeps working, with a
//! warning where an `sgconfig.yml` exists, once per content of the rule file.
//!
//! The ast-grep half needs ast-grep 0.51.1 (`ASTEDIT_AST_GREP`, else `ast-grep` on
//! PATH); without one it is skipped with a message, unless ASTEDIT_REQUIRE_AST_GREP is set.

use crate::util::TestRepo;

/// The guide's `await-fetch` rule without our keys.
const RULE: &str = r#"id: await-fetch
language: typescript
severity: warning
message: fetchSync blocks the event loop
rule:
  pattern: fetchSync($A)
  inside:
    kind: function_declaration
    pattern: $FN
    stopBy: end
fix: await fetchAsync($A)
"#;

/// Our keys, at the top level of the rule when `indent` is empty.
fn keys(indent: &str) -> String {
    [
        "imports:",
        "  add: ['import { fetchAsync } from \"./net\"']",
        "  remove: [fetchSync]",
        "edits:",
        "  - target: $FN",
        "    fix: async $FN",
    ]
    .iter()
    .map(|l| format!("{indent}{l}\n"))
    .collect()
}

/// The rule in the documented form: our keys under `metadata.astedit`.
fn documented() -> String {
    format!("{RULE}metadata:\n  astedit:\n{}", keys("    "))
}

/// The rule in the older form: our keys at the top level, which ast-grep refuses.
fn top_level() -> String {
    format!("{RULE}{}", keys(""))
}

const SOURCE: &str =
    "import { fetchSync } from \"./net\";\n\nfunction load() {\n  return fetchSync(1);\n}\n";
const FIXED: &str = "import { fetchAsync } from \"./net\";\n\nasync function load() {\n  return await fetchAsync(1);\n}\n";

/// An ast-grep project (sgconfig.yml, rules, rule tests) holding `rule`.
fn project(rule: &str) -> TestRepo {
    let repo = TestRepo::new();
    repo.write(
        "sgconfig.yml",
        "ruleDirs:\n- rules\ntestConfigs:\n- testDir: rule-tests\n",
    );
    repo.write("rules/await-fetch.yml", rule);
    repo.write(
        "rule-tests/await-fetch-test.yml",
        "id: await-fetch\nvalid:\n  - \"function f() { return fetchAsync(1) }\"\ninvalid:\n  - \"function f() { return fetchSync(1) }\"\n",
    );
    repo.write("src/a.ts", SOURCE);
    repo.commit_all("init");
    repo
}

fn ast_grep(repo: &TestRepo, ast_grep: &std::path::Path, args: &[&str]) -> std::process::Output {
    std::process::Command::new(ast_grep)
        .args(args)
        .current_dir(repo.path())
        .output()
        .expect("run ast-grep")
}

#[test]
fn a_project_in_the_documented_form_passes_ast_grep_and_gets_our_imports_and_edits() {
    let repo = project(&documented());
    if let Some(sg) = crate::lsp_astgrep::ast_grep_or_skip() {
        // ast-grep writes the invalid case's snapshot, then its test passes, and its
        // scan reports the finding with the rule's own fix (our keys unread).
        let wrote = ast_grep(&repo, &sg, &["test", "-U"]);
        assert!(wrote.status.success(), "{wrote:?}");
        let test = ast_grep(&repo, &sg, &["test"]);
        assert!(test.status.success(), "{test:?}");
        let scan = ast_grep(&repo, &sg, &["scan", "--json=compact"]);
        assert!(scan.status.success(), "{scan:?}");
        let found: serde_json::Value = serde_json::from_slice(&scan.stdout).unwrap();
        assert_eq!(found[0]["ruleId"], "await-fetch", "{found}");
        assert_eq!(found[0]["replacement"], "await fetchAsync(1)", "{found}");
        assert_eq!(repo.read_string("src/a.ts"), SOURCE, "ast-grep scan wrote");
        // Our test reads the snapshot ast-grep wrote and agrees.
        repo.run(&["test"]).assert_code(0);
    }
    let out = repo.run(&["scan", "--apply"]);
    assert!(out.stderr.contains("staged and applied"), "{}", out.stderr);
    assert!(!out.stderr.contains("top level"), "{}", out.stderr);
    assert_eq!(repo.read_string("src/a.ts"), FIXED);
}

#[test]
fn the_top_level_form_is_read_and_warned_about_once_per_content_where_an_sgconfig_exists() {
    let repo = project(&top_level());
    let first = repo.run(&["scan"]);
    first.assert_code(0);
    let warning = "rules/await-fetch.yml: `imports:`/`edits:` at a rule's top level make ast-grep refuse this project";
    assert!(first.stderr.contains(warning), "{}", first.stderr);
    let again = repo.run(&["scan", "--no-cache"]);
    again.assert_code(0);
    assert!(!again.stderr.contains("top level"), "{}", again.stderr);
    assert_eq!(again.stdout, first.stdout);
    // Another content of the file is warned about again.
    repo.write(
        "rules/await-fetch.yml",
        top_level().replace("blocks", "still blocks"),
    );
    let edited = repo.run(&["scan"]);
    assert!(edited.stderr.contains(warning), "{}", edited.stderr);
    // The top-level keys are still ours.
    repo.run(&["scan", "--apply"]);
    assert_eq!(repo.read_string("src/a.ts"), FIXED);
}

#[test]
fn the_top_level_form_is_not_warned_about_where_ast_grep_never_reads_the_project() {
    let repo = TestRepo::new();
    repo.write("astedit.toml", "rule-files = [\"rules\"]\n");
    repo.write("rules/await-fetch.yml", top_level());
    repo.write("src/a.ts", SOURCE);
    repo.commit_all("init");
    let out = repo.run(&["scan", "--apply"]);
    assert!(!out.stderr.contains("top level"), "{}", out.stderr);
    assert_eq!(repo.read_string("src/a.ts"), FIXED);
}

#[test]
fn a_key_in_both_places_or_unknown_under_metadata_astedit_is_refused() {
    let both = project(&documented().replace(
        "metadata:\n",
        "imports: {add: ['import x from \"x\"']}\nmetadata:\n",
    ));
    let out = both.run(&["scan"]);
    out.assert_code(2);
    insta::assert_snapshot!(out.stderr, @"error: bad rule file rules/await-fetch.yml:1: rule 'await-fetch', field 'imports': given twice, at the top level and under metadata.astedit; keep metadata.astedit.imports (ast-grep refuses the top-level key)");
    let unknown = project(&documented().replace("    edits:\n", "    edit:\n"));
    let out = unknown.run(&["scan"]);
    out.assert_code(2);
    insta::assert_snapshot!(out.stderr, @"error: bad rule file rules/await-fetch.yml:1: rule 'await-fetch', field 'metadata.astedit.edit': unknown field; did you mean 'edits'?");
}
