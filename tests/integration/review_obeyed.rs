//! Review decisions obeyed by every apply path (issue 50 item 2): the language
//! server's "apply preview", `campaign apply --local`; `list` and `show` say what was
//! decided; dependent changes go with their sites; sites a `verify` run reported on
//! come first.

use serde_json::json;

use crate::campaign_world::World;
use crate::campaign_world::SPEC_HEAD;
use crate::codemods::scan_stage;
use crate::review::pending;
use crate::review::review;
use crate::review::stage;
use crate::util::TestRepo;

/// Two files, each with a `console.log` and a `console.warn` call.
fn two_ops() -> (TestRepo, String) {
    let repo = TestRepo::new();
    for f in ["src/a.js", "src/b.js"] {
        repo.write(f, "console.log(1);\nconsole.warn(2);\n");
    }
    repo.commit_all("init");
    let id = stage(&repo);
    (repo, id)
}

/// The key of the group whose op starts with `op`.
fn group_of(v: &serde_json::Value, op: &str) -> String {
    v["groups"]
        .as_array()
        .expect("groups")
        .iter()
        .find(|g| g["op"].as_str().is_some_and(|o| o.starts_with(op)))
        .and_then(|g| g["key"].as_str())
        .expect("group")
        .to_string()
}

#[test]
fn the_language_servers_apply_obeys_review_decisions_and_says_so() {
    let (repo, id) = two_ops();
    let v = review(&repo, &[&id]);
    let log = group_of(&v, "console.log");
    let warn = group_of(&v, "console.warn");
    let warn_sites = review(&repo, &[&id, "--sites", &warn]);
    let b_warn = warn_sites["sites"]
        .as_array()
        .expect("sites")
        .iter()
        .find(|s| s["path"] == "src/b.js")
        .and_then(|s| s["id"].as_str())
        .expect("b.js's warn")
        .to_string();
    review(&repo, &[&id, "--accept", &log, "--by", "me"]);
    review(&repo, &[&id, "--reject", &b_warn, "--by", "agent X"]);
    // list says what was decided, by whom, under the preview's line.
    let list = repo.run(&["list"]).assert_code(0).stdout.clone();
    assert!(
        list.contains("\n    review: 2 accepted, 1 rejected, 1 undecided (by me, agent X)\n"),
        "{list}"
    );
    let listed = repo.run(&["--json", "list"]).assert_code(0).json();
    crate::contract::validate(&repo, "list", &listed);
    assert_eq!(
        listed["previews"][0]["review"],
        json!({"accepted": 2, "rejected": 1, "undecided": 1, "by": ["me", "agent X"], "obeyed": true}),
    );
    let shown = repo.run(&["--json", "show", &id]).assert_code(0).json();
    crate::contract::validate(&repo, "show", &shown);
    assert_eq!(shown["preview"]["review"], listed["previews"][0]["review"]);

    let mut c = crate::lsp::Client::initialized(&repo, json!({}));
    let r = c.request(
        "workspace/executeCommand",
        json!({"command": "astedit.apply", "arguments": [id]}),
    );
    assert!(r["result"].is_object(), "{r}");
    assert_eq!(r["result"]["review"]["accepted"], 2, "{r}");
    assert_eq!(r["result"]["review"]["rejected"], 1, "{r}");
    assert_eq!(r["result"]["review"]["undecided"], 1, "{r}");
    // Exactly the accepted sites; the rejected one dropped; the undecided one pending.
    assert_eq!(
        repo.read_string("src/a.js"),
        "logger.info(1);\nconsole.warn(2);\n"
    );
    assert_eq!(
        repo.read_string("src/b.js"),
        "logger.info(1);\nconsole.warn(2);\n"
    );
    let rest: Vec<String> = pending(&repo).into_iter().collect();
    assert_eq!(rest.len(), 1, "{rest:?}");
    assert_ne!(rest[0], id);
    // The editor is told, as the terminal is.
    let shown = c.wait(|m| {
        m["method"] == "window/showMessage"
            && m["params"]["message"]
                .as_str()
                .is_some_and(|t| t.contains("Obeyed the review decisions"))
    });
    let text = shown["params"]["message"].as_str().expect("message");
    assert!(text.contains("applied 2 sites accepted"), "{text}");
    assert!(text.contains("dropped 1 site rejected"), "{text}");
    assert!(text.contains(&format!("pending as {}", rest[0])), "{text}");
    assert_eq!(c.shutdown(), 0);
    // The remainder holds the undecided site only, and applies as any preview.
    repo.run(&["apply", &rest[0]]).assert_code(0);
    assert_eq!(
        repo.read_string("src/a.js"),
        "logger.info(1);\nlogger.warn(2);\n"
    );
    assert_eq!(
        repo.read_string("src/b.js"),
        "logger.info(1);\nconsole.warn(2);\n"
    );
}

#[test]
fn campaign_apply_local_obeys_each_checkouts_review_decisions() {
    let w = World::new();
    w.bare("one", &[("x.ts", "console.log(1);\nconsole.log(2);\n")]);
    let dir = w.root.path().join("src").join("one");
    let spec = w.spec(&format!(
        "{SPEC_HEAD}[[repos]]\npath = \"{}\"\n",
        dir.display()
    ));
    w.run(&["--json", "campaign", "stage", &spec])
        .assert_code(0);
    let d = dir.display().to_string();
    let in_clone = |args: &[&str]| {
        let mut all = vec!["-C", d.as_str(), "--json"];
        all.extend_from_slice(args);
        w.run(&all).assert_code(0).json()
    };
    let list = in_clone(&["list"]);
    let id = list["previews"][0]["id"].as_str().expect("id").to_string();
    let v = in_clone(&["review", &id]);
    let key = v["groups"][0]["key"].as_str().expect("key").to_string();
    let sites = in_clone(&["review", &id, "--sites", &key]);
    let second = sites["sites"]
        .as_array()
        .expect("sites")
        .iter()
        .find(|s| s["before"] == "console.log(2);")
        .and_then(|s| s["id"].as_str())
        .expect("the second call's site")
        .to_string();
    in_clone(&["review", &id, "--accept", &key, "--reject", &second]);

    let applied = w.run(&["--json", "campaign", "apply", &spec, "--local"]);
    applied.assert_code(0);
    assert_eq!(applied.json()["totals"]["applied"], 1, "{}", applied.stdout);
    assert_eq!(
        std::fs::read_to_string(dir.join("x.ts")).expect("read"),
        "logger.info(1);\nconsole.log(2);\n"
    );
}

/// Every site of preview `id`: (path, before text, id).
fn all_sites(repo: &TestRepo, id: &str) -> Vec<(String, String, String)> {
    let v = review(repo, &[id]);
    let mut out = Vec::new();
    for g in v["groups"].as_array().expect("groups") {
        let page = review(repo, &[id, "--sites", g["key"].as_str().expect("key")]);
        for s in page["sites"].as_array().expect("sites") {
            let text = |k: &str| s[k].as_str().expect("a string").to_string();
            out.push((text("path"), text("before"), text("id")));
        }
    }
    out
}

#[test]
fn sites_a_verify_run_reported_on_come_first_as_outliers() {
    let repo = TestRepo::new();
    for i in 0..3 {
        repo.write(
            &format!("src/m{i}.js"),
            "function f() {\n  console.log(1);\n\n  console.log(2);\n}\n",
        );
    }
    repo.commit_all("init");
    let v = repo
        .run(&[
            "--json",
            "edit",
            "-p",
            "console.log($A)",
            "-r",
            "logger.info($A)",
        ])
        .assert_code(0)
        .json();
    let id = v["id"].as_str().expect("id").to_string();
    let before = review(&repo, &[&id]);
    assert_eq!(before["outliers"], 0, "{before:#}");
    let ids_of = |repo: &TestRepo| {
        let mut ids: Vec<String> = all_sites(repo, &id).into_iter().map(|s| s.2).collect();
        ids.sort();
        ids
    };
    let ids = ids_of(&repo);
    // A check that fails on m1.js's fourth line (its second call), as a linter says it.
    repo.run(&[
        "verify",
        &id,
        "--",
        "sh",
        "-c",
        "echo 'src/m1.js:4:3: error: logger is not defined'; exit 1",
    ])
    .assert_code(1);
    let v = review(&repo, &[&id]);
    assert_eq!(v["sites"], 6, "{v:#}");
    assert_eq!(v["outliers"], 1, "{v:#}");
    let first = &v["groups"][0];
    assert_eq!(first["count"], 1, "{v:#}");
    assert!(
        first["outlier"]
            .as_str()
            .is_some_and(|w| w.contains("verify")),
        "{v:#}"
    );
    assert_eq!(first["representative"]["path"], "src/m1.js");
    assert_eq!(first["representative"]["before"], "  console.log(2);");
    assert_eq!(v["groups"][1]["count"], 5, "{v:#}");
    // The sites keep their ids: a decision taken before the run still holds.
    assert_eq!(ids_of(&repo), ids);
    let text = repo
        .run(&["review", &id, "--text"])
        .assert_code(0)
        .stdout
        .clone();
    assert!(text.contains("a `verify` run reported on it"), "{text}");
}

/// A rule whose fix needs an import and its enclosing function made `async`.
const AWAIT_RULE: &str =
    "id: await-fetch\nlanguage: typescript\nrule:\n  pattern: fetchSync($A)\n  \
     inside:\n    kind: function_declaration\n    pattern: $FN\n    stopBy: end\n\
     fix: await fetchAsync($A)\nmetadata:\n  astedit:\n    edits:\n      - target: $FN\n        \
     fix: async $FN\n    imports:\n      add: ['import { fetchAsync } from \"./net\"']\n";

const TWO_FUNCTIONS: &str =
    "function one() {\n  return fetchSync(1);\n}\n\nfunction two() {\n  return fetchSync(2);\n}\n";

#[test]
fn an_import_and_an_edits_target_go_exactly_with_their_sites() {
    let repo = TestRepo::new();
    repo.write("rules/await.yml", AWAIT_RULE);
    repo.write("src/a.ts", TWO_FUNCTIONS);
    repo.write("src/b.ts", TWO_FUNCTIONS);
    repo.commit_all("init");
    let id = scan_stage(&repo, "rules/await.yml");
    let staged = repo.git(&["show", &format!("refs/astedit/{id}:src/a.ts")]);
    assert_eq!(
        staged,
        "import { fetchAsync } from \"./net\"\n\nasync function one() {\n  return await fetchAsync(1);\n}\n\n\
         async function two() {\n  return await fetchAsync(2);\n}\n",
        "the preview as staged"
    );
    let v = review(&repo, &[&id]);
    assert_eq!(v["sites"], 4, "{v:#}");
    assert!(v["dependents"].as_u64().is_some_and(|d| d >= 4), "{v:#}");
    // a.ts: `one`'s call accepted, `two`'s left undecided; b.ts: both rejected.
    let sites = all_sites(&repo, &id);
    let a_one = sites
        .iter()
        .find(|(p, b, _)| p == "src/a.ts" && b.contains("fetchSync(1)"))
        .map(|(_, _, id)| id.clone())
        .expect("a.ts's first call");
    let in_b: Vec<String> = sites
        .iter()
        .filter(|(p, _, _)| p == "src/b.ts")
        .map(|(_, _, id)| id.clone())
        .collect();
    assert_eq!(in_b.len(), 2, "{sites:?}");
    review(
        &repo,
        &[&id, "--accept", &a_one, "--reject", &in_b.join(",")],
    );

    repo.run(&["apply", &id]).assert_code(0);
    // The import and `one`'s `async` came with the accepted site; `two` is untouched.
    assert_eq!(
        repo.read_string("src/a.ts"),
        "import { fetchAsync } from \"./net\"\n\nasync function one() {\n  return await fetchAsync(1);\n}\n\n\
         function two() {\n  return fetchSync(2);\n}\n"
    );
    // Every site of b.ts rejected: neither its import nor an `async`.
    assert_eq!(repo.read_string("src/b.ts"), TWO_FUNCTIONS);
    // The undecided site is pending with its own `async`, and no second import.
    let rest: Vec<String> = pending(&repo).into_iter().collect();
    assert_eq!(rest.len(), 1, "{rest:?}");
    repo.run(&["apply", &rest[0]]).assert_code(0);
    assert_eq!(
        repo.read_string("src/a.ts"),
        "import { fetchAsync } from \"./net\"\n\nasync function one() {\n  return await fetchAsync(1);\n}\n\n\
         async function two() {\n  return await fetchAsync(2);\n}\n"
    );
    assert_eq!(repo.read_string("src/b.ts"), TWO_FUNCTIONS);
}
