//! Integration tests: changes beyond the match (issue 37): imports fixed up in the files
//! a rewrite changes, list elements deleted with their comma, a moved `$$$` capture
//! keeping its layout; checked on the preview's blobs and through `refresh`.

use crate::util::TestRepo;

fn staged_id(out: &crate::util::Output) -> String {
    out.json()["id"].as_str().expect("an id").to_string()
}

fn blob_at(repo: &TestRepo, id: &str, path: &str) -> String {
    repo.git(&["cat-file", "blob", &format!("refs/astedit/{id}:{path}")])
}

/// Stages `edit` with `args` in `repo` and returns the preview id.
fn stage(repo: &TestRepo, args: &[&str]) -> String {
    let mut all = vec!["edit"];
    all.extend_from_slice(args);
    all.push("--json");
    let out = repo.run(&all);
    out.assert_code(0);
    staged_id(&out)
}

const LOGGER: &str = "import { logger } from \"./log\"";

#[test]
fn add_import_already_there_merged_or_new_after_each_header() {
    let repo = TestRepo::new();
    let files = [
        // Already imported (single quotes, an alias elsewhere): nothing added.
        (
            "have.ts",
            "import { logger } from './log';\nconsole.warn(1);\n",
        ),
        // Another name of the same module: merged.
        (
            "merge.ts",
            "import { other } from \"./log\";\n\nconsole.warn(other);\n",
        ),
        // Other imports: a new statement after them, in their quotes and semicolons.
        (
            "after.ts",
            "import a from 'a'\nimport b from 'b'\n\nconsole.warn(a, b)\n",
        ),
        ("shebang.ts", "#!/usr/bin/env node\nconsole.warn(1);\n"),
        (
            "license.ts",
            "// Copyright 2026 The Authors.\n// SPDX-License-Identifier: MIT\n\nconsole.warn(1);\n",
        ),
        ("strict.js", "\"use strict\";\nconsole.warn(1);\n"),
        // No match: no import.
        ("untouched.ts", "console.log(1);\n"),
    ];
    for (path, text) in files {
        repo.write(path, text);
    }
    repo.commit_all("init");
    let id = stage(
        &repo,
        &[
            "-p",
            "console.warn($$$A)",
            "-r",
            "logger.warn($$$A)",
            "--add-import",
            LOGGER,
        ],
    );
    let want = [
        ("have.ts", "import { logger } from './log';\nlogger.warn(1);\n"),
        ("merge.ts", "import { other, logger } from \"./log\";\n\nlogger.warn(other);\n"),
        (
            "after.ts",
            "import a from 'a'\nimport b from 'b'\nimport { logger } from './log'\n\nlogger.warn(a, b)\n",
        ),
        (
            "shebang.ts",
            "#!/usr/bin/env node\n\nimport { logger } from \"./log\";\n\nlogger.warn(1);\n",
        ),
        (
            "license.ts",
            "// Copyright 2026 The Authors.\n// SPDX-License-Identifier: MIT\n\nimport { logger } from \"./log\";\n\nlogger.warn(1);\n",
        ),
        (
            "strict.js",
            "\"use strict\";\n\nimport { logger } from \"./log\";\n\nlogger.warn(1);\n",
        ),
    ];
    for (path, text) in want {
        assert_eq!(blob_at(&repo, &id, path), text, "{path}");
    }
    // The work tree is not touched, and a file without a match gets no import.
    assert_eq!(repo.read_string("merge.ts"), files[1].1);
    let show = repo.run(&["show", "--stat", &id]);
    show.assert_code(0);
    assert!(!show.stdout.contains("untouched.ts"), "{}", show.stdout);
    repo.fsck();
}

#[test]
fn python_go_rust_and_java_headers() {
    let repo = TestRepo::new();
    repo.write(
        "a.py",
        "\"\"\"Module doc.\"\"\"\nfrom __future__ import annotations\n\nwarn(1)\n",
    );
    repo.write("b.py", "\"\"\"Module doc.\"\"\"\n\nwarn(1)\n");
    repo.write("c.py", "from log import info\n\nwarn(info)\n");
    repo.commit_all("init");
    let id = stage(
        &repo,
        &[
            "-p",
            "warn($A)",
            "-r",
            "log.warn($A)",
            "--add-import",
            "import log",
        ],
    );
    assert_eq!(
        blob_at(&repo, &id, "a.py"),
        "\"\"\"Module doc.\"\"\"\nfrom __future__ import annotations\n\nimport log\n\nlog.warn(1)\n"
    );
    assert_eq!(
        blob_at(&repo, &id, "b.py"),
        "\"\"\"Module doc.\"\"\"\n\nimport log\n\nlog.warn(1)\n"
    );
    assert_eq!(
        blob_at(&repo, &id, "c.py"),
        "import log\nfrom log import info\n\nlog.warn(info)\n"
    );

    let repo = TestRepo::new();
    repo.write("a.go", "package main\n\nfunc main() { warn(1) }\n");
    repo.write(
        "b.go",
        "package main\n\nimport \"fmt\"\n\nfunc main() { warn(fmt.Sprint(1)) }\n",
    );
    repo.write("c.rs", "//! Crate docs.\n\nfn main() { warn(1); }\n");
    repo.write("d.rs", "use log::info;\n\nfn main() { warn(info); }\n");
    repo.write(
        "E.java",
        "package a;\n\nclass E { void m() { warn(1); } }\n",
    );
    repo.commit_all("init");
    let id = stage(
        &repo,
        &[
            "-p",
            "warn($A)",
            "-r",
            "log.Print($A)",
            "--add-import",
            "\"log\"",
            "-l",
            "go",
        ],
    );
    assert_eq!(
        blob_at(&repo, &id, "a.go"),
        "package main\n\nimport \"log\"\n\nfunc main() { log.Print(1) }\n"
    );
    assert_eq!(
        blob_at(&repo, &id, "b.go"),
        "package main\n\nimport (\n\t\"fmt\"\n\t\"log\"\n)\n\nfunc main() { log.Print(fmt.Sprint(1)) }\n"
    );
    let id = stage(
        &repo,
        &[
            "-p",
            "warn($A)",
            "-r",
            "warn!($A)",
            "--add-import",
            "use log::warn;",
            "-l",
            "rust",
        ],
    );
    assert_eq!(
        blob_at(&repo, &id, "c.rs"),
        "//! Crate docs.\n\nuse log::warn;\n\nfn main() { warn!(1); }\n"
    );
    assert_eq!(
        blob_at(&repo, &id, "d.rs"),
        "use log::{info, warn};\n\nfn main() { warn!(info); }\n"
    );
    let id = stage(
        &repo,
        &[
            "-p",
            "warn($A)",
            "-r",
            "Log.warn($A)",
            "--add-import",
            "import org.log.Log;",
            "-l",
            "java",
        ],
    );
    assert_eq!(
        blob_at(&repo, &id, "E.java"),
        "package a;\n\nimport org.log.Log;\n\nclass E { void m() { Log.warn(1); } }\n"
    );
}

#[test]
fn remove_import_drops_only_what_is_no_longer_used() {
    let repo = TestRepo::new();
    repo.write(
        "a.ts",
        "import moment from \"moment\";\nimport { a, b } from \"m\";\n\nmoment(a);\n",
    );
    repo.write(
        "b.ts",
        "import moment from \"moment\";\n\nmoment(1);\nmoment.duration(2);\n",
    );
    repo.commit_all("init");
    let id = stage(
        &repo,
        &[
            "-p",
            "moment($A)",
            "-r",
            "dayjs($A)",
            "--add-import",
            "import dayjs from \"dayjs\"",
            "--remove-import",
            "moment",
            "--remove-import",
            "a",
        ],
    );
    // `a` is still used; `moment` is not.
    assert_eq!(
        blob_at(&repo, &id, "a.ts"),
        "import { a, b } from \"m\";\nimport dayjs from \"dayjs\";\n\ndayjs(a);\n"
    );
    // `moment.duration` still refers to it: the import stays.
    assert_eq!(
        blob_at(&repo, &id, "b.ts"),
        "import moment from \"moment\";\nimport dayjs from \"dayjs\";\n\ndayjs(1);\nmoment.duration(2);\n"
    );
}

#[test]
fn a_bad_import_is_an_error_and_stages_nothing() {
    let repo = TestRepo::new();
    repo.write("a.py", "warn(1)\n");
    repo.commit_all("init");
    let out = repo.run(&[
        "edit",
        "-p",
        "warn($A)",
        "-r",
        "log.warn($A)",
        "--add-import",
        "import { log } from './log'",
        "--json",
    ]);
    assert_ne!(out.code, 0, "{}", out.stdout);
    assert_eq!(out.json()["error"]["code"], "bad-import", "{}", out.stdout);
    assert!(repo.astedit_refs().is_empty());
}

#[test]
fn refresh_re_derives_the_imports() {
    let repo = TestRepo::new();
    repo.write(
        "a.ts",
        "import { other } from \"./log\";\n\nconsole.warn(other);\n",
    );
    repo.commit_all("init");
    let id = stage(
        &repo,
        &[
            "-p",
            "console.warn($$$A)",
            "-r",
            "logger.warn($$$A)",
            "--add-import",
            LOGGER,
        ],
    );
    // The file moves on away from the preview's lines; the preview is stale.
    repo.write(
        "a.ts",
        "import { other } from \"./log\";\n\nconsole.warn(other);\n\nother();\n",
    );
    repo.run(&["apply", &id]).assert_code(3);
    let out = repo.run(&["apply", &id, "--refresh", "--json"]);
    assert!(out.code == 0 || out.code == 1, "{}", out.stdout);
    let text = match out.code {
        0 => repo.read_string("a.ts"),
        _ => {
            let fresh = out.json()["refreshed"]["id"]
                .as_str()
                .expect("successor")
                .to_string();
            blob_at(&repo, &fresh, "a.ts")
        }
    };
    assert_eq!(
        text,
        "import { other, logger } from \"./log\";\n\nlogger.warn(other);\n\nother();\n"
    );
}

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

#[test]
fn python_kotlin_and_csharp_imports_already_there_merged_or_covered() {
    let repo = TestRepo::new();
    let files = [
        // Already imported, covered by `*`, merged into the same module's import.
        ("have.py", "from log import info, warn2\n\nwarn(info)\n"),
        ("star.py", "from log import *\n\nwarn(1)\n"),
        ("merge.py", "from log import info\n\nwarn(info)\n"),
        (
            "paren.py",
            "from log import (\n    info,\n)\n\nwarn(info)\n",
        ),
        // Another module: a new statement after it.
        ("other.py", "import os\n\nwarn(os.sep)\n"),
    ];
    for (path, text) in files {
        repo.write(path, text);
    }
    repo.write("A.kt", "package a\n\nfun m() { warn(1) }\n");
    repo.write(
        "B.kt",
        "package a\n\nimport log.Info\n\nfun m() { warn(Info) }\n",
    );
    repo.write(
        "C.cs",
        "using System;\n\nclass C { void M() { warn(1); } }\n",
    );
    repo.write("D.cs", "using Log;\n\nclass D { void M() { warn(1); } }\n");
    repo.commit_all("init");
    let id = stage(
        &repo,
        &[
            "-p",
            "warn($A)",
            "-r",
            "warn2($A)",
            "--add-import",
            "from log import warn2",
            "-l",
            "python",
        ],
    );
    let want = [
        ("have.py", "from log import info, warn2\n\nwarn2(info)\n"),
        ("star.py", "from log import *\n\nwarn2(1)\n"),
        ("merge.py", "from log import info, warn2\n\nwarn2(info)\n"),
        (
            "paren.py",
            "from log import (\n    info,\n    warn2,\n)\n\nwarn2(info)\n",
        ),
        (
            "other.py",
            "import os\n\nfrom log import warn2\n\nwarn2(os.sep)\n",
        ),
    ];
    for (path, text) in want {
        assert_eq!(blob_at(&repo, &id, path), text, "{path}");
    }
    let id = stage(
        &repo,
        &[
            "-p",
            "warn($A)",
            "-r",
            "Log.warn($A)",
            "--add-import",
            "import log.Log",
            "-l",
            "kotlin",
        ],
    );
    assert_eq!(
        blob_at(&repo, &id, "A.kt"),
        "package a\n\nimport log.Log\n\nfun m() { Log.warn(1) }\n"
    );
    assert_eq!(
        blob_at(&repo, &id, "B.kt"),
        "package a\n\nimport log.Info\nimport log.Log\n\nfun m() { Log.warn(Info) }\n"
    );
    let id = stage(
        &repo,
        &[
            "-p",
            "warn($A)",
            "-r",
            "Logger.Warn($A)",
            "--add-import",
            "using Log;",
            "-l",
            "csharp",
        ],
    );
    assert_eq!(
        blob_at(&repo, &id, "C.cs"),
        "using System;\nusing Log;\n\nclass C { void M() { Logger.Warn(1); } }\n"
    );
    assert_eq!(
        blob_at(&repo, &id, "D.cs"),
        "using Log;\n\nclass D { void M() { Logger.Warn(1); } }\n"
    );
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
fn the_mcp_ast_edit_op_takes_imports() {
    let repo = TestRepo::new();
    repo.write(
        "a.ts",
        "import { other } from \"./log\";\n\nconsole.warn(other);\n",
    );
    repo.commit_all("init");
    let reply = ast_edit(
        &repo,
        serde_json::json!({"ops": [{
            "pattern": "console.warn($$$A)", "rewrite": "logger.warn($$$A)",
            "imports": {"add": [LOGGER]}}]}),
    );
    let result = &reply["result"];
    assert_eq!(result["isError"], false, "{reply}");
    let id = result["structuredContent"]["id"].as_str().expect("id");
    assert_eq!(
        blob_at(&repo, id, "a.ts"),
        "import { other, logger } from \"./log\";\n\nlogger.warn(other);\n"
    );
}

/// The MCP tool takes `edit --selector` too (issue 53 item 6): Python annotations.
#[test]
fn the_mcp_ast_edit_takes_a_selector() {
    let repo = TestRepo::new();
    repo.write(
        "a.py",
        "def f(x: List[int]) -> List[str]:\n    return List[int]\n",
    );
    repo.commit_all("init");
    let op = serde_json::json!([{"pattern": "x: List[$T]", "rewrite": "list[$T]"}]);
    let reply = ast_edit(
        &repo,
        serde_json::json!({"ops": op, "lang": "python", "selector": "generic_type"}),
    );
    let id = reply["result"]["structuredContent"]["id"]
        .as_str()
        .unwrap_or_else(|| panic!("{reply}"));
    assert_eq!(
        blob_at(&repo, id, "a.py"),
        "def f(x: list[int]) -> list[str]:\n    return List[int]\n"
    );
    // Without `lang` each language is tried, as `edit --selector` does.
    let reply = ast_edit(
        &repo,
        serde_json::json!({"ops": op, "selector": "generic_type", "paths": ["a.py"]}),
    );
    assert_eq!(reply["result"]["isError"], false, "{reply}");
}

/// `ast_edit` with `arguments`, called on an `mcp` server in `repo`: the reply.
fn ast_edit(repo: &TestRepo, arguments: serde_json::Value) -> serde_json::Value {
    let call = serde_json::json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "ast_edit", "arguments": arguments}});
    let init = serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "codemods-test", "version": "1"}}});
    let ready = serde_json::json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    mcp_call(repo, &[init, ready, call], 2)
}

/// Sends `messages` to a `mcp` server in `repo` and returns the reply with `id`
/// (stdin stays open until then: a closed stdin cancels the call).
fn mcp_call(repo: &TestRepo, messages: &[serde_json::Value], id: u64) -> serde_json::Value {
    mcp_call_with(repo, &["mcp"], messages, id)
}

/// [`mcp_call`] to a server started with `argv` (`mcp --allow-run`).
fn mcp_call_with(
    repo: &TestRepo,
    argv: &[&str],
    messages: &[serde_json::Value],
    id: u64,
) -> serde_json::Value {
    use std::io::BufRead as _;
    use std::io::Write as _;
    let mut child = repo
        .command(".", argv)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("spawn mcp");
    let mut stdin = child.stdin.take().expect("stdin");
    for m in messages {
        writeln!(stdin, "{m}").expect("write");
    }
    stdin.flush().expect("flush");
    let stdout = std::io::BufReader::new(child.stdout.take().expect("stdout"));
    let reply = stdout
        .lines()
        .map_while(Result::ok)
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(&l).ok())
        .find(|v| v["id"] == id)
        .expect("a reply to the call");
    drop(stdin);
    let _ = child.wait();
    reply
}

/// The id of the preview `scan --stage --json` staged.
pub(crate) fn scan_stage(repo: &TestRepo, config: &str) -> String {
    let out = repo.run(&["scan", "--stage", "--config", config, "--json"]);
    assert!(
        out.code == 0 || out.code == 1,
        "{}\n{}",
        out.stdout,
        out.stderr
    );
    let v = out.json();
    v["id"]
        .as_str()
        .or_else(|| v["staged"]["id"].as_str())
        .unwrap_or_else(|| panic!("an id in {v}"))
        .to_string()
}

#[test]
fn a_rule_imports_key_in_yaml_and_toml() {
    let repo = TestRepo::new();
    repo.write(
        "rules/log.yml",
        "id: logger\nlanguage: typescript\nrule:\n  pattern: console.warn($$$A)\nfix: logger.warn($$$A)\n\
         imports:\n  add: ['import { logger } from \"./log\"']\n",
    );
    repo.write(
        "astedit.toml",
        "[[rules]]\nid = \"dayjs\"\nlanguage = \"typescript\"\nrule.pattern = \"moment($A)\"\n\
         fix = \"dayjs($A)\"\nimports.add = [\"import dayjs from 'dayjs'\"]\nimports.remove = [\"moment\"]\n",
    );
    repo.write(
        "a.ts",
        "import { other } from \"./log\";\n\nconsole.warn(other);\n",
    );
    repo.write("b.ts", "import moment from \"moment\";\n\nmoment(1);\n");
    repo.write("c.ts", "other(1);\n");
    repo.commit_all("init");
    let id = scan_stage(&repo, "rules/log.yml");
    assert_eq!(
        blob_at(&repo, &id, "a.ts"),
        "import { other, logger } from \"./log\";\n\nlogger.warn(other);\n"
    );
    repo.run(&["discard", &id]).assert_code(0);
    let id = scan_stage(&repo, "astedit.toml");
    assert_eq!(
        blob_at(&repo, &id, "b.ts"),
        "import dayjs from \"dayjs\";\n\ndayjs(1);\n"
    );
    // A malformed key is named.
    repo.write(
        "rules/bad.yml",
        "id: bad\nlanguage: typescript\nrule:\n  pattern: f($A)\nimports:\n  add: 3\n",
    );
    let out = repo.run(&["scan", "--config", "rules/bad.yml", "--json"]);
    assert!(out.stdout.contains("imports"), "{}", out.stdout);
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

/// A formatter for the tests: puts one space around every `=` of the file, and fails
/// unless its one argument is the file's path.
const SPACES_FMT: &str = "[ \"$1\" = a.py ] || exit 3\nsed -e 's/ *= */ = /g'\n";

#[test]
fn fmt_keeps_only_the_formatter_hunks_over_the_rewrite() {
    let repo = TestRepo::new();
    repo.write("fmt.sh", SPACES_FMT);
    repo.write("astedit.toml", "[fmt]\npython = \"sh fmt.sh {path}\"\n");
    repo.write(
        "rules/new.yml",
        "id: new\nlanguage: python\nrule:\n  pattern: old($A)\nfix: new($A)\n",
    );
    let before = "x  =  1\ny  =  old(2)\nz  =  3\n";
    repo.write("a.py", before);
    repo.commit_all("init");
    // The formatter runs once allowed (see consent.rs).
    repo.run(&["allow"]).assert_code(0);
    let want = "x  =  1\ny = new(2)\nz  =  3\n";
    let id = stage(&repo, &["-p", "old($A)", "-r", "new($A)", "--fmt", "a.py"]);
    assert_eq!(blob_at(&repo, &id, "a.py"), want);
    // The formatter is in the preview's record.
    let shown = repo.run(&["show", &id, "--json"]);
    assert!(
        shown.stdout.contains("sh fmt.sh {path}"),
        "{}",
        shown.stdout
    );
    repo.run(&["discard", &id]).assert_code(0);
    let id = scan_stage_with(&repo, &["--config", "rules/new.yml", "--fmt"]);
    assert_eq!(blob_at(&repo, &id, "a.py"), want);
    repo.run(&["discard", &id]).assert_code(0);
    // Without --fmt, the rewrite alone.
    let id = stage(&repo, &["-p", "old($A)", "-r", "new($A)", "a.py"]);
    assert_eq!(
        blob_at(&repo, &id, "a.py"),
        "x  =  1\ny  =  new(2)\nz  =  3\n"
    );
}

#[test]
fn fmt_on_scan_check_and_apply_and_on_the_mcp_tool() {
    let repo = TestRepo::new();
    repo.write("fmt.sh", SPACES_FMT);
    repo.write("astedit.toml", "[fmt]\npython = \"sh fmt.sh {path}\"\n");
    repo.write(
        "rules/new.yml",
        "id: new\nlanguage: python\nrule:\n  pattern: old($A)\nfix: new($A)\n",
    );
    let before = "x  =  1\ny  =  old(2)\nz  =  3\n";
    let want = "x  =  1\ny = new(2)\nz  =  3\n";
    repo.write("a.py", before);
    repo.commit_all("init");
    repo.run(&["allow"]).assert_code(0);
    // --check shows the formatted fix and writes nothing.
    let out = repo.run(&["scan", "--check", "--config", "rules/new.yml", "--fmt"]);
    assert!(out.stdout.contains("+y = new(2)"), "{}", out.stdout);
    assert!(!out.stdout.contains("+x = 1"), "{}", out.stdout);
    assert_eq!(repo.read_string("a.py"), before);
    // The MCP tool stages the same (a formatter is a program: `--allow-run`).
    let call = serde_json::json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "ast_edit", "arguments": {"fmt": true, "ops": [{
            "pattern": "old($A)", "rewrite": "new($A)"}]}}});
    let init = serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "codemods-test", "version": "1"}}});
    let ready = serde_json::json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let reply = mcp_call_with(&repo, &["mcp", "--allow-run"], &[init, ready, call], 2);
    assert_eq!(reply["result"]["isError"], false, "{reply}");
    let id = reply["result"]["structuredContent"]["id"]
        .as_str()
        .expect("id")
        .to_string();
    assert_eq!(blob_at(&repo, &id, "a.py"), want);
    repo.run(&["discard", &id]).assert_code(0);
    // --apply writes it.
    let out = repo.run(&["scan", "--apply", "--config", "rules/new.yml", "--fmt"]);
    assert!(
        out.code == 0 || out.code == 1,
        "{}\n{}",
        out.stdout,
        out.stderr
    );
    assert_eq!(repo.read_string("a.py"), want);
}

#[test]
fn a_failing_formatter_leaves_the_file_as_rewritten_with_a_warning() {
    let repo = TestRepo::new();
    repo.write("astedit.toml", "[fmt]\npython = \"sh -c 'exit 4'\"\n");
    repo.write("a.py", "y  =  old(2)\n");
    repo.commit_all("init");
    repo.run(&["allow"]).assert_code(0);
    let out = repo.run(&["edit", "-p", "old($A)", "-r", "new($A)", "--fmt", "--json"]);
    out.assert_code(0);
    assert!(out.stdout.contains("failed"), "{}", out.stdout);
    let id = staged_id(&out);
    assert_eq!(blob_at(&repo, &id, "a.py"), "y  =  new(2)\n");
}

/// `refresh ID --json`: the successor's id.
fn refreshed(repo: &TestRepo, id: &str) -> (String, serde_json::Value) {
    let out = repo.run(&["refresh", id, "--json"]);
    out.assert_code(0);
    let v = out.json();
    let successor = v["successor"].as_str().expect("a successor").to_string();
    (successor, v)
}

#[test]
fn refresh_runs_the_recorded_formatter_over_the_re_derived_rewrite() {
    let repo = TestRepo::new();
    repo.write("fmt.sh", SPACES_FMT);
    repo.write("astedit.toml", "[fmt]\npython = \"sh fmt.sh {path}\"\n");
    repo.write(
        "rules/new.yml",
        "id: new\nlanguage: python\nrule:\n  pattern: old($A)\nfix: new($A)\n",
    );
    repo.write("a.py", "x  =  1\ny  =  old(2)\nz  =  3\n");
    repo.commit_all("init");
    repo.run(&["allow"]).assert_code(0);
    // An unrelated line above, and a new site below: both re-derived.
    let moved = "v  =  0\nx  =  1\ny  =  old(2)\nz  =  3\n\nw  =  old(4)\n";
    let want = "v  =  0\nx  =  1\ny = new(2)\nz  =  3\n\nw = new(4)\n";
    let edit = stage(&repo, &["-p", "old($A)", "-r", "new($A)", "--fmt", "a.py"]);
    let scan = scan_stage_with(&repo, &["--config", "rules/new.yml", "--fmt"]);
    repo.write("a.py", moved);
    for id in [&edit, &scan] {
        let (successor, v) = refreshed(&repo, id);
        assert_eq!(blob_at(&repo, &successor, "a.py"), want, "{v}");
        assert_eq!(v["files"][0]["how"], "rerun", "{v}");
    }
    // The command recorded at staging is the one that runs, even when `[fmt]` has
    // changed since; one that fails now leaves the file as re-derived, with a note.
    repo.write("astedit.toml", "[fmt]\npython = \"sh -c 'exit 5'\"\n");
    repo.run(&["allow"]).assert_code(0);
    repo.write("a.py", "x  =  1\ny  =  old(2)\nz  =  3\n");
    let edit = stage(&repo, &["-p", "old($A)", "-r", "new($A)", "--fmt", "a.py"]);
    repo.write("fmt.sh", "exit 6\n");
    repo.write("astedit.toml", "[fmt]\npython = \"sh fmt.sh {path}\"\n");
    repo.write("a.py", moved);
    let (successor, v) = refreshed(&repo, &edit);
    assert_eq!(
        blob_at(&repo, &successor, "a.py"),
        "v  =  0\nx  =  1\ny  =  new(2)\nz  =  3\n\nw  =  new(4)\n"
    );
    assert!(
        v["notes"]
            .to_string()
            .contains("the formatter `sh -c 'exit 5'` failed"),
        "{v}"
    );
    // Without --fmt at staging, a refresh formats nothing.
    repo.write("fmt.sh", SPACES_FMT);
    repo.write("a.py", "x  =  1\ny  =  old(2)\nz  =  3\n");
    let plain = stage(&repo, &["-p", "old($A)", "-r", "new($A)", "a.py"]);
    repo.write("a.py", moved);
    let (successor, _) = refreshed(&repo, &plain);
    assert_eq!(
        blob_at(&repo, &successor, "a.py"),
        "v  =  0\nx  =  1\ny  =  new(2)\nz  =  3\n\nw  =  new(4)\n"
    );
}

/// `scan --stage ARGS --json`: the preview id.
fn scan_stage_with(repo: &TestRepo, args: &[&str]) -> String {
    let mut all = vec!["scan", "--stage"];
    all.extend_from_slice(args);
    all.push("--json");
    let out = repo.run(&all);
    assert!(
        out.code == 0 || out.code == 1,
        "{}\n{}",
        out.stdout,
        out.stderr
    );
    out.json()["id"].as_str().expect("an id").to_string()
}
