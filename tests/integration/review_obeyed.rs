//! Review decisions obeyed by every apply path (issue 50 item 2): the language
//! server's "apply preview", `campaign apply --local`; `list` and `show` say what was
//! decided; sites a `verify` run reported on come first.

use serde_json::json;

use crate::campaign_world::World;
use crate::campaign_world::SPEC_HEAD;
use crate::util::TestRepo;

/// Two files, each with a `console.log` and a `console.warn` call.
fn two_ops() -> (TestRepo, String) {
    let repo = TestRepo::new();
    for f in ["src/a.js", "src/b.js"] {
        repo.write(f, "console.log(1);\nconsole.warn(2);\n");
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
            "-p",
            "console.warn($A)",
            "-r",
            "logger.warn($A)",
        ])
        .assert_code(0)
        .json();
    let id = v["id"].as_str().expect("id").to_string();
    (repo, id)
}

fn review(repo: &TestRepo, args: &[&str]) -> serde_json::Value {
    let mut full = vec!["--json", "review"];
    full.extend_from_slice(args);
    repo.run(&full).assert_code(0).json()
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

fn pending(repo: &TestRepo) -> Vec<String> {
    repo.run(&["--json", "list"]).assert_code(0).json()["previews"]
        .as_array()
        .expect("previews")
        .iter()
        .map(|p| p["id"].as_str().expect("id").to_string())
        .collect()
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
    let rest = pending(&repo);
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
