//! Integration tests: `steps` (issue 37 item 5): the `[[steps]]` of astedit.toml run in
//! order, each on the tree the steps before it produced, staged as one preview; a value
//! one step exports drives a later step across files; `refresh` runs them all again.

use crate::util::TestRepo;

fn blob_at(repo: &TestRepo, id: &str, path: &str) -> String {
    repo.git(&["cat-file", "blob", &format!("refs/astedit/{id}:{path}")])
}

fn refs(repo: &TestRepo) -> Vec<String> {
    repo.astedit_refs()
}

const USER: &str = "export function getUser(id: string) {\n  return { id };\n}\n\nexport function other() {\n  return getUser(\"x\");\n}\n";
const PAGE: &str = "import { getUser } from \"./user\";\n\nexport function show(id: string) {\n  return getUser(id);\n}\n";
const LIST: &str = "import { other, getUser } from \"./user\";\n\nconst all = [\"a\", \"b\"].map((id) => getUser(id));\nother();\n";
/// A module of its own: `getUser` here is not the exported function's name… but the
/// ops step renames every identifier spelled so in TypeScript files (said in the guide).
const PY: &str = "def getUser():\n    return 1\n";

/// Step 1 renames each exported `get*` function to `fetch*` (a rule with a transform)
/// and exports the old and new names; step 2 renames them wherever TypeScript files use
/// them (import specifiers and call sites).
const RENAME: &str = r#"
[[steps]]
name = "definition"
export = { OLD = "$OLD", NEW = "$NEW" }

[[steps.rules]]
id = "rename-get"
language = "typescript"
rule = { pattern = "$OLD", kind = "identifier", regex = "^get[A-Z]", inside = { kind = "function_declaration", field = "name", inside = { kind = "export_statement" } } }
transform = { NEW = { replace = { source = "$OLD", replace = "^get", by = "fetch" } } }
fix = "$NEW"

[[steps]]
name = "importers"
lang = "typescript"
pattern = "$OLD"
rewrite = "$NEW"
"#;

fn renamed(text: &str) -> String {
    text.replace("getUser", "fetchUser")
}

fn ts_repo() -> TestRepo {
    let repo = TestRepo::new();
    repo.write("astedit.toml", RENAME);
    repo.write("src/user.ts", USER);
    repo.write("src/page.ts", PAGE);
    repo.write("src/list.ts", LIST);
    repo.write("tools/gen.py", PY);
    repo.commit_all("init");
    repo
}

#[test]
fn an_exported_function_and_its_importers_are_renamed_in_one_preview() {
    let repo = ts_repo();
    let out = repo.run(&["steps", "--json"]);
    out.assert_code(0);
    let v = out.json();
    assert_eq!(v["kind"], "steps", "{v}");
    assert_eq!(v["staged"], true);
    assert_eq!(v["summary"], "6 changes in 3 files (2 steps)");
    assert_eq!(v["file_count"], 3);
    let rows = v["steps"].as_array().expect("steps");
    assert_eq!(
        rows[0],
        serde_json::json!({"number": 1, "name": "definition", "kind": "rules", "runs": 1,
            "changes": 1, "files": 1,
            "exported": [{"NEW": "fetchUser", "OLD": "getUser"}]}),
    );
    assert_eq!(
        rows[1],
        serde_json::json!({"number": 2, "name": "importers", "kind": "ops", "runs": 1,
            "changes": 5, "files": 3}),
    );
    assert_eq!(v["warnings"], serde_json::json!([]));
    let id = v["id"].as_str().expect("id").to_string();

    // One preview holds every file; the work tree is untouched.
    for (path, text) in [
        ("src/user.ts", USER),
        ("src/page.ts", PAGE),
        ("src/list.ts", LIST),
    ] {
        assert_eq!(blob_at(&repo, &id, path), renamed(text), "{path}");
        assert_eq!(repo.read_string(path), text, "{path}");
    }
    // Only TypeScript files: the Python function of the same name is left alone.
    let paths: Vec<&str> = v["files"]
        .as_array()
        .expect("files")
        .iter()
        .filter_map(|f| f["path"].as_str())
        .collect();
    assert_eq!(paths, ["src/list.ts", "src/page.ts", "src/user.ts"]);

    // `show` shows it; `apply` writes it.
    let shown = repo.run(&["show", &id]);
    shown.assert_code(0);
    for line in [
        "+export function fetchUser(id: string) {",
        "+import { other, fetchUser } from \"./user\";",
        "+  return fetchUser(id);",
    ] {
        assert!(shown.stdout.contains(line), "{line}\n{}", shown.stdout);
    }
    let listed = repo.run(&["list"]);
    assert!(listed.stdout.contains("steps"), "{}", listed.stdout);
    repo.run(&["apply", &id]).assert_code(0);
    for (path, text) in [
        ("src/user.ts", USER),
        ("src/page.ts", PAGE),
        ("src/list.ts", LIST),
    ] {
        assert_eq!(repo.read_string(path), renamed(text), "{path}");
    }
    assert_eq!(repo.read_string("tools/gen.py"), PY);

    // Run again: the definition is renamed already, so nothing exports and nothing runs.
    let again = repo.run(&["steps"]);
    again.assert_code(1);
    assert!(
        again.stderr.contains(
            "step 2 (importers) did not run: the steps before it exported no value of $NEW, $OLD"
        ),
        "{}",
        again.stderr
    );
}

#[test]
fn the_text_output_lists_each_step() {
    let repo = ts_repo();
    let out = repo.run(&["steps"]);
    out.assert_code(0);
    for line in [
        "step 1 (definition): 1 change in 1 file; exported $NEW = fetchUser, $OLD = getUser\n",
        "step 2 (importers): 5 changes in 3 files\n",
        "6 changes in 3 files (2 steps)\n",
        "Staged preview ",
    ] {
        assert!(out.stdout.contains(line), "{line}\n{}", out.stdout);
    }
}

#[test]
fn refresh_runs_every_step_again_and_leaves_other_previews_alone() {
    let repo = ts_repo();
    // A preview staged before, of another kind: refreshing the steps leaves it alone.
    let other = repo.run(&["edit", "-p", "other()", "-r", "other2()", "--json"]);
    other.assert_code(0);
    let other_id = other.json()["id"].as_str().expect("id").to_string();
    let other_ref = format!("refs/astedit/{other_id}");
    let other_commit = repo.git(&["rev-parse", &other_ref]);

    let out = repo.run(&["steps", "--json"]);
    out.assert_code(0);
    let old = out.json()["id"].as_str().expect("id").to_string();

    // An unrelated change in a file the preview changes, and a new importer.
    let page = format!("// the page\n{PAGE}");
    repo.write("src/page.ts", &page);
    let more = "import { getUser } from \"./user\";\ngetUser(\"m\");\n";
    repo.write("src/more.ts", more);

    let r = repo.run(&["refresh", &old, "--json"]);
    r.assert_code(0);
    let v = r.json();
    assert_eq!(v["state"], "refreshed", "{v}");
    assert_eq!(v["kind"], "steps");
    assert_eq!(v["replacements_before"], 6);
    assert_eq!(v["replacements_now"], 8);
    assert_eq!(v["newly_matching"], serde_json::json!(["src/more.ts"]));
    let new = v["successor"].as_str().expect("successor").to_string();
    assert_eq!(blob_at(&repo, &new, "src/page.ts"), renamed(&page));
    assert_eq!(blob_at(&repo, &new, "src/more.ts"), renamed(more));
    assert_eq!(blob_at(&repo, &new, "src/user.ts"), renamed(USER));
    assert_eq!(blob_at(&repo, &new, "src/list.ts"), renamed(LIST));

    // The old steps preview is superseded; the edit preview is as it was.
    let now = refs(&repo);
    assert!(now.contains(&format!("refs/astedit/{new}")), "{now:?}");
    assert!(!now.contains(&format!("refs/astedit/{old}")), "{now:?}");
    assert_eq!(repo.git(&["rev-parse", &other_ref]), other_commit);

    repo.run(&["apply", &new]).assert_code(0);
    assert_eq!(repo.read_string("src/page.ts"), renamed(&page));
    assert_eq!(repo.read_string("src/more.ts"), renamed(more));
}

/// Step 2's rule matches only what step 1 wrote: `log(…)` calls exist only after it.
const PY_STEPS: &str = r#"
[[steps]]
name = "print-to-log"
pattern = "print($A)"
rewrite = "log($A)"
lang = "python"

[[steps]]
name = "log-to-logger"
[[steps.rules]]
id = "logger"
language = "python"
rule = { pattern = "log($A)" }
fix = "logger.info($A)"
imports = { add = ["from app.log import logger"] }
"#;

#[test]
fn a_later_step_works_on_what_an_earlier_step_wrote() {
    let repo = TestRepo::new();
    repo.write("astedit.toml", PY_STEPS);
    repo.write("a.py", "import os\n\nprint(os.name)\n");
    repo.write("b.py", "x = 1\n");
    repo.commit_all("init");
    let out = repo.run(&["steps", "--json"]);
    out.assert_code(0);
    let v = out.json();
    let id = v["id"].as_str().expect("id").to_string();
    assert_eq!(
        blob_at(&repo, &id, "a.py"),
        "import os\n\nfrom app.log import logger\n\nlogger.info(os.name)\n"
    );
    assert_eq!(v["file_count"], 1);
    let rows = v["steps"].as_array().expect("steps");
    assert_eq!(
        (rows[0]["changes"].clone(), rows[1]["changes"].clone()),
        (1.into(), 1.into())
    );

    // Step 2 alone finds nothing: it needs step 1's output.
    let alone = repo.run(&["steps", "--step", "log-to-logger", "--json"]);
    alone.assert_code(1);
    assert_eq!(
        alone.json()["warnings"],
        serde_json::json!(["step 2 (log-to-logger) changed nothing"])
    );
}

#[test]
fn a_step_that_changes_nothing_is_reported_not_an_error() {
    let repo = TestRepo::new();
    repo.write(
        "astedit.toml",
        "[[steps]]\nname = \"one\"\npattern = \"a($X)\"\nrewrite = \"b($X)\"\n\n\
         [[steps]]\nname = \"none\"\npattern = \"zzz($X)\"\nrewrite = \"y($X)\"\n",
    );
    repo.write("m.js", "a(1);\n");
    repo.commit_all("init");
    let out = repo.run(&["steps", "--json"]);
    out.assert_code(0);
    let v = out.json();
    assert_eq!(v["staged"], true);
    assert_eq!(
        v["warnings"],
        serde_json::json!(["step 2 (none) changed nothing"])
    );
}

#[test]
fn a_bad_step_is_named_and_nothing_is_staged() {
    let repo = TestRepo::new();
    repo.write("m.ts", "getUser(1);\n");
    repo.write(
        "broken.toml",
        "[[steps]]\nname = \"fine\"\npattern = \"getUser($A)\"\nrewrite = \"fetchUser($A)\"\n\n\
         [[steps]]\nname = \"broken\"\npattern = \"foo((\"\nrewrite = \"bar\"\n",
    );
    repo.write(
        "badrule.toml",
        "[[steps]]\npattern = \"getUser($A)\"\nrewrite = \"fetchUser($A)\"\n\n\
         [[steps]]\n[[steps.rules]]\nid = \"x\"\nlanguage = \"typescript\"\n\
         rule = { patern = \"a\" }\nfix = \"b\"\n",
    );
    repo.write(
        "shape.toml",
        "[[steps]]\nname = \"half\"\npattern = \"getUser($A)\"\n",
    );
    repo.commit_all("init");

    let out = repo.run(&["steps", "-c", "broken.toml"]);
    out.assert_code(2);
    assert!(
        out.stderr
            .starts_with("error: step 2 (broken): pattern 'foo(('"),
        "{}",
        out.stderr
    );

    let out = repo.run(&["steps", "-c", "badrule.toml", "--json"]);
    out.assert_code(2);
    let e = &out.json()["error"];
    assert_eq!(e["code"], "bad-rule", "{e}");
    assert!(
        e["message"]
            .as_str()
            .is_some_and(|m| m.starts_with("step 2: ") && m.contains("patern")),
        "{e}"
    );
    assert_eq!(e["details"]["step"], "step 2");

    let out = repo.run(&["steps", "-c", "shape.toml", "--json"]);
    out.assert_code(2);
    let e = &out.json()["error"];
    assert_eq!(e["code"], "bad-steps");
    assert_eq!(
        e["message"],
        "shape.toml: [[steps]]: step 1 (half): pattern and rewrite go together"
    );

    let out = repo.run(&["steps", "--json"]);
    out.assert_code(2);
    assert_eq!(out.json()["error"]["code"], "bad-steps");

    assert!(refs(&repo).is_empty(), "{:?}", refs(&repo));
    assert_eq!(repo.read_string("m.ts"), "getUser(1);\n");
}

#[test]
fn the_ast_steps_tool_stages_the_same_preview() {
    let repo = ts_repo();
    let mut s = crate::mcp::Server::start(&repo);
    s.handshake("2025-06-18", "steps-client");
    let result = s.call("ast_steps", serde_json::json!({"reason": "rename getUser"}));
    assert_eq!(result["isError"], false, "{result}");
    let text = result["content"][0]["text"].as_str().expect("text");
    assert!(
        text.starts_with(
            "step 1 (definition): 1 change in 1 file; exported $NEW = fetchUser, $OLD = getUser\n\
             step 2 (importers): 5 changes in 3 files\nPreview "
        ),
        "{text}"
    );
    let v = &result["structuredContent"];
    assert_eq!(v["kind"], "steps");
    assert_eq!(v["steps"][1]["changes"], 5);
    let id = v["id"].as_str().expect("id").to_string();
    assert_eq!(blob_at(&repo, &id, "src/page.ts"), renamed(PAGE));
    assert_eq!(repo.read_string("src/page.ts"), PAGE);

    // A config outside the repository is refused before anything is read.
    let out = s.call(
        "ast_steps",
        serde_json::json!({"config": "../astedit.toml"}),
    );
    assert_eq!(out["isError"], true, "{out}");
    drop(s);
}

#[test]
fn a_project_step_names_no_rule_file_outside_the_repository() {
    let repo = TestRepo::new();
    let outside = tempfile::tempdir().expect("tempdir");
    let secret = outside.path().join("rules.yml");
    std::fs::write(
        &secret,
        "id: r\nlanguage: typescript\nrule: { pattern: getUser($A) }\nfix: fetchUser($A)\n",
    )
    .expect("write");
    repo.write("m.ts", "getUser(1);\n");
    let entry = secret.to_string_lossy().replace('\\', "/");
    repo.write(
        "astedit.toml",
        format!("[[steps]]\nname = \"far\"\nrule-files = [\"{entry}\"]\n"),
    );
    repo.commit_all("init");

    let out = repo.run(&["steps", "--json"]);
    out.assert_code(2);
    let e = &out.json()["error"];
    assert_eq!(e["code"], "bad-steps", "{e}");
    let message = e["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("step 1 (far): rule-files:") && message.contains("outside the repository"),
        "{e}"
    );
    assert!(refs(&repo).is_empty(), "{:?}", refs(&repo));

    // A config of the person's own, outside the repository, names what it likes.
    let config = outside.path().join("steps.toml");
    std::fs::write(&config, "[[steps]]\nrule-files = [\"rules.yml\"]\n").expect("write");
    let out = repo.run(&["steps", "-c", &config.to_string_lossy(), "--json"]);
    out.assert_code(0);
    assert_eq!(out.json()["staged"], true);
    assert_eq!(repo.read_string("m.ts"), "getUser(1);\n");
}

/// Issue 53 item 3: an import a step adds that binds a name another import of the
/// file binds (another module's `warn`) leaves that file out of the step, with a
/// warning naming the line; the other files are staged. As a pattern step and as a
/// rule step.
#[test]
fn a_step_s_import_bound_from_another_module_leaves_that_file_out() {
    let repo = TestRepo::new();
    repo.write(
        "a.py",
        "import os\nfrom log import warn\n\nwarn(os.sep)\nprint(1)\n",
    );
    repo.write("b.py", "print(2)\n");
    repo.commit_all("init");
    for step in [
        "pattern = \"print($A)\"\nrewrite = \"warn($A)\"\nadd-import = [\"from app.log import warn\"]\n",
        "[[steps.rules]]\nid = \"warn\"\nlanguage = \"python\"\nrule = { pattern = \"print($A)\" }\n\
         fix = \"warn($A)\"\nimports = { add = [\"from app.log import warn\"] }\n",
    ] {
        repo.write("astedit.toml", format!("[[steps]]\nname = \"warn\"\n{step}"));
        let out = repo.run(&["steps", "--json"]);
        out.assert_code(0);
        let v = out.json();
        let id = v["id"].as_str().expect("id").to_string();
        assert_eq!(
            blob_at(&repo, &id, "b.py"),
            "from app.log import warn\n\nwarn(2)\n"
        );
        assert_eq!(v["file_count"], 1, "{v}");
        let warnings = v["warnings"].to_string();
        assert!(
            warnings.contains("a.py:2: ")
                && warnings.contains("imported already from \\\"log\\\"")
                && warnings.contains("left out of this step"),
            "{v}"
        );
        repo.run(&["discard", &id]).assert_code(0);
    }
}

/// Issue 53 item 6 in a step: `selector` with `lang`, as `edit --selector`.
#[test]
fn a_step_takes_a_selector_with_its_language() {
    let repo = TestRepo::new();
    repo.write(
        "a.py",
        "def f(x: List[int]) -> List[str]:\n    return List[int]\n",
    );
    repo.commit_all("init");
    let step =
        "[[steps]]\nname = \"builtins\"\npattern = \"x: List[$T]\"\nrewrite = \"list[$T]\"\n";
    repo.write(
        "astedit.toml",
        format!("{step}lang = \"python\"\nselector = \"generic_type\"\n"),
    );
    let out = repo.run(&["steps", "--json"]);
    out.assert_code(0);
    let id = out.json()["id"].as_str().expect("id").to_string();
    assert_eq!(
        blob_at(&repo, &id, "a.py"),
        "def f(x: list[int]) -> list[str]:\n    return List[int]\n"
    );
    // Without `lang` each language is tried, as `edit --selector` does.
    repo.write(
        "astedit.toml",
        format!("{step}selector = \"generic_type\"\n"),
    );
    repo.run(&["discard", &id]).assert_code(0);
    repo.run(&["steps", "--json"]).assert_code(0);
}
