//! The forges' side: merging only the green approved ones, targets from an org and a
//! query, a GitLab campaign.

use crate::campaign_world::*;
use crate::contract::validate;

/// `campaign merge`: only the open pull requests with passing checks and an approved
/// review are merged (made ready first: they are drafts), by the spec's method, with
/// the head we pushed; one whose branch holds someone else's commit is left alone and
/// recorded diverged.
#[test]
fn campaign_merge_merges_only_the_green_approved_ones_and_never_a_foreign_branch() {
    let w = World::new();
    let head = format!("{SPEC_HEAD}[merge]\nmethod = \"rebase\"\n");
    let spec = w.published(&head, &["g1", "g2", "g3", "g4"]);
    assert_eq!(w.creates(), 4);
    let prs = w.gh.path().join("prs");
    let green = r#"[{"status":"COMPLETED","conclusion":"SUCCESS"}]"#;
    for (k, checks, review) in [
        ("g1", green, "APPROVED"),
        ("g2", green, "REVIEW_REQUIRED"),
        (
            "g3",
            r#"[{"status":"COMPLETED","conclusion":"FAILURE"}]"#,
            "APPROVED",
        ),
        ("g4", green, "APPROVED"),
    ] {
        std::fs::write(prs.join(format!("{k}.checks")), checks).expect("checks");
        std::fs::write(prs.join(format!("{k}.review")), review).expect("review");
    }
    let foreign = w.push(
        "g4",
        "astedit/log-to-logger",
        &[("src/x.ts", "// mine\n")],
        "a fix",
    );

    let merged = w.run(&["--json", "campaign", "merge", &spec]);
    merged.assert_code(1); // g4 diverged
    let r = merged.json();
    validate(&w.state, "campaign", &r);
    let action = |k: &str| {
        r["outcomes"]
            .as_array()
            .expect("outcomes")
            .iter()
            .find(|o| o["key"] == k)
            .map(|o| o["action"].as_str().unwrap_or("").to_string())
            .unwrap_or_default()
    };
    assert_eq!(action("g1"), "merged", "{r}");
    assert_eq!(action("g2"), "waiting", "{r}");
    assert_eq!(action("g3"), "waiting", "{r}");
    assert_eq!(action("g4"), "diverged", "{r}");
    let merges: Vec<Vec<String>> = w
        .calls()
        .into_iter()
        .filter(|c| c.len() > 1 && c[0] == "pr" && c[1] == "merge")
        .collect();
    assert_eq!(merges.len(), 1, "{merges:?}");
    let g1: serde_json::Value = serde_json::from_str(
        &w.state
            .git(&["show", "refs/astedit-campaign/log-to-logger:g1.json"]),
    )
    .expect("g1");
    assert_eq!(g1["status"], "merged");
    assert_eq!(g1["merged_by"], "rebase");
    let pushed = g1["pushed_commit"].as_str().expect("pushed");
    assert_eq!(
        merges[0][2..],
        [
            format!("https://github.com/acme/g1/pull/{}", w.pr_of("g1")),
            "--rebase".to_string(),
            "--delete-branch".to_string(),
            format!("--match-head-commit={pushed}"),
        ]
    );
    // The draft was made ready first; the foreign branch is untouched.
    assert!(w
        .calls()
        .iter()
        .any(|c| c.len() > 2 && c[1] == "ready" && c[2].contains("/g1/")));
    assert_eq!(w.bare_rev("g4", "astedit/log-to-logger"), foreign);
    let status = w
        .run(&["--json", "campaign", "status", &spec, "--offline"])
        .json();
    assert_eq!(status["totals"]["merged"], 1, "{status}");
    assert_eq!(status["totals"]["diverged"], 1, "{status}");
    // Approved now: a second run merges g2 and nothing else.
    std::fs::write(prs.join("g2.review"), "APPROVED").expect("review");
    w.run(&["--json", "campaign", "merge", &spec])
        .assert_code(0);
    let merges = w
        .calls()
        .into_iter()
        .filter(|c| c.len() > 1 && c[0] == "pr" && c[1] == "merge")
        .count();
    assert_eq!(merges, 2);
}

/// `[targets]`: an owner's repositories (not archived, not forks, with the topics) and
/// a search's (with the language), through the stand-in's `repo list` and `search
/// repos`; `--dry-run` lists them and stages nothing, `stage` records each in the state.
#[test]
fn targets_from_an_org_and_a_query_are_resolved_at_stage() {
    let w = World::new();
    let url = |k: &str| {
        w.bare(k, &[("src/app.ts", "console.log(1);\n")])
            .display()
            .to_string()
    };
    let listed = serde_json::json!([
        {"nameWithOwner": "acme/t1", "url": url("t1"), "isArchived": false, "isFork": false,
         "repositoryTopics": [{"name": "web"}], "primaryLanguage": {"name": "TypeScript"},
         "defaultBranchRef": {"name": "main"}},
        {"nameWithOwner": "acme/t2", "url": url("t2"), "isArchived": true, "isFork": false,
         "repositoryTopics": [{"name": "web"}]},
        {"nameWithOwner": "acme/t3", "url": url("t3"), "isArchived": false, "isFork": true,
         "repositoryTopics": [{"name": "web"}]},
        {"nameWithOwner": "acme/t4", "url": url("t4"), "isArchived": false, "isFork": false,
         "repositoryTopics": [{"name": "cli"}]},
        {"nameWithOwner": "acme/t5", "url": url("t5"), "isArchived": false, "isFork": false,
         "repositoryTopics": [{"name": "Web"}, {"name": "x"}], "defaultBranchRef": {"name": "main"}},
    ]);
    std::fs::write(w.gh.path().join("repo-list.json"), listed.to_string()).expect("list");
    let spec = w.spec(&format!(
        "{SPEC_HEAD}[targets]\norg = \"acme\"\ntopics = [\"web\"]\n"
    ));
    let dry = w.run(&["--json", "campaign", "stage", &spec, "--dry-run"]);
    dry.assert_code(0);
    let d = dry.json();
    validate(&w.state, "campaign-targets", &d);
    let keys: Vec<&str> = d["repos"]
        .as_array()
        .expect("repos")
        .iter()
        .map(|r| r["key"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(keys, ["t1", "t5"], "{d}");
    assert_eq!(d["repos"][0]["from"], "org acme");
    assert!(w
        .state
        .git(&["for-each-ref", "refs/astedit-campaign/"])
        .is_empty());
    let list_call = w
        .calls()
        .into_iter()
        .find(|c| c.len() > 1 && c[0] == "repo")
        .expect("repo list");
    assert_eq!(list_call.last().map(String::as_str), Some("acme"));
    assert_eq!(list_call[list_call.len() - 2], "--");

    let ws = w.workspace();
    let staged = w.run(&["--json", "campaign", "stage", &spec, "--workspace", &ws]);
    staged.assert_code(0);
    let r = staged.json();
    assert_eq!(r["totals"]["staged"], 2, "{r}");
    assert!(r["notes"]
        .as_array()
        .expect("notes")
        .iter()
        .any(|n| n == "targets: 2 repositories from org acme"));
    let tree = w.state.git(&[
        "ls-tree",
        "--name-only",
        "refs/astedit-campaign/log-to-logger",
    ]);
    assert_eq!(tree, "t1.json\nt5.json\n");

    // A search, kept by language.
    let found = serde_json::json!([
        {"fullName": "other/q1", "url": url("q1"), "isArchived": false, "isFork": false,
         "language": "TypeScript", "defaultBranch": "main"},
        {"fullName": "other/q2", "url": url("q2"), "isArchived": false, "isFork": false,
         "language": "Go"},
    ]);
    std::fs::write(w.gh.path().join("search-repos.json"), found.to_string()).expect("search");
    let spec = w.spec(&format!(
        "{SPEC_HEAD}[targets]\nquery = \"console.log in:file\"\nlanguage = \"typescript\"\n"
    ));
    let d = w
        .run(&["--json", "campaign", "stage", &spec, "--dry-run"])
        .json();
    assert_eq!(d["repos"].as_array().expect("repos").len(), 1, "{d}");
    assert_eq!(d["repos"][0]["key"], "q1");
    assert_eq!(d["repos"][0]["from"], "query console.log in:file");
    let search = w
        .calls()
        .into_iter()
        .find(|c| c.len() > 1 && c[0] == "search")
        .expect("search repos");
    assert_eq!(
        search.last().map(String::as_str),
        Some("console.log in:file")
    );
}

/// `forge = "gitlab"`: the same campaign through the stand-in `glab` — stage, publish
/// twice (one merge request), refresh (the moved request described again), status (the
/// pipeline as checks, approvals as the review) and merge.
#[test]
fn a_gitlab_campaign_publishes_one_merge_request_refreshes_tracks_and_merges() {
    let w = World::new();
    let mut spec = SPEC_HEAD.replace(
        "name = \"log-to-logger\"\n",
        "name = \"log-to-logger\"\nforge = \"gitlab\"\n",
    );
    for k in ["l1", "l2"] {
        let files: &[(&str, &str)] = if k == "l1" {
            &[("src/app.ts", "console.log(1);\n")]
        } else {
            &[("README", "plain\n")]
        };
        let b = w.bare(k, files);
        spec.push_str(&format!(
            "[[repos]]\nurl = \"{}\"\nbase = \"main\"\n",
            b.display()
        ));
    }
    let spec = w.spec(&spec);
    let ws = w.workspace();
    w.run(&["campaign", "stage", &spec, "--workspace", &ws])
        .assert_code(0);
    let glab = |sub: &str| -> Vec<Vec<String>> {
        w.calls()
            .into_iter()
            .filter(|c| c.len() > 2 && c[0] == "glab" && c[1] == "mr" && c[2] == sub)
            .collect()
    };
    for _ in 0..2 {
        let p = w.run(&["--json", "campaign", "publish", &spec]);
        p.assert_code(0);
        assert_eq!(p.json()["totals"]["published"], 1, "{}", p.stdout);
    }
    let creates = glab("create");
    assert_eq!(creates.len(), 1, "{creates:?}");
    let c = &creates[0];
    assert!(
        c.contains(&"--source-branch=astedit/log-to-logger".to_string()),
        "{c:?}"
    );
    assert!(c.contains(&"--target-branch=main".to_string()), "{c:?}");
    assert!(
        c.contains(&"--draft".to_string()) && c.contains(&"--yes".to_string()),
        "{c:?}"
    );
    assert!(c.contains(&"--label=codemod".to_string()), "{c:?}");
    assert_eq!(w.creates(), 0, "gh never ran for it");
    let l1: serde_json::Value = serde_json::from_str(
        &w.state
            .git(&["show", "refs/astedit-campaign/log-to-logger:l1.json"]),
    )
    .expect("l1");
    assert_eq!(l1["forge"], "gitlab");
    assert_eq!(
        l1["pr_url"],
        "https://gitlab.com/acme/l1/-/merge_requests/1"
    );
    assert_eq!(
        w.bare_show("l1", "astedit/log-to-logger:src/app.ts"),
        "logger.info(1);\n"
    );

    // The base moves: the branch is rebuilt and the request described again.
    w.push(
        "l1",
        "main",
        &[("src/new.ts", "console.log(2);\n")],
        "more code",
    );
    w.run(&["--json", "campaign", "refresh", &spec])
        .assert_code(0);
    assert_eq!(
        w.bare_show("l1", "astedit/log-to-logger:src/new.ts"),
        "logger.info(2);\n"
    );
    let updates = glab("update");
    assert_eq!(updates.len(), 1, "{updates:?}");
    assert_eq!(updates[0][3], "1");
    assert!(updates[0][4].starts_with("--title=") && updates[0][5].starts_with("--description="));

    // Status: the pipeline and the approvals.
    let mrs = w.gh.path().join("mrs");
    std::fs::write(mrs.join("l1.pipeline"), "running").expect("pipeline");
    let s = w.run(&["--json", "campaign", "status", &spec]).json();
    assert_eq!(by_key(&s)["l1"]["checks"], "pending", "{s}");
    assert_eq!(by_key(&s)["l1"]["review"], "REVIEW_REQUIRED");
    let m = w.run(&["--json", "campaign", "merge", &spec]).json();
    assert_eq!(m["outcomes"][0]["action"], "waiting", "{m}");
    std::fs::write(mrs.join("l1.pipeline"), "success").expect("pipeline");
    std::fs::write(
        mrs.join("l1.approvals"),
        r#"{"iid":1,"project_id":7,"approved":true,"approvals_required":1,"approvals_left":0,"approved_by":[{"user":{"id":2,"username":"reviewer"}}]}"#,
    )
    .expect("approvals");
    let m = w.run(&["--json", "campaign", "merge", &spec]);
    m.assert_code(0);
    let merges = glab("merge");
    assert_eq!(merges.len(), 1, "{}", m.stdout);
    let pushed = w.bare_rev("l1", "astedit/log-to-logger");
    assert_eq!(
        merges[0][3..],
        [
            "1".to_string(),
            "--yes".to_string(),
            "--squash".to_string(),
            "--remove-source-branch".to_string(),
            format!("--sha={pushed}"),
        ]
    );
    let s = w
        .run(&["--json", "campaign", "status", &spec, "--offline"])
        .json();
    assert_eq!(s["totals"]["merged"], 1, "{s}");
}
