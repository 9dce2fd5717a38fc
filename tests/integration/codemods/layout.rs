//! Deletions and captures in their layout: a list element goes with its comma, a
//! statement alone on its line with the line, a moved capture keeps its layout, nested
//! and overlapping edits.

use super::blob_at;
use super::scan_stage;
use super::stage;
use crate::util::TestRepo;

#[test]
fn an_empty_rewrite_of_a_list_element_takes_its_comma_in_five_languages() {
    let repo = TestRepo::new();
    let cases = [
        (
            "a.ts",
            "f(a, debug, b);\nconst o = [debug, c];\n",
            "f(a, b);\nconst o = [c];\n",
        ),
        (
            "b.py",
            "f(a, debug, b)\ng(\n    a,\n    debug,\n)\n",
            "f(a, b)\ng(\n    a,\n)\n",
        ),
        ("c.rs", "fn m() { f(a, debug); }\n", "fn m() { f(a); }\n"),
        (
            "d.go",
            "package p\n\nfunc m() { f(debug, a) }\n",
            "package p\n\nfunc m() { f(a) }\n",
        ),
        (
            "E.java",
            "class E { void m() { f(a, debug, b); } }\n",
            "class E { void m() { f(a, b); } }\n",
        ),
        ("F.kt", "fun m() { f(a, debug) }\n", "fun m() { f(a) }\n"),
    ];
    for (path, text, _) in cases {
        repo.write(path, text);
    }
    repo.commit_all("init");
    let id = stage(&repo, &["-p", "debug", "-r", ""]);
    for (path, _, want) in cases {
        assert_eq!(blob_at(&repo, &id, path), want, "{path}");
    }
}

/// Rules whose empty fix takes a list element by its kind, per language.
const DELETE_RULES: &str = "id: ts-member\nlanguage: typescript\nrule:\n  kind: pair\n  has:\n    field: key\n    regex: ^debug$\nfix: ''\n---\nid: ts-specifier\nlanguage: typescript\nrule:\n  kind: import_specifier\n  regex: ^debug$\nfix: ''\n---\nid: ts-parameter\nlanguage: typescript\nrule:\n  kind: required_parameter\n  regex: ^debug\nfix: ''\n---\nid: py-member\nlanguage: python\nrule:\n  kind: pair\n  has:\n    field: key\n    regex: debug\nfix: ''\n---\nid: py-name\nlanguage: python\nrule:\n  kind: dotted_name\n  regex: ^debug$\n  inside:\n    kind: import_from_statement\nfix: ''\n---\nid: go-parameter\nlanguage: go\nrule:\n  kind: parameter_declaration\n  has:\n    field: name\n    regex: ^debug$\nfix: ''\n---\nid: rs-parameter\nlanguage: rust\nrule:\n  kind: parameter\n  has:\n    field: pattern\n    regex: ^debug$\nfix: ''\n---\nid: java-parameter\nlanguage: java\nrule:\n  kind: formal_parameter\n  has:\n    field: name\n    regex: ^debug$\nfix: ''\n";

#[test]
fn parameters_members_and_import_specifiers_go_with_their_comma() {
    let repo = TestRepo::new();
    repo.write("rules/delete.yml", DELETE_RULES);
    let cases = [
        (
            "a.ts",
            "import { a, debug, b } from \"m\";\nimport { debug } from \"n\";\nfunction f(x, debug: boolean, y) {}\nconst o = { k: 1, debug: true, z: 2 };\nconst p = {\n  k: 1,\n  debug: true,\n};\nconst q = {\n  debug: true,\n  k: 1,\n};\n",
            "import { a, b } from \"m\";\nimport {} from \"n\";\nfunction f(x, y) {}\nconst o = { k: 1, z: 2 };\nconst p = {\n  k: 1,\n};\nconst q = {\n  k: 1,\n};\n",
        ),
        (
            "b.py",
            "from m import a, debug, b\nfrom n import (\n    debug,\n    c,\n)\nd = {\"k\": 1, \"debug\": 2}\n",
            "from m import a, b\nfrom n import (\n    c,\n)\nd = {\"k\": 1}\n",
        ),
        (
            "c.go",
            "package p\n\nfunc f(a int, debug bool, b int) {}\nfunc g(\n\ta int,\n\tdebug bool,\n) {\n}\n",
            "package p\n\nfunc f(a int, b int) {}\nfunc g(\n\ta int,\n) {\n}\n",
        ),
        (
            "d.rs",
            "fn f(a: u8, debug: bool) {}\nfn g(\n    debug: bool,\n    b: u8,\n) {\n}\n",
            "fn f(a: u8) {}\nfn g(\n    b: u8,\n) {\n}\n",
        ),
        (
            "E.java",
            "class E { void f(int a, boolean debug, int b) {} }\n",
            "class E { void f(int a, int b) {} }\n",
        ),
    ];
    for (path, text, _) in cases {
        repo.write(path, text);
    }
    repo.commit_all("init");
    let id = scan_stage(&repo, "rules/delete.yml");
    for (path, _, want) in cases {
        assert_eq!(blob_at(&repo, &id, path), want, "{path}");
    }
}

#[test]
fn a_deleted_statement_alone_on_its_line_takes_the_line() {
    let repo = TestRepo::new();
    repo.write(
        "a.js",
        "function f() {\n  a();\n  debugger;\n  b(); debugger;\n}\n",
    );
    repo.commit_all("init");
    let id = stage(&repo, &["-p", "debugger;", "-r", ""]);
    // The one sharing its line with another statement leaves the rest of the line.
    assert_eq!(
        blob_at(&repo, &id, "a.js"),
        "function f() {\n  a();\n  b(); \n}\n"
    );
}

#[test]
fn a_python_capture_keeps_its_layout_and_other_brackets_take_the_template_s() {
    let repo = TestRepo::new();
    let src = "def f(value):\n    warn(\n        \"msg\",\n        value,\n    )\n    warn(\"one line\", value)\n";
    repo.write("a.py", src);
    repo.commit_all("init");
    let id = stage(&repo, &["-p", "warn($$$A)", "-r", "log.warning($$$A)"]);
    assert_eq!(
        blob_at(&repo, &id, "a.py"),
        "def f(value):\n    log.warning(\n        \"msg\",\n        value,\n    )\n    log.warning(\"one line\", value)\n"
    );
    repo.run(&["discard", &id]).assert_code(0);
    // Moved into other brackets, the capture takes the template's layout.
    let id = stage(&repo, &["-p", "warn($$$A)", "-r", "log.warning([$$$A])"]);
    let text = blob_at(&repo, &id, "a.py");
    assert!(
        text.contains("log.warning([\"one line\", value])"),
        "{text}"
    );
}

#[test]
fn a_follows_capture_is_edited_with_the_match() {
    let repo = TestRepo::new();
    repo.write(
        "rules/wrap.yml",
        "id: wrap\nlanguage: typescript\nrule:\n  kind: expression_statement\n  pattern: useOld();\n  follows:\n    pattern: const $X = $V;\n    stopBy: end\nfix: useNew();\nedits:\n  - target: $V\n    fix: wrap($V)\n",
    );
    repo.write(
        "a.ts",
        "function m() {\n  const a = 1;\n  useOld();\n  useOld();\n}\n",
    );
    repo.commit_all("init");
    let id = scan_stage(&repo, "rules/wrap.yml");
    // Both calls reach the same `1`: wrapped once.
    assert_eq!(
        blob_at(&repo, &id, "a.ts"),
        "function m() {\n  const a = wrap(1);\n  useNew();\n  useNew();\n}\n"
    );
}

#[test]
fn a_moved_capture_keeps_its_layout_between_its_own_brackets() {
    let repo = TestRepo::new();
    let src = "function f(value) {\n  console.warn(\n    'msg',\n    value,\n  );\n  console.warn('one line', value);\n}\n";
    repo.write("a.js", src);
    repo.commit_all("init");
    let id = stage(
        &repo,
        &["-p", "console.warn($$$A)", "-r", "logger.warn($$$A)"],
    );
    assert_eq!(
        blob_at(&repo, &id, "a.js"),
        "function f(value) {\n  logger.warn(\n    'msg',\n    value,\n  );\n  logger.warn('one line', value);\n}\n"
    );
}

#[test]
fn a_rule_s_empty_fix_on_a_list_element_takes_its_comma() {
    let repo = TestRepo::new();
    repo.write(
        "rules/debug.yml",
        "id: no-debug\nlanguage: python\nrule:\n  pattern:\n    context: f(debug=True)\n    selector: keyword_argument\nfix: ''\n",
    );
    repo.write("a.py", "run(app, debug=True, port=1)\nrun(debug=True)\n");
    repo.commit_all("init");
    let id = scan_stage(&repo, "rules/debug.yml");
    assert_eq!(blob_at(&repo, &id, "a.py"), "run(app, port=1)\nrun()\n");
}

const AWAIT_RULE: &str = "id: await-fetch\nlanguage: typescript\nrule:\n  pattern: fetchSync($A)\n  inside:\n    kind: function_declaration\n    pattern: $FN\n    stopBy: end\nfix: await fetchAsync($A)\nedits:\n  - target: $FN\n    fix: async $FN\n";

#[test]
fn an_inside_capture_is_edited_once_for_two_matches() {
    let repo = TestRepo::new();
    repo.write("rules/await.yml", AWAIT_RULE);
    repo.write(
        "astedit.toml",
        "[[rules]]\nid = \"await-fetch\"\nlanguage = \"typescript\"\nrule.pattern = \"fetchSync($A)\"\n\
         rule.inside = { kind = \"function_declaration\", pattern = \"$FN\", stopBy = \"end\" }\n\
         fix = \"await fetchAsync($A)\"\nedits = [{ target = \"$FN\", fix = \"async $FN\" }]\n",
    );
    let before = "export function load() {\n  const a = fetchSync(\"a\");\n  const b = fetchSync(\"b\");\n  return [a, b];\n}\n\nclass C {\n  m() {\n    function inner(x) {\n      return fetchSync(x);\n    }\n  }\n}\n";
    let after = "export async function load() {\n  const a = await fetchAsync(\"a\");\n  const b = await fetchAsync(\"b\");\n  return [a, b];\n}\n\nclass C {\n  m() {\n    async function inner(x) {\n      return await fetchAsync(x);\n    }\n  }\n}\n";
    repo.write("a.ts", before);
    repo.commit_all("init");
    let id = scan_stage(&repo, "rules/await.yml");
    assert_eq!(blob_at(&repo, &id, "a.ts"), after);
    repo.run(&["discard", &id]).assert_code(0);
    let id = scan_stage(&repo, "astedit.toml");
    assert_eq!(blob_at(&repo, &id, "a.ts"), after);
    // refresh re-derives the edits on the file as it is now.
    let moved = format!("// moved\n{before}");
    repo.write("a.ts", &moved);
    let out = repo.run(&["apply", &id, "--refresh", "--json"]);
    assert!(
        out.code == 0 || out.code == 1,
        "{}\n{}",
        out.stdout,
        out.stderr
    );
    let text = match out.code {
        0 => repo.read_string("a.ts"),
        _ => blob_at(
            &repo,
            out.json()["refreshed"]["id"].as_str().expect("successor"),
            "a.ts",
        ),
    };
    assert_eq!(text, format!("// moved\n{after}"));
    // A target the rule does not capture is named.
    repo.write(
        "rules/bad.yml",
        "id: bad\nlanguage: typescript\nrule:\n  pattern: f($A)\nfix: g($A)\nedits:\n  - target: $NOPE\n    fix: x\n",
    );
    let out = repo.run(&["scan", "--config", "rules/bad.yml", "--json"]);
    assert!(out.stdout.contains("$NOPE"), "{}", out.stdout);
}

#[test]
fn a_method_with_a_blank_line_is_made_async_around_its_own_fix() {
    // A captured method re-indented into `async $FN` used to get its blank lines
    // indented, and its edit then reached over the fix inside it (file left out).
    let repo = TestRepo::new();
    repo.write(
        "rules/sleep.yml",
        "id: async-sleep\nlanguage: python\nrule:\n  pattern: time.sleep($S)\n  inside:\n    kind: function_definition\n    pattern: $FN\n    stopBy: end\nfix: await asyncio.sleep($S)\nedits:\n  - target: $FN\n    fix: async $FN\nimports:\n  add: ['import asyncio']\n  remove: [time]\n",
    );
    repo.write(
        "a.py",
        "import time\n\n\nclass A:\n    def run(self):\n        while True:\n            time.sleep(1)\n\n        print(2)\n",
    );
    repo.write(
        "b.py",
        "import time\n\n\ndef wait():\n    time.sleep(1)\n\n    return time.time()\n",
    );
    repo.commit_all("init");
    let id = scan_stage(&repo, "rules/sleep.yml");
    assert_eq!(
        blob_at(&repo, &id, "a.py"),
        "import asyncio\n\n\nclass A:\n    async def run(self):\n        while True:\n            await asyncio.sleep(1)\n\n        print(2)\n"
    );
    // `time` is still used there: it stays.
    assert_eq!(
        blob_at(&repo, &id, "b.py"),
        "import asyncio\nimport time\n\n\nasync def wait():\n    await asyncio.sleep(1)\n\n    return time.time()\n"
    );
}

#[test]
fn two_different_edits_of_one_node_leave_the_file_out() {
    let repo = TestRepo::new();
    repo.write(
        "rules/note.yml",
        "id: note\nlanguage: typescript\nrule:\n  pattern: trace($M)\n  inside:\n    kind: function_declaration\n    pattern: $FN\n    stopBy: end\nfix: log($M)\nedits:\n  - target: $FN\n    fix: \"// logs $M\\n$FN\"\n",
    );
    repo.write(
        "clash.ts",
        "const x = 1;\nfunction f() {\n  trace(\"a\");\n  trace(\"b\");\n}\n",
    );
    repo.write("fine.ts", "function g() {\n  trace(\"a\");\n}\n");
    repo.commit_all("init");
    let out = repo.run(&["scan", "--stage", "--config", "rules/note.yml", "--json"]);
    assert!(
        out.code == 0 || out.code == 1,
        "{}\n{}",
        out.stdout,
        out.stderr
    );
    assert!(
        out.stdout
            .contains("clash.ts:2: rule 'note': two different edits of $FN"),
        "{}",
        out.stdout
    );
    let v = out.json();
    let id = v["id"].as_str().expect("an id").to_string();
    assert_eq!(
        blob_at(&repo, &id, "fine.ts"),
        "// logs \"a\"\nfunction g() {\n  log(\"a\");\n}\n"
    );
    // The clashing file is left out of the preview.
    let files = repo.git(&[
        "ls-tree",
        "-r",
        "--name-only",
        &format!("refs/astedit/{id}"),
    ]);
    assert!(!files.contains("clash.ts"), "{files}");
}
