//! Staging a campaign: the whole cycle over the 25 repositories, local checkouts, shards,
//! parallel stages, a state that moved under a run, a campaign by command.

use std::path::Path;

use super::twenty_five;
use crate::campaign_world::*;
use crate::contract::validate;
use crate::util::TestRepo;

#[test]
fn stage_status_publish_canary_continue_refresh_and_merge() {
    let w = World::new();
    let spec = twenty_five(&w);
    let ws = w.workspace();

    // Stage: every repository recorded, failures with their reason.
    let staged = w.run(&["--json", "campaign", "stage", &spec, "--workspace", &ws]);
    staged.assert_code(1); // two failed
    let r = staged.json();
    validate(&w.state, "campaign", &r);
    assert_eq!(r["totals"]["staged"], 10, "{r}");
    assert_eq!(r["totals"]["no-change"], 13, "{r}");
    assert_eq!(r["totals"]["failed"], 2, "{r}");
    let outcomes = r["outcomes"].as_array().expect("outcomes");
    assert_eq!(outcomes.len(), 25);
    let broken = outcomes
        .iter()
        .find(|o| o["key"] == "broken")
        .expect("broken");
    assert!(
        broken["note"].as_str().expect("note").contains("not parse"),
        "{broken}"
    );
    let nowhere = outcomes
        .iter()
        .find(|o| o["key"] == "nowhere")
        .expect("nowhere");
    assert!(
        nowhere["note"].as_str().expect("note").contains("clone"),
        "{nowhere}"
    );
    // The state is in git: one entry per repository, one commit per change.
    let tree = w.state.git(&[
        "ls-tree",
        "--name-only",
        "refs/astedit-campaign/log-to-logger",
    ]);
    assert_eq!(tree.lines().count(), 25);
    let commits = w
        .state
        .git(&["rev-list", "--count", "refs/astedit-campaign/log-to-logger"]);
    assert_eq!(commits.trim(), "25");
    // The preview is staged in the clone, as `edit` stages it.
    let m01 = Path::new(&ws).join("m01");
    let entry: serde_json::Value = serde_json::from_str(
        &w.state
            .git(&["show", "refs/astedit-campaign/log-to-logger:m01.json"]),
    )
    .expect("entry");
    let id = entry["preview"].as_str().expect("preview");
    let after = w.git_in(&m01, &["show", &format!("refs/astedit/{id}:src/app.ts")]);
    assert_eq!(after, "logger.info(1);\nconst x = 2;\n");
    assert_eq!(entry["files"], serde_json::json!(["src/app.ts"]));
    assert_eq!(entry["replacements"], 1);

    // A second stage changes nothing.
    let again = w.run(&["--json", "campaign", "stage", &spec, "--workspace", &ws]);
    let commits2: usize = w
        .state
        .git(&["rev-list", "--count", "refs/astedit-campaign/log-to-logger"])
        .trim()
        .parse()
        .expect("count");
    assert!(
        commits2 <= 26,
        "only a failure may be recorded again: {}",
        again.stdout
    );

    // Status, offline: per repository and the burndown over the state history.
    let status = w.run(&["--json", "campaign", "status", &spec, "--offline"]);
    status.assert_code(0);
    let s = status.json();
    validate(&w.state, "campaign-status", &s);
    assert_eq!(s["burndown"].as_array().expect("burndown").len(), commits2);
    assert_eq!(s["totals"]["staged"], 10);

    // Publish with a canary of 2: two PRs, the rest wait.
    let canary = w.run(&["--json", "campaign", "publish", &spec, "--canary", "2"]);
    canary.assert_code(0);
    let c = canary.json();
    validate(&w.state, "campaign", &c);
    assert_eq!(c["totals"]["published"], 2, "{c}");
    assert_eq!(w.creates(), 2);
    let create = w
        .calls()
        .into_iter()
        .find(|c| c.len() > 1 && c[1] == "create" && c.iter().any(|a| a.contains("for m01.")))
        .expect("create");
    assert!(create.contains(&"--draft".to_string()), "{create:?}");
    assert!(
        create.contains(&"--label=codemod".to_string()),
        "{create:?}"
    );
    assert!(
        create.contains(&"--reviewer=octocat".to_string()),
        "{create:?}"
    );
    assert!(c["notes"].as_array().expect("notes").iter().any(|n| n
        .as_str()
        .unwrap_or("")
        .starts_with("rate limit 6000 per minute")));
    assert!(
        create.contains(&"--title=Route logs through the logger".to_string()),
        "{create:?}"
    );
    assert!(
        create
            .iter()
            .any(|a| a.starts_with("--body=Automated change for m01.")),
        "{create:?}"
    );
    // The branch holds the change on top of the base.
    assert_eq!(
        w.bare_show("m01", "astedit/log-to-logger:src/app.ts"),
        "logger.info(1);\nconst x = 2;\n"
    );
    assert_eq!(
        w.bare_rev("m01", "astedit/log-to-logger~"),
        w.bare_rev("m01", "main")
    );

    // Without --continue, an unmerged canary holds the rest back.
    let held = w.run(&["--json", "campaign", "publish", &spec]);
    held.assert_code(0);
    assert_eq!(w.creates(), 2);
    assert!(held.json()["notes"][0]
        .as_str()
        .expect("note")
        .contains("waiting for the canary"));

    // --continue publishes the rest; a rerun opens nothing new.
    w.run(&["--json", "campaign", "publish", &spec, "--continue"])
        .assert_code(0);
    assert_eq!(w.creates(), 10);
    w.run(&["--json", "campaign", "publish", &spec, "--continue"])
        .assert_code(0);
    assert_eq!(w.creates(), 10);

    // The base moves in m03 and m04 (with a new match); someone pushes to m05's PR
    // branch, and its base moves too.
    w.push(
        "m03",
        "main",
        &[("src/new.ts", "console.log(3);\n")],
        "more code",
    );
    w.push(
        "m04",
        "main",
        &[("src/new.ts", "console.log(4);\n")],
        "more code",
    );
    let foreign = w.push(
        "m05",
        "astedit/log-to-logger",
        &[("src/extra.ts", "// mine\n")],
        "a reviewer's fix",
    );
    w.push("m05", "main", &[("src/new.ts", "x;\n")], "moved");
    // In m06 the base rewrites the very line the preview changes: a conflict.
    w.push(
        "m06",
        "main",
        &[("src/app.ts", "console.log(7);\nconst x = 2;\n")],
        "edit the call",
    );
    let m06_branch = w.bare_rev("m06", "astedit/log-to-logger");

    let refreshed = w.run(&["--json", "campaign", "refresh", &spec]);
    refreshed.assert_code(1); // m05 diverged
    let rr = refreshed.json();
    validate(&w.state, "campaign", &rr);
    let action = |k: &str| {
        rr["outcomes"]
            .as_array()
            .expect("outcomes")
            .iter()
            .find(|o| o["key"] == k)
            .map(|o| o["action"].as_str().unwrap_or("").to_string())
    };
    assert_eq!(action("m03").as_deref(), Some("moved"), "{rr}");
    assert_eq!(action("m04").as_deref(), Some("moved"), "{rr}");
    assert_eq!(action("m05").as_deref(), Some("diverged"), "{rr}");
    assert_eq!(action("m06").as_deref(), Some("conflict"), "{rr}");
    assert_eq!(action("m07").as_deref(), Some("current"), "{rr}");
    assert_eq!(w.bare_rev("m06", "astedit/log-to-logger"), m06_branch);
    let m06: serde_json::Value = serde_json::from_str(
        &w.state
            .git(&["show", "refs/astedit-campaign/log-to-logger:m06.json"]),
    )
    .expect("m06");
    assert_eq!(m06["status"], "stale");
    let why = m06["reason"].as_str().expect("reason");
    assert!(why.contains("src/app.ts") && why.contains("line"), "{why}");
    // Moved onto the new base, the new match included (refresh --all).
    assert_eq!(
        w.bare_rev("m03", "astedit/log-to-logger~"),
        w.bare_rev("m03", "main")
    );
    assert_eq!(
        w.bare_show("m03", "astedit/log-to-logger:src/new.ts"),
        "logger.info(3);\n"
    );
    // The branch with someone's commit is untouched.
    assert_eq!(w.bare_rev("m05", "astedit/log-to-logger"), foreign);
    let m05: serde_json::Value = serde_json::from_str(
        &w.state
            .git(&["show", "refs/astedit-campaign/log-to-logger:m05.json"]),
    )
    .expect("m05");
    assert_eq!(m05["status"], "diverged");
    assert!(m05["reason"]
        .as_str()
        .expect("reason")
        .contains("left alone"));
    // Still one PR each; the two moved ones had title and body written again (their
    // previews changed), no other.
    assert_eq!(w.creates(), 10);
    let mut edited: Vec<String> = w
        .calls()
        .iter()
        .filter(|c| c.len() > 4 && c[0] == "pr" && c[1] == "edit")
        .map(|c| {
            assert!(
                c[3].starts_with("--title=") && c[4].starts_with("--body="),
                "{c:?}"
            );
            c[2].rsplit('/').nth(2).unwrap_or("").to_string()
        })
        .collect();
    edited.sort(); // refreshed at the same time: any order
    assert_eq!(edited, ["m03", "m04"], "{:?}", w.calls());

    // The forge merges one and closes another: status records it.
    w.flip("m01", "MERGED");
    w.flip("m02", "CLOSED");
    // Checks and reviews of open ones, as gh's `statusCheckRollup`/`reviewDecision`.
    let prs = w.gh.path().join("prs");
    std::fs::write(
        prs.join("m03.checks"),
        r#"[{"status":"COMPLETED","conclusion":"SUCCESS"},{"status":"COMPLETED","conclusion":"FAILURE"}]"#,
    )
    .expect("checks");
    std::fs::write(prs.join("m03.review"), "CHANGES_REQUESTED").expect("review");
    std::fs::write(
        prs.join("m04.checks"),
        r#"[{"status":"COMPLETED","conclusion":"SUCCESS"},{"state":"PENDING"}]"#,
    )
    .expect("checks");
    std::fs::write(
        prs.join("m07.checks"),
        r#"[{"status":"COMPLETED","conclusion":"SUCCESS"},{"state":"SUCCESS"}]"#,
    )
    .expect("checks");
    std::fs::write(prs.join("m07.review"), "APPROVED").expect("review");
    let after = w.run(&["--json", "campaign", "status", &spec]);
    after.assert_code(0);
    let a = after.json();
    validate(&w.state, "campaign-status", &a);
    let repos = by_key(&a);
    assert_eq!(repos["m01"]["status"], "merged");
    assert_eq!(repos["m02"]["status"], "closed");
    assert_eq!(repos["m03"]["pr_number"], w.pr_of("m03"));
    assert_eq!(repos["m03"]["checks"], "failing", "{a}");
    assert_eq!(repos["m03"]["review"], "CHANGES_REQUESTED");
    assert_eq!(repos["m04"]["checks"], "pending");
    assert_eq!(repos["m04"].get("review"), None);
    assert_eq!(repos["m07"]["checks"], "passing");
    assert_eq!(repos["m07"]["review"], "APPROVED");
    assert_eq!(repos["m08"].get("checks"), None);
    let text = w.run(&["campaign", "status", &spec, "--offline"]);
    assert!(
        text.stdout.contains(&format!(
            "pull/{} [failing, CHANGES_REQUESTED]",
            w.pr_of("m03")
        )),
        "{}",
        text.stdout
    );
    assert_eq!(a["totals"]["merged"], 1);
    let burndown = a["burndown"].as_array().expect("burndown");
    let last = burndown.last().expect("point");
    assert_eq!(last["totals"], a["totals"]);
    let count = w
        .state
        .git(&["rev-list", "--count", "refs/astedit-campaign/log-to-logger"]);
    assert_eq!(burndown.len().to_string(), count.trim());
    // The published count over history only ever went 0 → 2 → 10.
    let published: Vec<u64> = burndown
        .iter()
        .map(|p| p["totals"]["published"].as_u64().unwrap_or(0))
        .collect();
    assert!(
        published.contains(&2) && published.contains(&10),
        "{published:?}"
    );
    // Point by point, the burndown is the history: each state commit (first parents,
    // oldest first), its subject, and the statuses its tree holds, read here with git.
    let history: Vec<(String, String)> = w
        .state
        .git(&[
            "log",
            "--first-parent",
            "--reverse",
            "--format=%H %s",
            "refs/astedit-campaign/log-to-logger",
        ])
        .lines()
        .map(|l| {
            let (c, subject) = l.split_once(' ').expect("line");
            (c.to_string(), subject.to_string())
        })
        .collect();
    assert_eq!(history.len(), burndown.len());
    for ((commit, subject), point) in history.iter().zip(burndown) {
        assert_eq!(point["commit"], commit.as_str());
        assert_eq!(point["what"], subject.as_str());
        assert_eq!(point["totals"], w.statuses_at(commit), "at {subject}");
    }

    // The page: one self-contained file, chart and table.
    let page = w.root.path().join("status.html");
    let p = page.display().to_string();
    w.run(&["campaign", "status", &spec, "--offline", "--html", &p])
        .assert_code(0);
    let html = std::fs::read_to_string(&page).expect("html");
    assert!(html.contains("<svg id=\"burndown\""));
    assert_eq!(html.matches("<tr class=").count(), 25);
    assert!(html.contains(&format!(
        "href=\"https://github.com/acme/m01/pull/{}\"",
        w.pr_of("m01")
    )));
    assert!(!html.contains("<script"), "no script, no network");
}

/// Entries naming one local checkout (parts of a tree) are staged one after the
/// other even with workers to spare: side by side they would meet on its locks.
#[test]
fn entries_on_one_checkout_are_all_staged_at_once() {
    let w = World::new();
    let parts = ["a", "b", "c", "d", "e", "f"];
    let files: Vec<(String, String)> = parts
        .iter()
        .flat_map(|p| {
            (0..20).map(move |i| (format!("{p}/f{i}.ts"), format!("console.log({i});\n")))
        })
        .collect();
    let files: Vec<(&str, &str)> = files
        .iter()
        .map(|(p, t)| (p.as_str(), t.as_str()))
        .collect();
    w.bare("mono", &files);
    let dir = w.root.path().join("src").join("mono");
    let mut spec = SPEC_HEAD.to_string();
    for part in parts {
        spec.push_str(&format!(
            "[[repos]]\npath = \"{}\"\nname = \"mono-{part}\"\npathspecs = [\"{part}\"]\n",
            dir.display()
        ));
    }
    let spec = w.spec(&spec);
    let staged = w.run(&["--json", "campaign", "stage", &spec, "--at-once", "6"]);
    staged.assert_code(0);
    let v = staged.json();
    assert_eq!(v["totals"], serde_json::json!({"staged": 6}), "{v}");
    let status = w.run(&["--json", "campaign", "status", &spec]).json();
    let repos = by_key(&status);
    for part in parts {
        let r = &repos[&format!("mono-{part}")];
        assert_eq!(r["file_count"], 20, "{r}");
        let prefix = format!("{part}/");
        assert!(
            r["files"][0]
                .as_str()
                .is_some_and(|f| f.starts_with(&prefix)),
            "{r}"
        );
    }
}

#[test]
fn local_checkouts_apply_and_undo_each_as_its_own_transaction() {
    let w = World::new();
    let mut spec = SPEC_HEAD.to_string();
    let mut dirs = Vec::new();
    for name in ["one", "two"] {
        w.bare(name, &[("x.ts", "console.log(1);\n")]);
        let dir = w.root.path().join("src").join(name);
        spec.push_str(&format!("[[repos]]\npath = \"{}\"\n", dir.display()));
        dirs.push(dir);
    }
    let spec = w.spec(&spec);
    w.run(&["--json", "campaign", "stage", &spec])
        .assert_code(0);
    // Staged in place: nothing written yet.
    assert_eq!(
        std::fs::read_to_string(dirs[0].join("x.ts")).expect("read"),
        "console.log(1);\n"
    );
    let applied = w.run(&["--json", "campaign", "apply", &spec, "--local"]);
    applied.assert_code(0);
    assert_eq!(applied.json()["totals"]["applied"], 2);
    for d in &dirs {
        assert_eq!(
            std::fs::read_to_string(d.join("x.ts")).expect("read"),
            "logger.info(1);\n"
        );
    }
    let undone = w.run(&["--json", "campaign", "undo", &spec]);
    undone.assert_code(0);
    let u = undone.json();
    validate(&w.state, "campaign", &u);
    assert_eq!(u["totals"], serde_json::json!({"undone": 2}), "{u}");
    for d in &dirs {
        assert_eq!(
            std::fs::read_to_string(d.join("x.ts")).expect("read"),
            "console.log(1);\n"
        );
    }
    // Status shows them undone, in the totals, the text, the page and the burndown.
    let status = w.run(&["--json", "campaign", "status", &spec]);
    status.assert_code(0);
    let st = status.json();
    validate(&w.state, "campaign-status", &st);
    assert_eq!(st["totals"], serde_json::json!({"undone": 2}), "{st}");
    assert!(
        by_key(&st).values().all(|r| r["status"] == "undone"),
        "{st}"
    );
    let points: Vec<&serde_json::Value> = st["burndown"]
        .as_array()
        .expect("burndown")
        .iter()
        .map(|p| &p["totals"])
        .collect();
    assert_eq!(
        points,
        [
            &serde_json::json!({"staged": 1}),
            &serde_json::json!({"staged": 2}),
            &serde_json::json!({"applied": 1, "staged": 1}),
            &serde_json::json!({"applied": 2}),
            &serde_json::json!({"applied": 1, "undone": 1}),
            &serde_json::json!({"undone": 2}),
        ]
    );
    let text = w.run(&["campaign", "status", &spec, "--offline"]);
    assert!(
        text.stdout
            .lines()
            .filter(|l| l.split_whitespace().nth(1) == Some("undone"))
            .count()
            == 2
            && text
                .stdout
                .contains("campaign log-to-logger: 2 undone (6 state commits)"),
        "{}",
        text.stdout
    );
    let page = w.root.path().join("status.html");
    let p = page.display().to_string();
    w.run(&["campaign", "status", &spec, "--offline", "--html", &p])
        .assert_code(0);
    let html = std::fs::read_to_string(&page).expect("html");
    assert_eq!(html.matches("<tr class=\"undone\">").count(), 2, "{html}");
    assert!(
        html.contains("<li data-status=\"undone\">undone: 2</li>"),
        "{html}"
    );
    // Undone is not done: the page's open line ends at 2.
    let open = html
        .split("class=\"open\"")
        .nth(1)
        .and_then(|s| s.split("points=\"").nth(1))
        .and_then(|s| s.split('"').next())
        .expect("open line");
    let ys: Vec<&str> = open
        .split_whitespace()
        .map(|p| p.split(',').nth(1).expect("y"))
        .collect();
    assert_eq!(
        ys,
        ["120.0", "30.0", "120.0", "210.0", "120.0", "30.0"],
        "{open}"
    );
    // An undone preview is applied again.
    let again = w.run(&["--json", "campaign", "apply", &spec, "--local"]);
    again.assert_code(0);
    assert_eq!(again.json()["totals"]["applied"], 2, "{}", again.stdout);
    assert_eq!(
        std::fs::read_to_string(dirs[1].join("x.ts")).expect("read"),
        "logger.info(1);\n"
    );
    // `apply` without --local is a usage error.
    w.run(&["campaign", "apply", &spec]).assert_code(2);
}

#[test]
fn sharded_stages_collected_match_one_unsharded_run() {
    let w = World::new();
    let mut spec = SPEC_HEAD.to_string();
    for i in 0..7 {
        let files: &[(&str, &str)] = if i % 2 == 0 {
            &[("x.ts", "console.log(1);\n")]
        } else {
            &[("x.ts", "f();\n")]
        };
        let b = w.bare(&format!("r{i}"), files);
        spec.push_str(&format!("[[repos]]\nurl = \"{}\"\n", b.display()));
    }
    let spec = w.spec(&spec);
    let matrix = w.run(&["--json", "campaign", "matrix", &spec, "--jobs", "3"]);
    matrix.assert_code(0);
    let m = matrix.json();
    validate(&w.state, "campaign-matrix", &m);
    assert_eq!(
        m["github"]["include"],
        serde_json::json!([{"shard": "1/3"}, {"shard": "2/3"}, {"shard": "3/3"}])
    );
    assert_eq!(
        m["gitlab"][0]["SHARD"],
        serde_json::json!(["1/3", "2/3", "3/3"])
    );
    let ws = w.workspace();
    for shard in ["1/3", "2/3", "3/3"] {
        w.run(&[
            "--json",
            "campaign",
            "stage",
            &spec,
            "--workspace",
            &ws,
            "--shard",
            shard,
        ])
        .assert_code(0);
    }
    let collected = w.run(&["--json", "campaign", "collect", &spec]);
    collected.assert_code(0);
    let sharded = w
        .run(&["--json", "campaign", "status", &spec, "--offline"])
        .json();
    // The same campaign, unsharded, in another state repository.
    let other = TestRepo::new();
    other.write("README", "x\n");
    other.commit_all("init");
    let ws2 = w.root.path().join("ws2").display().to_string();
    other
        .run(&["--json", "campaign", "stage", &spec, "--workspace", &ws2])
        .assert_code(0);
    let single = other
        .run(&["--json", "campaign", "status", &spec, "--offline"])
        .json();
    let strip = |v: &serde_json::Value| -> Vec<serde_json::Value> {
        v["repos"]
            .as_array()
            .expect("repos")
            .iter()
            .map(|r| {
                serde_json::json!([
                    r["key"],
                    r["order"],
                    r["status"],
                    r["files"],
                    r["replacements"],
                    r["base_commit"]
                ])
            })
            .collect()
    };
    assert_eq!(strip(&sharded), strip(&single));
    assert_eq!(sharded["totals"], single["totals"]);
    // The collect commit has every shard as a parent.
    let parents = w.state.git(&[
        "rev-list",
        "--parents",
        "-n",
        "1",
        "refs/astedit-campaign/log-to-logger",
    ]);
    assert_eq!(parents.split_whitespace().count(), 4, "{parents}");
}

/// Every entry of the state at `refname` in `repo`, without what differs from one run
/// to another (when, where the clone is, the preview's id).
fn normalized_state(repo: &TestRepo, refname: &str) -> Vec<serde_json::Value> {
    repo.git(&["ls-tree", "--name-only", refname])
        .lines()
        .map(|name| {
            let mut v: serde_json::Value =
                serde_json::from_str(&repo.git(&["show", &format!("{refname}:{name}")]))
                    .expect("entry");
            let o = v.as_object_mut().expect("object");
            for volatile in ["updated", "checkout", "preview"] {
                o.remove(volatile);
            }
            v
        })
        .collect()
}

/// Staging the 25 repositories eight at a time writes the same state, commit by
/// commit (subjects in spec order, the same final entries), as one at a time; one
/// failure stops none of the others.
#[test]
fn a_parallel_stage_records_the_same_state_as_one_at_a_time() {
    let w = World::new();
    let spec = twenty_five(&w);
    let refname = "refs/astedit-campaign/log-to-logger";
    let ws1 = w.root.path().join("ws-one").display().to_string();
    let one = w.run(&[
        "--json",
        "campaign",
        "stage",
        &spec,
        "--workspace",
        &ws1,
        "--at-once",
        "1",
    ]);
    one.assert_code(1);
    let other = TestRepo::new();
    other.write("README", "x\n");
    other.commit_all("init");
    let ws8 = w.root.path().join("ws-eight").display().to_string();
    let eight = other.run(&[
        "--json",
        "campaign",
        "stage",
        &spec,
        "--workspace",
        &ws8,
        "--at-once",
        "8",
    ]);
    eight.assert_code(1);
    let (one, eight) = (one.json(), eight.json());
    validate(&other, "campaign", &eight);
    let actions = |r: &serde_json::Value| -> Vec<(String, String)> {
        r["outcomes"]
            .as_array()
            .expect("outcomes")
            .iter()
            .map(|o| (o["key"].to_string(), o["action"].to_string()))
            .collect()
    };
    assert_eq!(actions(&one), actions(&eight));
    assert_eq!(one["totals"], eight["totals"]);
    assert_eq!(eight["totals"]["failed"], 2, "{eight}");
    let subjects = |r: &TestRepo| r.git(&["log", "--format=%s", "--first-parent", refname]);
    assert_eq!(subjects(&w.state), subjects(&other));
    assert_eq!(subjects(&other).lines().count(), 25);
    assert_eq!(
        normalized_state(&w.state, refname),
        normalized_state(&other, refname)
    );
    // Status asks gh about the open pull requests (none yet) at once too.
    let s = other.run(&["--json", "campaign", "status", &spec, "--at-once", "3"]);
    s.assert_code(0);
    assert_eq!(s.json()["totals"], eight["totals"]);
}

/// Two campaign commands on one state: the one whose ref moved under it loses with the
/// typed `concurrent` error (exit 6), writes nothing, and the state stays the winner's;
/// the rerun goes on from there.
#[test]
fn a_run_whose_state_moved_under_it_fails_with_concurrent_and_leaves_the_state_whole() {
    let w = World::new();
    let mut spec = SPEC_HEAD.to_string();
    for name in ["a", "b", "c"] {
        let b = w.bare(name, &[("x.ts", "console.log(1);\n")]);
        spec.push_str(&format!("[[repos]]\nurl = \"{}\"\n", b.display()));
    }
    let spec = w.spec(&spec);
    let ws = w.workspace();
    w.run(&["--json", "campaign", "stage", &spec, "--workspace", &ws])
        .assert_code(0);
    let refname = "refs/astedit-campaign/log-to-logger";
    let gh = w.gh.path();
    std::fs::create_dir_all(gh.join("prs")).expect("mkdir");
    std::fs::write(gh.join("hold-create-b"), "").expect("hold");
    let (loser, winner_tip) = std::thread::scope(|scope| {
        let _release = Release(vec![gh.join("hold-create-b")]);
        let publisher =
            scope.spawn(|| w.run(&["--json", "campaign", "publish", &spec, "--at-once", "1"]));
        // One at a time: a is published and recorded before b's gh runs.
        w.wait_for(|| gh.join("held-b").exists());
        // Meanwhile the forge merged a, and a status run records it.
        w.flip("a", "MERGED");
        let status = w.run(&["--json", "campaign", "status", &spec]);
        status.assert_code(0);
        assert_eq!(by_key(&status.json())["a"]["status"], "merged");
        let tip = w.state.git(&["rev-parse", refname]);
        std::fs::remove_file(gh.join("hold-create-b")).expect("release");
        (publisher.join().expect("publisher"), tip)
    });
    loser.assert_code(6);
    let err = loser.json();
    validate(&w.state, "campaign", &err);
    assert_eq!(err["error"]["code"], "concurrent", "{err}");
    assert!(
        err["error"]["message"]
            .as_str()
            .expect("message")
            .contains(refname),
        "{err}"
    );
    // Nothing of the loser's landed: the ref is where the winner left it, whole.
    assert_eq!(w.state.git(&["rev-parse", refname]), winner_tip);
    w.state.fsck();
    let mid = w
        .run(&["--json", "campaign", "status", &spec, "--offline"])
        .json();
    let m = by_key(&mid);
    assert_eq!(
        [&m["a"]["status"], &m["b"]["status"], &m["c"]["status"]],
        ["merged", "staged", "staged"]
    );
    assert_eq!(
        w.state.git(&["log", "-1", "--format=%s", refname]).trim(),
        "status a: merged"
    );
    // The rerun finds b's pull request (opened before the loss) and opens c's.
    let rerun = w.run(&["--json", "campaign", "publish", &spec]);
    rerun.assert_code(0);
    assert_eq!(w.creates(), 3, "each PR exactly once");
    let r = rerun.json();
    assert_eq!(r["totals"]["published"], 2, "{r}");
    assert_eq!(r["totals"]["merged"], 1, "{r}");
}

/// `[change] run`: the command runs in each checkout as `git astedit run` runs it, its
/// change is staged as a `run` preview and published; `campaign refresh` runs it
/// again on the moved base, so a file the base gained is changed too.
#[test]
fn a_campaign_by_command_is_staged_published_and_run_again_on_refresh() {
    let w = World::new();
    let r1 = w.bare("r1", &[("src/app.ts", "console.log(1);\n")]);
    let r2 = w.bare("r2", &[("README", "plain\n")]);
    let spec = w.spec(&format!(
        r#"name = "by-command"
[change]
run = "find . -name '*.ts' -exec sed -i s/console.log/logger.info/g {{}} +"
[pr]
branch = "astedit/log-to-logger"
title = "Route logs through the logger"
rate_per_minute = 6000
[[repos]]
url = "{}"
base = "main"
[[repos]]
url = "{}"
base = "main"
"#,
        r1.display(),
        r2.display()
    ));
    let ws = w.workspace();
    let staged = w.run(&["--json", "campaign", "stage", &spec, "--workspace", &ws]);
    staged.assert_code(0);
    let r = staged.json();
    validate(&w.state, "campaign", &r);
    assert_eq!(r["totals"]["staged"], 1, "{r}");
    assert_eq!(r["totals"]["no-change"], 1, "{r}");
    let entry: serde_json::Value = serde_json::from_str(
        &w.state
            .git(&["show", "refs/astedit-campaign/by-command:r1.json"]),
    )
    .expect("entry");
    let id = entry["preview"].as_str().expect("preview");
    let clone = Path::new(&ws).join("r1");
    assert_eq!(
        w.git_in(&clone, &["show", &format!("refs/astedit/{id}:src/app.ts")]),
        "logger.info(1);\n"
    );
    let message = w.git_in(
        &clone,
        &["log", "-1", "--format=%B", &format!("refs/astedit/{id}")],
    );
    assert!(message.contains("Kind: run"), "{message}");

    w.run(&["--json", "campaign", "publish", &spec])
        .assert_code(0);
    assert_eq!(w.creates(), 1);
    assert_eq!(
        w.bare_show("r1", "astedit/log-to-logger:src/app.ts"),
        "logger.info(1);\n"
    );

    w.push(
        "r1",
        "main",
        &[("src/new.ts", "console.log(2);\n")],
        "more code",
    );
    let refreshed = w.run(&["--json", "campaign", "refresh", &spec]);
    refreshed.assert_code(0);
    let rr = refreshed.json();
    let r1_outcome = rr["outcomes"]
        .as_array()
        .expect("outcomes")
        .iter()
        .find(|o| o["key"] == "r1")
        .expect("r1")
        .clone();
    assert_eq!(r1_outcome["action"], "moved", "{rr}");
    assert_eq!(
        w.bare_show("r1", "astedit/log-to-logger:src/new.ts"),
        "logger.info(2);\n"
    );
    assert_eq!(
        w.bare_rev("r1", "astedit/log-to-logger~"),
        w.bare_rev("r1", "main")
    );
    assert_eq!(w.creates(), 1);
}
