//! Code embedded in HTML (`<script>`, `<style>`): found and fixed in place by `scan`,
//! as ast-grep's language injections, with positions in the host file.

use crate::suppress::findings;
use crate::util::TestRepo;

const PAGE: &str = "<html>\n<head><style>\n  p { color: red; }\n</style></head>\n<body>\n  \
                    <script>var a = 1;\n    var b = 2;\n  </script>\n  \
                    <script lang=\"ts\">var c: number = 3;</script>\n</body>\n</html>\n";

fn project() -> TestRepo {
    let repo = TestRepo::new();
    repo.write("sgconfig.yml", "ruleDirs: [rules]\n");
    repo.write(
        "rules/no-var.yml",
        "id: no-var\nlanguage: JavaScript\nseverity: error\nmessage: use let\n\
         rule: {pattern: 'var $A = $B'}\nfix: 'let $A = $B'\n",
    );
    repo.write(
        "rules/ts-var.yml",
        "id: ts-var\nlanguage: TypeScript\nseverity: warning\nmessage: ts var\n\
         rule: {pattern: 'var $A: $T = $B'}\n",
    );
    repo.write(
        "rules/no-red.yml",
        "id: no-red\nlanguage: Css\nseverity: warning\nmessage: no red\n\
         rule: {kind: plain_value, regex: '^red$'}\nfix: blue\n",
    );
    repo.write("a.html", PAGE);
    repo.commit_all("page");
    repo
}

#[test]
fn script_and_style_blocks_are_scanned_with_host_positions() {
    let repo = project();
    let out = repo.run(&["--json", "scan"]);
    out.assert_code(1);
    // ast-grep 0.51.1 reports the two `var`s at 6:11 and 7:5 (0-based 5:10 and 6:4).
    assert_eq!(
        findings(&out.json()),
        [
            "a.html no-red 3:14 warning",
            "a.html no-var 6:11 error",
            "a.html no-var 7:5 error",
            "a.html ts-var 9:21 warning",
        ]
    );
    let v = out.json();
    assert_eq!(v["findings"][1]["text"], "var a = 1;");
    assert_eq!(v["findings"][1]["end_line"], 6);
    assert_eq!(v["findings"][1]["end_column"], 21);
}

#[test]
fn fixes_in_embedded_code_are_written_in_place_and_undone() {
    let repo = project();
    let out = repo.run(&["--json", "scan", "--apply"]);
    out.assert_code(1);
    let fixed = "<html>\n<head><style>\n  p { color: blue; }\n</style></head>\n<body>\n  \
                 <script>let a = 1\n    let b = 2\n  </script>\n  \
                 <script lang=\"ts\">var c: number = 3;</script>\n</body>\n</html>\n";
    assert_eq!(repo.read_string("a.html"), fixed);
    // What is left is the unfixable TypeScript finding, where it is.
    let v = out.json();
    let left: Vec<String> = v["remaining"]
        .as_array()
        .expect("remaining")
        .iter()
        .map(|f| format!("{} {}:{}", f["rule"], f["line"], f["column"]))
        .collect();
    assert_eq!(left, ["\"ts-var\" 9:21"]);
    repo.run(&["scan", "--check"]).assert_code(0);
    // One transaction, undone as one.
    repo.run(&["undo"]).assert_code(0);
    assert_eq!(repo.read_string("a.html"), PAGE);
}

#[test]
fn a_styled_template_declared_in_language_injections_is_scanned_and_fixed() {
    let repo = project();
    repo.write(
        "sgconfig.yml",
        "ruleDirs: [rules]\nlanguageInjections:\n- hostLanguage: js\n  rule:\n    \
         pattern: styled.$TAG`$CONTENT`\n  injected: css\n",
    );
    let source = "const Button = styled.button`\n  color: red;\n  margin: 0;\n`;\n\
                  const x = `color: red;`;\n";
    repo.write("s.js", source);
    // As ast-grep 0.51.1: the CSS of the styled template only, at 2:10.
    let out = repo.run(&["--json", "scan", "s.js"]);
    assert_eq!(findings(&out.json()), ["s.js no-red 2:10 warning"]);
    repo.run(&["scan", "--apply", "s.js"]).assert_code(1);
    assert_eq!(
        repo.read_string("s.js"),
        source.replacen("color: red", "color: blue", 1)
    );
    // A bad entry is a config error, naming it.
    repo.write(
        "sgconfig.yml",
        "ruleDirs: [rules]\nlanguageInjections:\n- hostLanguage: nosuch\n  rule: {kind: x}\n  \
         injected: css\n",
    );
    let out = repo.run(&["--json", "scan"]);
    out.assert_code(2);
    assert!(
        out.json()["error"]
            .to_string()
            .contains("languageInjections"),
        "{}",
        out.stdout
    );
}

#[test]
fn grep_with_a_language_searches_its_code_embedded_in_html_at_host_positions() {
    let repo = project();
    repo.write("b.js", "var z = 1;\n");
    repo.commit_all("js");
    // As `ast-grep run -l js`: the script blocks of a.html too, with host lines.
    let out = repo.run(&["grep", "-p", "var $A = $B", "-l", "js"]);
    out.assert_code(0);
    assert_eq!(
        out.stdout,
        "a.html:6:11: var a = 1;\na.html:7:5: var b = 2;\nb.js:1:1: var z = 1;\n"
    );
    let out = repo.run(&["--json", "grep", "-p", "var $A = $B", "-l", "js"]);
    let m = &out.json()["matches"][0];
    assert_eq!(m["path"], "a.html");
    assert_eq!(m["lang"], "JavaScript");
    // Byte offsets are the host file's.
    let start = m["start_byte"].as_u64().expect("start") as usize;
    assert_eq!(&PAGE[start..start + 10], "var a = 1;");
    assert_eq!(m["meta_variables"]["single"]["A"]["line"], 6);
    // CSS in <style>.
    let out = repo.run(&["grep", "-p", "color: $C;", "-l", "css"]);
    out.assert_code(0);
    assert_eq!(out.stdout, "a.html:3:7: color: red;\n");
    // Without -l, files are searched in their own language only.
    let out = repo.run(&["grep", "-p", "var $A = $B"]);
    assert_eq!(out.stdout, "b.js:1:1: var z = 1;\n");
}

#[test]
fn edit_with_a_language_rewrites_embedded_code_in_place() {
    let repo = project();
    let out = repo.run(&[
        "edit",
        "-p",
        "var $A = $B",
        "-r",
        "let $A = $B",
        "-l",
        "js",
        "--apply",
    ]);
    out.assert_code(0);
    let fixed = PAGE
        .replace("var a = 1;", "let a = 1;")
        .replace("var b = 2;", "let b = 2;");
    assert_eq!(repo.read_string("a.html"), fixed);
    repo.run(&["undo"]).assert_code(0);
    assert_eq!(repo.read_string("a.html"), PAGE);
}

#[test]
fn grep_and_edit_honour_the_projects_language_injections_and_c_config() {
    let repo = TestRepo::new();
    let config = "languageInjections:\n- hostLanguage: js\n  rule:\n    \
                  pattern: styled.$TAG`$CONTENT`\n  injected: css\n";
    repo.write("conf/sg.yml", config);
    let source = "const Button = styled.button`\n  color: red;\n`;\nconst x = `color: red;`;\n";
    repo.write("s.js", source);
    repo.commit_all("p");
    // Not at the root: found only when -c names it.
    let out = repo.run(&["grep", "-p", "color: $C;", "-l", "css"]);
    out.assert_code(1);
    let out = repo.run(&["grep", "-p", "color: $C;", "-l", "css", "-c", "conf/sg.yml"]);
    out.assert_code(0);
    assert_eq!(out.stdout, "s.js:2:3: color: red;\n");
    let out = repo.run(&[
        "edit",
        "-p",
        "color: $C;",
        "-r",
        "color: blue;",
        "-l",
        "css",
        "--config",
        "conf/sg.yml",
        "--apply",
    ]);
    out.assert_code(0);
    assert_eq!(
        repo.read_string("s.js"),
        source.replacen("color: red", "color: blue", 1)
    );
    // At the root, without -c.
    repo.write("sgconfig.yml", config);
    let out = repo.run(&["grep", "-p", "color: $C;", "-l", "css"]);
    assert_eq!(out.stdout, "s.js:2:3: color: blue;\n");
}
