//! An ast-grep project's `sgconfig.yml` beyond its rules: `languageGlobs`. The
//! expected findings are what ast-grep 0.51.1 reports on the same files.

use crate::suppress::findings;
use crate::util::TestRepo;

fn project() -> TestRepo {
    let repo = TestRepo::new();
    repo.write(
        "sgconfig.yml",
        "ruleDirs: [rules]\nlanguageGlobs:\n  c: [\"*.blk\"]\n  typescript: [\"*.js\"]\n",
    );
    repo.write(
        "rules/c.yml",
        "id: no-goto\nlanguage: C\nseverity: error\nmessage: no goto\nrule: {kind: goto_statement}\n",
    );
    repo.write(
        "rules/ts.yml",
        "id: no-any\nlanguage: TypeScript\nseverity: warning\nmessage: no any\n\
         rule: {pattern: 'let $A: any = $B'}\nfix: 'let $A: unknown = $B'\n",
    );
    repo.write("src/a.blk", "int f() { goto out; out: return 0; }\n");
    repo.write("b.c", "int g() { goto x; x: return 1; }\n");
    // `let a: any` is not JavaScript: only as TypeScript does the rule find it.
    repo.write("src/x.js", "let a: any = 1;\n");
    repo.write("y.ts", "let b: any = 2;\n");
    repo.commit_all("project");
    repo
}

#[test]
fn language_globs_give_files_their_language() {
    let repo = project();
    let expected = [
        "b.c no-goto 1:11 error",
        "src/a.blk no-goto 1:11 error",
        "src/x.js no-any 1:1 warning",
        "y.ts no-any 1:1 warning",
    ];
    let out = repo.run(&["--json", "scan"]);
    out.assert_code(1);
    assert_eq!(findings(&out.json()), expected);
    assert!(!out.stderr.contains("not supported"), "{}", out.stderr);
    // The staged blobs are read by the same globs.
    assert_eq!(
        findings(&repo.run(&["--json", "scan", "--cached"]).json()),
        expected
    );
    // Fixes reach the glob-mapped file too.
    repo.run(&["scan", "--apply"]).assert_code(1);
    // (The match is the whole declaration, `;` included, as in ast-grep.)
    assert_eq!(repo.read_string("src/x.js"), "let a: unknown = 1\n");
}

#[test]
fn bad_language_globs_are_refused_with_the_key() {
    let repo = project();
    repo.write(
        "sgconfig.yml",
        "ruleDirs: [rules]\nlanguageGlobs:\n  klingon: [\"*.kl\"]\n",
    );
    let out = repo.run(&["--json", "scan"]);
    out.assert_code(2);
    let message = out.json()["error"]["message"]
        .as_str()
        .unwrap_or("")
        .to_string();
    assert!(message.contains("languageGlobs"), "{message}");
    repo.write(
        "sgconfig.yml",
        "ruleDirs: [rules]\nlanguageGlobs:\n  c: [\"[\"]\n",
    );
    repo.run(&["scan"]).assert_code(2);
}
