//! What the search tools return: results within the byte budget, paths that match
//! nothing or are stale, the tree followed between calls, the project's language globs.

use std::time::Duration;

use serde_json::json;
use serde_json::Value;

use super::error_json;
use super::repo_with_code;
use super::text;
use super::ts_repo;
use super::Server;
use crate::util::TestRepo;

/// The bytes a tool result takes: its text blocks and its structured content.
fn result_bytes(result: &Value) -> usize {
    let text: usize = result["content"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|c| c["text"].as_str().map_or(0, str::len))
                .sum()
        })
        .unwrap_or(0);
    text + result
        .get("structuredContent")
        .map_or(0, |v| v.to_string().len())
}

/// Every result fits its byte budget (64 KiB by default, `max_bytes` per call): big
/// captures are cut like match text, the matches stop at the budget and the text says
/// which offset continues, the diff is sent once (structured), and a long list of
/// previews is cut with a note.
#[test]
fn tool_results_fit_the_byte_budget_and_say_what_was_cut() {
    let t = TestRepo::new();
    let mut big = String::from("class Big:\n");
    for i in 0..3000 {
        big.push_str(&format!(
            "    def m{i}(self):\n        print('method {i}', self.x{i})\n"
        ));
    }
    t.write("big.py", &big);
    let mut calls = String::new();
    for i in 0..4000 {
        calls.push_str(&format!("print('line {i}', value_{i}, other_{i})\n"));
    }
    t.write("calls.py", &calls);
    t.commit_all("init");
    let mut s = Server::start(&t);
    s.handshake("2025-06-18", "budget");

    let class = s.call("ast_grep", json!({"pattern": "class $C: $$$B"}));
    assert_eq!(class["isError"], false, "{}", text(&class));
    assert!(
        result_bytes(&class) <= 64 * 1024,
        "{}",
        result_bytes(&class)
    );
    let m = &class["structuredContent"]["matches"][0];
    assert!(m["meta_variables"]["multi"]["B"][0]["text"]
        .as_str()
        .is_some_and(|t| t.len() < 1000));

    let prints = s.call(
        "ast_grep",
        json!({"pattern": "print($$$A)", "max_results": 5000}),
    );
    assert!(
        result_bytes(&prints) <= 64 * 1024,
        "{}",
        result_bytes(&prints)
    );
    let out = &prints["structuredContent"];
    assert_eq!(out["capped"], true);
    let shown = out["shown"].as_u64().expect("shown");
    assert!(shown > 10 && shown < 7000, "{shown}");
    let said = text(&prints);
    assert!(
        said.contains(&format!("offset {shown}")) && said.contains("budget"),
        "{said}"
    );
    let small = s.call(
        "ast_grep",
        json!({"pattern": "print($$$A)", "max_bytes": 4096}),
    );
    assert!(result_bytes(&small) <= 4096, "{}", result_bytes(&small));

    // The diff is sent once: in the structured content, not in the text.
    let staged = s.call(
        "ast_edit",
        json!({"ops": [{"pattern": "print($$$A)", "rewrite": "log($$$A)"}], "paths": ["calls.py"]}),
    );
    assert!(
        result_bytes(&staged) <= 64 * 1024,
        "{}",
        result_bytes(&staged)
    );
    let id = staged["structuredContent"]["id"]
        .as_str()
        .expect("id")
        .to_string();
    let said = text(&staged);
    assert!(said.starts_with(&format!("Preview {id}: ")), "{said}");
    assert!(!said.contains("-print('line 0'"), "{said}");
    let diff = staged["structuredContent"]["diff"]
        .as_str()
        .unwrap_or_default();
    assert!(
        diff.contains("-print('line 0'"),
        "{}",
        &diff[..diff.len().min(2000)]
    );
    // A long list of previews is paged.
    for i in 0..4 {
        s.ok(
            "ast_edit",
            json!({"ops": [{"pattern": format!("print('line {i}', $$$A)"), "rewrite": "log($$$A)"}], "paths": ["calls.py"]}),
        );
    }
    let page = s.ok("previews", json!({"max_results": 2}));
    assert_eq!(page["total"], 5, "{page}");
    assert_eq!(page["previews"].as_array().map(Vec::len), Some(2));
    let next = s.call("previews", json!({"max_results": 2, "offset": 4}));
    assert!(
        text(&next).contains("1 of 5 pending previews, from offset 4"),
        "{}",
        text(&next)
    );
    let page = s.call("previews", json!({"max_results": 2}));
    assert!(
        text(&page).contains("more: call again with offset 2"),
        "{}",
        text(&page)
    );
    let shown = s.call(
        "previews",
        json!({"action": "show", "id": id, "max_diff_lines": 0}),
    );
    assert!(
        result_bytes(&shown) <= 64 * 1024,
        "{}",
        result_bytes(&shown)
    );
    assert!(!text(&shown).contains("-print('line 0'"));
    assert!(text(&shown).contains("budget") || result_bytes(&shown) < 60 * 1024);
    s.finish();
}

/// A path that names no file is a warning beside the others' results; when every path
/// names nothing, an error: never a silent "0 files searched".
#[test]
fn a_path_matching_nothing_is_a_warning_never_silent() {
    let t = ts_repo();
    let mut s = Server::start(&t);
    s.handshake("2025-06-18", "paths-agent");
    let result = s.call(
        "ast_grep",
        json!({"pat": "foo($A)", "path": "top.ts; nope/**/*.ts"}),
    );
    assert_eq!(result["isError"], false, "{}", text(&result));
    let out = &result["structuredContent"];
    assert_eq!(out["total"], 1);
    let warnings = out["warnings"].to_string();
    assert!(warnings.contains("nope/**/*.ts"), "{out}");
    assert!(
        text(&result).contains("warning: path ':(glob)nope/**/*.ts' matches no file"),
        "{}",
        text(&result)
    );
    let none = s.call(
        "ast_grep",
        json!({"pat": "foo($A)", "paths": ["nope/**/*.ts"]}),
    );
    assert_eq!(none["isError"], true);
    assert_eq!(error_json(&none)["error"]["code"], "pathspec-no-match");
    s.finish();
}

/// The server keeps a search's file set between calls (issue 26): the set follows a
/// file added to a folder, a folder added, a `.gitignore` edited and a file's new
/// content. (The server keeps a set only once what it was made from is over two
/// seconds old, hence the pauses.)
#[test]
fn repeated_searches_follow_the_tree() {
    let t = repo_with_code();
    t.write(".gitignore", "*.tmp\n");
    t.commit_all("ignore");
    let settle = || std::thread::sleep(Duration::from_millis(2200));
    settle();
    let mut s = Server::start(&t);
    s.handshake("2025-06-18", "inspector");
    let total = |s: &mut Server| {
        let grep = s.ok("ast_grep", json!({"pattern": "foo($A)"}));
        grep["total"].as_u64().unwrap_or_else(|| panic!("{grep}"))
    };
    assert_eq!(total(&mut s), 4);
    assert_eq!(total(&mut s), 4);
    t.write("src/c.rs", "fn c() { foo(9); }\n");
    assert_eq!(total(&mut s), 5, "a new file in a folder");
    t.write("lib/d.rs", "fn d() { foo(10); }\n");
    assert_eq!(total(&mut s), 6, "a new folder");
    settle();
    assert_eq!(total(&mut s), 6);
    t.write(".gitignore", "*.tmp\nc.rs\n");
    assert_eq!(total(&mut s), 5, "an edited .gitignore");
    t.write("src/b.rs", "fn b() { foo(3); foo(4); }\n");
    assert_eq!(total(&mut s), 6, "new content");
    s.finish();
}

/// The `ast_grep` and `edit` tools read the project's root `sgconfig.yml` as `grep`
/// and `edit` do there: its languageGlobs make `.es6` files JavaScript.
#[test]
fn tools_read_the_projects_language_globs() {
    let t = TestRepo::new();
    t.write(
        "sgconfig.yml",
        "ruleDirs: []\nlanguageGlobs:\n  javascript: ['*.es6']\n",
    );
    t.write("src/old.es6", "console.log(1);\n");
    t.write("src/new.js", "console.log(2);\n");
    t.commit_all("init");
    let mut s = Server::start(&t);
    s.handshake("2025-06-18", "inspector");
    let found = s.ok("ast_grep", json!({"pattern": "console.log($A)"}));
    let paths: Vec<&str> = found["matches"]
        .as_array()
        .expect("matches")
        .iter()
        .filter_map(|m| m["path"].as_str())
        .collect();
    assert_eq!(paths, ["src/new.js", "src/old.es6"], "{found}");
    let edited = s.ok(
        "ast_edit",
        json!({"ops": [{"pattern": "console.log($A)", "rewrite": "logger.info($A)"}], "lang": "javascript"}),
    );
    assert_eq!(edited["file_count"], 2, "{edited}");
    s.finish();
}

/// The tools take their files through the same input as `grep` and `edit` (issue 36
/// item 2), with an agent's leniency: a path that names nothing beside one that names
/// files is a warning and the others are read; only a call whose every path names
/// nothing fails, as the CLI fails on any such pathspec.
#[test]
fn a_stale_path_among_good_ones_is_a_warning_and_all_stale_is_an_error() {
    let t = TestRepo::new();
    t.write("src/a.js", "foo(1);\n");
    t.write("lib/b.js", "foo(2);\n");
    t.commit_all("init");
    let mut s = Server::start(&t);
    s.handshake("2025-06-18", "inspector");
    let found = s.ok(
        "ast_grep",
        json!({"pattern": "foo($A)", "paths": ["src/", "gone/"]}),
    );
    assert_eq!(found["total"], 1, "{found}");
    assert_eq!(found["matches"][0]["path"], "src/a.js", "{found}");
    let warnings = found["warnings"].to_string();
    assert!(
        warnings.contains("path 'gone/' matches no file; searched the other paths"),
        "{found}"
    );
    let staged = s.ok(
        "ast_edit",
        json!({"ops": [{"pattern": "foo($A)", "rewrite": "bar($A)"}], "paths": "gone.js; lib/"}),
    );
    assert_eq!(staged["file_count"], 1, "{staged}");
    assert!(
        staged["warnings"]
            .to_string()
            .contains("path 'gone.js' matches no file"),
        "{staged}"
    );
    let refused = s.call(
        "ast_grep",
        json!({"pattern": "foo($A)", "paths": ["gone/"]}),
    );
    assert_eq!(refused["isError"], true, "{refused}");
    assert_eq!(error_json(&refused)["error"]["code"], "pathspec-no-match");
    s.finish();

    // The CLI takes the same input strictly: one pathspec naming nothing fails.
    let out = t.run(&["grep", "--json", "-p", "foo($A)", "src/", "gone/"]);
    out.assert_code(2);
    assert_eq!(out.json()["error"]["code"], "pathspec-no-match");
}
