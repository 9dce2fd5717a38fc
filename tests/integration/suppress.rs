//! Suppression comments (`ast-grep-ignore`) in `scan`: every form ast-grep honours,
//! unused ones reported, and silenced sites never fixed. The expected findings are
//! what ast-grep 0.51.1 reports on the same files.

use crate::util::TestRepo;

const NO_VAR: &str = "id: no-var\nlanguage: TypeScript\nseverity: error\nmessage: use let\n\
                      rule: {pattern: 'var $A = $B'}\nfix: 'let $A = $B'\n";
const NO_LOG: &str = "id: no-log\nlanguage: TypeScript\nseverity: warning\nmessage: no log\n\
                      rule: {pattern: 'console.log($$$A)'}\n";

const A_TS: &str = "// ast-grep-ignore
var a = 1;
var b = 2; // ast-grep-ignore: no-var
var c = 3; // ast-grep-ignore: no-log
/* ast-grep-ignore: no-log, no-var */
var d = console.log(1);
// ast-grep-ignore: other-rule
var e = 5;
console.log(2); // ast-grep-ignore
var f = f(
  1,
); // ast-grep-ignore
// see ast-grep-ignore for details
var g = 7;
";

fn project() -> TestRepo {
    let repo = TestRepo::new();
    repo.write("sgconfig.yml", "ruleDirs: [rules]\n");
    repo.write("rules/no-var.yml", NO_VAR);
    repo.write("rules/no-log.yml", NO_LOG);
    repo.write("a.ts", A_TS);
    // First line, then a blank line: the whole file, for the rule it names.
    repo.write(
        "b.ts",
        "// ast-grep-ignore: no-var\n\nvar x = 1;\nconsole.log(x);\n",
    );
    // Not on the first line: it covers the line after it, which is blank, so it
    // silences nothing and is unused.
    repo.write("c.ts", "var y = 1;\n// ast-grep-ignore\n\nlet z = 2;\n");
    repo.commit_all("project");
    repo
}

/// A scan report's findings as `path rule line:column severity`.
pub(crate) fn findings(v: &serde_json::Value) -> Vec<String> {
    v["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .map(|f| {
            format!(
                "{} {} {}:{} {}",
                f["path"].as_str().unwrap_or(""),
                f["rule"].as_str().unwrap_or(""),
                f["line"],
                f["column"],
                f["severity"].as_str().unwrap_or("")
            )
        })
        .collect()
}

#[test]
fn findings_are_ast_greps() {
    let repo = project();
    let out = repo.run(&["--json", "scan"]);
    out.assert_code(1);
    assert_eq!(
        findings(&out.json()),
        [
            "a.ts no-var 4:1 error",
            "a.ts unused-suppression 4:12 hint",
            "a.ts unused-suppression 7:1 hint",
            "a.ts no-var 8:1 error",
            "a.ts no-var 14:1 error",
            "b.ts no-log 4:1 warning",
            "c.ts no-var 1:1 error",
            "c.ts unused-suppression 2:1 hint",
        ]
    );
    let text = repo.run(&["scan"]);
    assert!(
        text.stdout.contains("Unused 'ast-grep-ignore' directive."),
        "{}",
        text.stdout
    );
    // With rules selected, a comment meant for another rule is not judged.
    let only = repo.run(&["--json", "scan", "--rule-id", "no-var"]).json();
    assert!(findings(&only)
        .iter()
        .all(|f| !f.contains("unused-suppression")));
    assert_eq!(findings(&only).len(), 4);
}

#[test]
fn silenced_sites_are_never_fixed() {
    let repo = project();
    repo.run(&["scan", "--apply"]).assert_code(1);
    assert_eq!(
        repo.read_string("a.ts"),
        A_TS.replace("var c = 3;", "let c = 3")
            .replace("var e = 5;", "let e = 5")
            .replace("var g = 7;", "let g = 7")
    );
    assert_eq!(
        repo.read_string("b.ts"),
        "// ast-grep-ignore: no-var\n\nvar x = 1;\nconsole.log(x);\n"
    );
    // What is left is silenced: the check passes.
    repo.write("c.ts", "let y = 1;\n");
    repo.run(&["scan", "--check"]).assert_code(0);
}

#[test]
fn a_file_silenced_for_every_rule_reports_nothing() {
    let repo = TestRepo::new();
    repo.write("sgconfig.yml", "ruleDirs: [rules]\n");
    repo.write("rules/no-var.yml", NO_VAR);
    repo.write("a.ts", "// ast-grep-ignore\n\nvar a = 1;\nvar b = 2;\n");
    repo.commit_all("x");
    let v = repo.run(&["--json", "scan", "--check"]);
    v.assert_code(0);
    assert_eq!(findings(&v.json()).len(), 0);
}
