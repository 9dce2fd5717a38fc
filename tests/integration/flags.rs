//! The `scan` flags ast-grep users type: `-c`, `-r FILE`, `--filter`, severity
//! overrides, `--max-results`; and what to type instead where the meaning differs.

use crate::suppress::findings;
use crate::util::TestRepo;

const NO_VAR: &str = "id: no-var\nlanguage: TypeScript\nseverity: error\nmessage: use let\n\
                      rule: {pattern: 'var $A = $B'}\nfix: 'let $A = $B'\n";
const NO_LOG: &str = "id: no-log\nlanguage: TypeScript\nseverity: warning\nmessage: no log\n\
                      rule: {pattern: 'console.log($$$A)'}\n";

fn project() -> TestRepo {
    let repo = TestRepo::new();
    repo.write("sgconfig.yml", "ruleDirs: [rules]\n");
    repo.write("rules/no-var.yml", NO_VAR);
    repo.write("rules/no-log.yml", NO_LOG);
    repo.write(
        "a.ts",
        "var a = 1;\nconsole.log(a);\n// ast-grep-ignore: no-eval\nvar b = 2;\n",
    );
    repo.commit_all("project");
    repo
}

fn scan(repo: &TestRepo, args: &[&str]) -> Vec<String> {
    let mut full = vec!["--json", "scan"];
    full.extend_from_slice(args);
    findings(&repo.run(&full).json())
}

#[test]
fn rule_files_ids_and_filters() {
    let repo = project();
    // -r FILE runs that file's rules only.
    let only_log = scan(&repo, &["-r", "rules/no-log.yml"]);
    assert!(
        only_log.iter().all(|f| !f.contains("no-var")),
        "{only_log:?}"
    );
    assert!(only_log.iter().any(|f| f.contains("no-log")));
    // -c is --config.
    assert_eq!(scan(&repo, &["-c", "sgconfig.yml"]), scan(&repo, &[]));
    // --rule with an id says what to type instead.
    let out = repo.run(&["--json", "scan", "--rule", "no-var"]);
    out.assert_code(2);
    let message = out.json()["error"]["message"]
        .as_str()
        .unwrap_or("")
        .to_string();
    assert!(message.contains("--rule-id no-var"), "{message}");
    // --rule-id and --filter select by id.
    let by_id = scan(&repo, &["--rule-id", "no-var"]);
    assert_eq!(by_id, ["a.ts no-var 1:1 error", "a.ts no-var 4:1 error"]);
    assert_eq!(scan(&repo, &["--filter", "^no-v"]), by_id);
    repo.run(&["scan", "--filter", "^zzz"]).assert_code(2);
    repo.run(&["scan", "--filter", "("]).assert_code(2);
}

#[test]
fn severity_overrides_and_max_results() {
    let repo = project();
    assert_eq!(
        scan(&repo, &[]),
        [
            "a.ts no-var 1:1 error",
            "a.ts no-log 2:1 warning",
            "a.ts unused-suppression 3:1 hint",
            "a.ts no-var 4:1 error",
        ]
    );
    // Every rule a warning: no error, exit 0.
    let out = repo.run(&["--json", "scan", "--warning"]);
    out.assert_code(0);
    assert!(findings(&out.json())
        .iter()
        .all(|f| f.ends_with(" warning")));
    // One rule off, another an error; the unused comment an error too.
    assert_eq!(
        scan(
            &repo,
            &["--off=no-var", "--error=no-log,unused-suppression"]
        ),
        ["a.ts no-log 2:1 error", "a.ts unused-suppression 3:1 error"]
    );
    // --off=unused-suppression silences the judgement.
    assert_eq!(scan(&repo, &["--off=unused-suppression"]).len(), 3);
    // --max-results keeps the first N and says how many more.
    let out = repo.run(&["--json", "scan", "--max-results", "1"]);
    let v = out.json();
    assert_eq!(findings(&v), ["a.ts no-var 1:1 error"]);
    // The exit code still counts every error.
    out.assert_code(1);
    let text = repo.run(&["scan", "--max-results", "1"]);
    assert!(
        text.stderr
            .contains("3 more findings not shown (--max-results 1)"),
        "{}",
        text.stderr
    );
}
