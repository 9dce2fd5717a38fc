//! What a refresh covers: `--all` and newly matching files, the project's language globs,
//! the `resolve` tool's `refresh` and paths, a symlinked folder, previews with old recipes.

use super::fifty;
use super::path;
use super::reformatted;
use super::source;
use super::swapped;
use super::Mcp;
use crate::util::TestRepo;

#[test]
fn refresh_all_picks_up_newly_matching_files() {
    let (repo, old) = fifty();
    repo.write("src/new.js", "foo(a, b);\n");
    repo.write(&path(5), reformatted(5));
    let out = repo.run(&["refresh", "--all", &old, "--json"]);
    out.assert_code(0);
    let v = out.json();
    assert_eq!(
        v["newly_matching"],
        serde_json::json!(["src/new.js"]),
        "{v}"
    );
    assert_eq!(v["same_counts"], false);
    assert_eq!(v["replacements_now"], 51);
    let schema = repo.run(&["schema", "refresh"]);
    schema.assert_code(0);
    assert!(schema.stdout.contains("newly_matching"));
}

/// `refresh --all` collects new files as the edit did, with the project's root
/// `sgconfig.yml`: a new `.es6` file is JavaScript by its languageGlobs.
#[test]
fn refresh_all_reads_the_projects_language_globs() {
    let repo = TestRepo::new();
    repo.write(
        "sgconfig.yml",
        "ruleDirs: []\nlanguageGlobs:\n  javascript: ['*.es6']\n",
    );
    repo.write("src/a.es6", "foo(1);\n");
    repo.commit_all("init");
    let out = repo.run(&["edit", "-p", "foo($A)", "-r", "bar($A)", "--json"]);
    out.assert_code(0);
    let old = out.json()["id"].as_str().expect("id").to_string();
    repo.write("src/b.es6", "foo(2);\n");
    let out = repo.run(&["refresh", "--all", &old, "--json"]);
    out.assert_code(0);
    let v = out.json();
    assert_eq!(v["newly_matching"], serde_json::json!(["src/b.es6"]), "{v}");
}

#[test]
fn mcp_resolve_takes_refresh_and_paths() {
    let (repo, old) = fifty();
    repo.write(&path(9), reformatted(9));
    let mut mcp = Mcp::start(&repo);
    // Stale without refresh: refused as ever.
    let r = mcp.resolve(serde_json::json!({"action": "apply", "id": old, "reason": "r"}));
    assert_eq!(r["isError"], true, "{r}");
    // refresh + paths: refused as a usage error.
    let r = mcp.resolve(
        serde_json::json!({"action": "apply", "id": old, "reason": "r",
        "refresh": true, "paths": ["src"]}),
    );
    assert_eq!(r["isError"], true, "{r}");
    let r = mcp.resolve(
        serde_json::json!({"action": "apply", "id": old, "reason": "r",
        "refresh": true}),
    );
    assert_eq!(r["isError"], false, "{r}");
    let v = &r["structuredContent"];
    assert_eq!(v["refreshed"]["id"], old.as_str(), "{v}");
    assert_eq!(v["id"], v["refreshed"]["successor"]);
    assert_eq!(repo.read_string(&path(9)), swapped(&reformatted(9), 9));
    drop(mcp);

    // paths: a partial apply.
    let (repo, old) = fifty();
    let mut mcp = Mcp::start(&repo);
    let r = mcp.resolve(
        serde_json::json!({"action": "apply", "id": old, "reason": "r",
        "paths": ["src/f1*"]}),
    );
    assert_eq!(r["isError"], false, "{r}");
    let v = &r["structuredContent"];
    assert_eq!(v["split"]["parent"], old.as_str(), "{v}");
    assert_eq!(v["file_count"], 10);
    assert_eq!(repo.read_string(&path(12)), swapped(&source(12), 12));
    assert_eq!(repo.read_string(&path(22)), source(22));
    let rest = v["split"]["remainder"].as_str().expect("remainder");
    assert_eq!(repo.astedit_refs(), vec![format!("refs/astedit/{rest}")]);
    repo.fsck();
}

#[test]
fn refresh_all_of_a_scan_fixes_newly_matching_files_under_its_pathspecs() {
    let repo = TestRepo::new();
    repo.write(
        "astedit.toml",
        "[[rules]]\nid = \"no-bar\"\nlanguage = \"javascript\"\nrule.pattern = \"bar($A)\"\nfix = \"qux($A)\"\nmessage = \"no bar\"\nseverity = \"warning\"\n",
    );
    repo.write("src/a.js", "bar(1);\n");
    repo.write("lib/b.js", "bar(2);\n");
    repo.commit_all("init");
    let out = repo.run_in("src", &["scan", "--stage", ".", "--json"]);
    out.assert_code(0);
    let old = out.json()["id"].as_str().expect("id").to_string();
    repo.write("src/c.js", "bar(3);\n");
    repo.write("lib/d.js", "bar(4);\n");
    let v = repo.run(&["refresh", "--all", &old, "--json"]).json();
    assert_eq!(v["newly_matching"], serde_json::json!(["src/c.js"]), "{v}");
    assert_eq!(v["replacements_now"], 2);
    let new = v["successor"].as_str().expect("successor").to_string();
    repo.run(&["apply", &new]).assert_code(0);
    assert_eq!(repo.read_string("src/c.js"), "qux(3);\n");
    assert_eq!(repo.read_string("lib/d.js"), "bar(4);\n");
    assert_eq!(repo.read_string("lib/b.js"), "bar(2);\n");
}

/// A folder on the way that became a symlink: the refresh refuses (exit 4) before
/// reading through it, and the preview stays pending.
#[cfg(unix)]
#[test]
fn refresh_refuses_a_path_behind_a_symlinked_folder() {
    let repo = TestRepo::new();
    repo.write("src/a.js", "foo(1, 2);\n");
    repo.commit_all("init");
    let out = repo.run(&["edit", "-p", "foo($A, $B)", "-r", "foo($B, $A)", "--json"]);
    out.assert_code(0);
    let id = out.json()["id"].as_str().expect("id").to_string();
    let outside = tempfile::tempdir().expect("tempdir");
    std::fs::write(outside.path().join("a.js"), "foo(3, 4);\n").expect("write");
    std::fs::rename(repo.path().join("src"), repo.path().join("src.old")).expect("mv");
    std::os::unix::fs::symlink(outside.path(), repo.path().join("src")).expect("symlink");
    let out = repo.run(&["refresh", &id, "--json"]);
    out.assert_code(4);
    assert_eq!(out.json()["error"]["code"], "refused");
    assert_eq!(repo.astedit_refs(), vec![format!("refs/astedit/{id}")]);
}

/// Rewrites pending preview `id` as a version before the typed recipes would have
/// staged it: `recipe` (`None`: nothing) in place of `details.refresh`. Returns the
/// rewritten preview's id.
fn with_old_recipe(repo: &TestRepo, id: &str, recipe: Option<serde_json::Value>) -> String {
    const BEGIN: &str = "--- astedit-meta v1 ---\n";
    const END: &str = "\n--- end astedit-meta ---";
    let commit = repo.git(&["rev-parse", &format!("refs/astedit/{id}")]);
    let commit = commit.trim();
    let tree = repo.git(&["rev-parse", &format!("{commit}^{{tree}}")]);
    let parent = repo.git(&["rev-parse", &format!("{commit}^")]);
    let message = repo.git(&["log", "-1", "--format=%B", commit]);
    let start = message.find(BEGIN).expect("metadata block") + BEGIN.len();
    let end = start + message[start..].find(END).expect("end of metadata");
    let mut envelope: serde_json::Value =
        serde_json::from_str(&message[start..end]).expect("metadata json");
    let details = envelope["meta"]["details"]
        .as_object_mut()
        .expect("details");
    match recipe {
        Some(r) => details.insert("refresh".into(), r),
        None => details.remove("refresh"),
    };
    let rewritten = format!(
        "{}{}{}",
        &message[..start],
        serde_json::to_string_pretty(&envelope).expect("json"),
        &message[end..]
    );
    let new = repo.git(&[
        "commit-tree",
        tree.trim(),
        "-p",
        parent.trim(),
        "-m",
        rewritten.trim_end(),
    ]);
    let new = new.trim();
    let new_id = &new[..12];
    repo.git(&["update-ref", &format!("refs/astedit/{new_id}"), new]);
    repo.git(&["update-ref", "-d", &format!("refs/astedit/{id}")]);
    new_id.to_string()
}

/// Previews staged by older versions recorded untyped recipes with fewer fields (a
/// scan's first recipe had no file set) or none at all (an edit's): they still
/// refresh, each missing field read as its default.
#[test]
fn previews_with_old_untyped_recipes_still_refresh() {
    let repo = TestRepo::new();
    repo.write(
        "astedit.toml",
        "[[rules]]\nid = \"no-bar\"\nlanguage = \"javascript\"\nrule.pattern = \"bar($A)\"\nfix = \"qux($A)\"\nmessage = \"no bar\"\nseverity = \"warning\"\n",
    );
    repo.write("src/a.js", "bar(1);\n\n\n\nlet x = 1;\n");
    repo.write("lib/b.js", "foo(1, 2);\n");
    repo.commit_all("init");
    let out = repo.run_in("src", &["scan", "--stage", ".", "--json"]);
    out.assert_code(0);
    let staged = out.json()["id"].as_str().expect("id").to_string();
    let shown = repo.run(&["show", &staged, "--json"]).json();
    let recipe = shown["meta"]["details"]["refresh"].clone();
    // The first scan recipes: configs, digest, rules and passes only.
    let old = with_old_recipe(
        &repo,
        &staged,
        Some(serde_json::json!({
            "configs": recipe["configs"],
            "rules_digest": recipe["rules_digest"],
            "only_rules": [],
            "max_passes": recipe["max_passes"],
        })),
    );
    // A stale path re-runs the rules; --all, with no file set recorded, runs them
    // over the whole tree from the top (what that version meant).
    repo.write("src/a.js", "bar(1);\n\n\n\nlet x  =  1;\nbar(3);\n");
    repo.write("lib/d.js", "bar(4);\n");
    let v = repo.run(&["refresh", "--all", &old, "--json"]).json();
    assert_eq!(v["state"], "refreshed", "{v}");
    assert_eq!(v["files"][0]["path"], "lib/d.js", "{v}");
    assert_eq!(v["newly_matching"], serde_json::json!(["lib/d.js"]), "{v}");
    let a = v["files"]
        .as_array()
        .expect("rows")
        .iter()
        .find(|f| f["path"] == "src/a.js")
        .expect("src/a.js")
        .clone();
    assert_eq!(a["how"], "rerun", "{v}");
    assert_eq!(a["now"], 2, "{v}");
    let new = v["successor"].as_str().expect("successor").to_string();
    repo.run(&["apply", &new]).assert_code(0);
    assert_eq!(
        repo.read_string("src/a.js"),
        "qux(1);\n\n\n\nlet x  =  1;\nqux(3);\n"
    );
    assert_eq!(repo.read_string("lib/d.js"), "qux(4);\n");

    // An edit staged before edits recorded anything: its ops still re-run, and
    // --all says it took the whole work tree.
    let out = repo.run(&["edit", "-p", "foo($A, $B)", "-r", "foo($B, $A)", "--json"]);
    out.assert_code(0);
    let staged = out.json()["id"].as_str().expect("id").to_string();
    let old = with_old_recipe(&repo, &staged, None);
    repo.write("lib/b.js", "// moved\nfoo(1, 2);\n");
    repo.write("lib/e.js", "foo(3, 4);\n");
    let v = repo.run(&["refresh", "--all", &old, "--json"]).json();
    assert_eq!(v["state"], "refreshed", "{v}");
    assert_eq!(v["newly_matching"], serde_json::json!(["lib/e.js"]), "{v}");
    assert!(
        v["notes"].as_array().expect("notes").iter().any(|n| n
            .as_str()
            .is_some_and(|n| n.contains("did not record its file set"))),
        "{v}"
    );
    let new = v["successor"].as_str().expect("successor").to_string();
    repo.run(&["apply", &new]).assert_code(0);
    assert_eq!(repo.read_string("lib/b.js"), "// moved\nfoo(2, 1);\n");
    assert_eq!(repo.read_string("lib/e.js"), "foo(4, 3);\n");
    repo.fsck();
}
