//! Campaigns (issue 27): local bare repositories made here, a stand-in `gh` on PATH
//! that records its argument vectors and answers `pr list`/`pr view`/`pr create` with
//! JSON like gh's, the state read back from `refs/astedit-campaign/<name>`.

use std::path::Path;

use crate::campaign_world::*;
use crate::contract::validate;
use crate::util::TestRepo;

/// The 25 repositories of the issue: 10 with matches, 5 without, 1 that does not
/// parse, 1 unreachable URL and 8 plain (no code at all); the spec over them.
fn twenty_five(w: &World) -> String {
    let mut spec = SPEC_HEAD.to_string();
    let mut add = |url: String| {
        spec.push_str(&format!("[[repos]]\nurl = \"{url}\"\nbase = \"main\"\n"));
    };
    for i in 1..=10 {
        let b = w.bare(
            &format!("m{i:02}"),
            &[("src/app.ts", "console.log(1);\nconst x = 2;\n")],
        );
        add(b.display().to_string());
    }
    for i in 1..=5 {
        let b = w.bare(&format!("n{i:02}"), &[("src/app.ts", "logger.info(1);\n")]);
        add(b.display().to_string());
    }
    let b = w.bare(
        "broken",
        &[("src/bad.ts", "console.log(1);\nconst = = (;\n")],
    );
    add(b.display().to_string());
    add(w.root.path().join("nowhere.git").display().to_string());
    for i in 1..=8 {
        let b = w.bare(&format!("p{i:02}"), &[("README", "plain\n")]);
        add(b.display().to_string());
    }
    w.spec(&spec)
}

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

#[test]
fn sigkill_during_publish_then_a_rerun_opens_each_pull_request_once() {
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
    // Killed after gh opened b's pull request, before the state recorded it.
    std::fs::create_dir_all(w.gh.path().join("prs")).expect("mkdir");
    std::fs::write(w.gh.path().join("kill-on-create-b"), "").expect("arm");
    let killed = w.run(&["--json", "campaign", "publish", &spec, "--at-once", "1"]);
    assert_ne!(killed.code, 0, "killed: {killed:?}");
    assert_eq!(w.creates(), 2);
    let mid = w
        .run(&["--json", "campaign", "status", &spec, "--offline"])
        .json();
    assert_eq!(by_key(&mid)["b"]["status"], "staged");
    let rerun = w.run(&["--json", "campaign", "publish", &spec]);
    rerun.assert_code(0);
    let r = rerun.json();
    assert_eq!(w.creates(), 3, "each PR exactly once");
    let actions: Vec<(String, String)> = r["outcomes"]
        .as_array()
        .expect("outcomes")
        .iter()
        .map(|o| {
            (
                o["key"].as_str().unwrap_or("").into(),
                o["action"].as_str().unwrap_or("").into(),
            )
        })
        .collect();
    assert_eq!(
        actions,
        [
            ("b".to_string(), "found".to_string()),
            ("c".to_string(), "published".to_string())
        ]
    );
    assert_eq!(r["totals"]["published"], 3);
}

/// The same kill while every repository is published at once: whichever were opened
/// or recorded when it struck, the rerun leaves exactly one pull request each, and the
/// state names it.
#[test]
fn sigkill_during_a_parallel_publish_then_a_rerun_opens_each_pull_request_once() {
    let w = World::new();
    let mut spec = SPEC_HEAD.to_string();
    let names = ["a", "b", "c", "d", "e"];
    for name in names {
        let b = w.bare(name, &[("x.ts", "console.log(1);\n")]);
        spec.push_str(&format!("[[repos]]\nurl = \"{}\"\n", b.display()));
    }
    let spec = w.spec(&spec);
    let ws = w.workspace();
    w.run(&["--json", "campaign", "stage", &spec, "--workspace", &ws])
        .assert_code(0);
    // Every repository's `gh pr create` waits until all five are under way; then c's
    // opens its PR and kills the publisher, while the other four are still opening.
    let gh = w.gh.path();
    std::fs::create_dir_all(gh.join("prs")).expect("mkdir");
    for name in names {
        std::fs::write(gh.join(format!("hold-create-{name}")), "").expect("hold");
    }
    std::fs::write(gh.join("kill-on-create-c"), "").expect("arm");
    let killed = std::thread::scope(|scope| {
        let _release = Release(
            names
                .iter()
                .map(|n| gh.join(format!("hold-create-{n}")))
                .collect(),
        );
        let publisher =
            scope.spawn(|| w.run(&["--json", "campaign", "publish", &spec, "--at-once", "5"]));
        w.wait_for(|| names.iter().all(|n| gh.join(format!("held-{n}")).exists()));
        std::fs::remove_file(gh.join("hold-create-c")).expect("release c");
        publisher.join().expect("publisher")
    });
    assert_ne!(killed.code, 0, "killed: {killed:?}");
    // The killed run's children go on: four more pull requests opened, none recorded.
    for name in names {
        let _ = std::fs::remove_file(gh.join(format!("hold-create-{name}")));
    }
    w.settle();
    assert_eq!(w.creates(), 5);
    let mid = w
        .run(&["--json", "campaign", "status", &spec, "--offline"])
        .json();
    assert_eq!(mid["totals"]["staged"], 5, "{mid}");
    w.run(&["--json", "campaign", "publish", &spec, "--at-once", "5"])
        .assert_code(0);
    let creates: Vec<String> = w
        .calls()
        .into_iter()
        .filter(|c| c.len() > 1 && c[0] == "pr" && c[1] == "create")
        .map(|c| {
            let body = c.iter().find(|a| a.starts_with("--body=")).expect("body");
            body.trim_start_matches("--body=Automated change for ")
                .split('.')
                .next()
                .unwrap_or("")
                .to_string()
        })
        .collect();
    let mut sorted = creates.clone();
    sorted.sort();
    assert_eq!(sorted, names, "each PR exactly once: {creates:?}");
    let status = w
        .run(&["--json", "campaign", "status", &spec, "--offline"])
        .json();
    assert_eq!(status["totals"]["published"], 5, "{status}");
    for (key, r) in by_key(&status) {
        assert_eq!(r["pr_number"], w.pr_of(&key), "{r}");
    }
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

#[test]
fn bad_specs_and_option_like_urls_are_refused() {
    let w = World::new();
    let spec = w.spec("name = \"-x\"\n[change]\nops = [{ pattern = \"a\", rewrite = \"b\" }]\n");
    let out = w.run(&["--json", "campaign", "stage", &spec]);
    out.assert_code(2);
    assert_eq!(out.json()["error"]["code"], "bad-campaign-spec");
    validate(&w.state, "campaign", &out.json());
    let spec = w.spec("name = \"x\"\n[change]\nlang = \"ts\"\n");
    w.run(&["campaign", "stage", &spec]).assert_code(2);
    let spec = w.spec(&format!(
        "{SPEC_HEAD}[[repos]]\nurl = \"--upload-pack=touch /tmp/pwned\"\n"
    ));
    let ws = w.workspace();
    let out = w.run(&["--json", "campaign", "stage", &spec, "--workspace", &ws]);
    out.assert_code(1);
    let o = &out.json()["outcomes"][0];
    assert_eq!(o["status"], "failed");
    assert!(o["note"].as_str().expect("note").contains("refused"), "{o}");
    // A shard outside 1..=N is a usage error.
    let out = w.run(&[
        "--json",
        "campaign",
        "stage",
        &spec,
        "--workspace",
        &ws,
        "--shard",
        "0/3",
    ]);
    out.assert_code(2);
    assert_eq!(out.json()["error"]["code"], "usage");
    // No state yet for another campaign.
    let spec = w.spec("name = \"never\"\n[change]\nops = [{ pattern = \"a\", rewrite = \"b\" }]\n");
    let out = w.run(&["--json", "campaign", "publish", &spec]);
    out.assert_code(2);
    assert_eq!(out.json()["error"]["code"], "no-campaign-state");
}

#[test]
fn schema_describes_the_spec_and_the_reports() {
    let w = World::new();
    let spec = w.run(&["schema", "campaign-spec"]);
    spec.assert_code(0);
    let v: serde_json::Value = serde_json::from_str(&spec.stdout).expect("json");
    assert!(v["properties"]["change"].is_object(), "{v}");
    // The issue's example, as written, fits the spec's schema.
    let example: serde_json::Value = toml::from_str(&SPEC_HEAD.replace(
        "[pr]",
        "[[repos]]\nurl = \"/srv/git/app.git\"\nbase = \"main\"\n[pr]",
    ))
    .expect("toml");
    let validator = jsonschema::draft202012::options()
        .build(&v)
        .expect("schema compiles");
    assert!(validator.is_valid(&example), "{example}");
    assert!(!validator.is_valid(&serde_json::json!({"name": "x", "change": {}, "colour": 1})));
    for cmd in ["campaign", "campaign-status", "campaign-matrix"] {
        w.run(&["schema", cmd]).assert_code(0);
    }
}

#[test]
fn the_fixture_spec_and_its_repository_list_read_as_written() {
    let w = World::new();
    let spec = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/campaign/log-to-logger.toml");
    let out = w.run(&[
        "--json",
        "campaign",
        "matrix",
        &spec.display().to_string(),
        "--jobs",
        "2",
    ]);
    out.assert_code(0);
    let m = out.json();
    assert_eq!(m["repos"], serde_json::json!([["web", "admin"], ["api"]]));
}

/// The status page opened in headless Chromium: the browser's DOM holds the table's
/// rows and the chart's lines. `.ci/run` installs Chromium and sets
/// ASTEDIT_REQUIRE_CHROMIUM=1; elsewhere the test is skipped without it.
#[test]
fn the_status_page_renders_in_headless_chromium() {
    let Some(browser) = crate::cdp::chromium_or_skip() else {
        return;
    };
    let w = World::new();
    let mut spec = SPEC_HEAD.to_string();
    for (name, code) in [
        ("a", "console.log(1);\n"),
        ("b", "f();\n"),
        ("c", "console.log(2);\n"),
    ] {
        let b = w.bare(name, &[("x.ts", code)]);
        spec.push_str(&format!("[[repos]]\nurl = \"{}\"\n", b.display()));
    }
    let spec = w.spec(&spec);
    let ws = w.workspace();
    w.run(&["--json", "campaign", "stage", &spec, "--workspace", &ws])
        .assert_code(0);
    w.run(&["--json", "campaign", "publish", &spec])
        .assert_code(0);
    w.flip("a", "MERGED");
    let page = w.root.path().join("status.html");
    let p = page.display().to_string();
    w.run(&["campaign", "status", &spec, "--html", &p])
        .assert_code(0);
    let out = std::process::Command::new(&browser)
        .args(crate::cdp::headless_args(w.root.path()))
        .args(["--dump-dom", &format!("file://{p}")])
        .env("HOME", w.root.path())
        .output()
        .expect("run chromium");
    let dom = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && dom.contains("</html>"),
        "chromium failed: {}\n{dom}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The table as the browser parsed it: a row per repository, the merged one linked.
    assert_eq!(dom.matches("<tr class=").count(), 3, "{dom}");
    assert!(dom.contains("<tr class=\"merged\"><td>a</td>"), "{dom}");
    assert!(dom.contains("<tr class=\"no-change\"><td>b</td>"), "{dom}");
    assert!(
        dom.contains(&format!(
            "href=\"https://github.com/acme/a/pull/{}\"",
            w.pr_of("a")
        )),
        "{dom}"
    );
    // The published repository's pending preview links its review page, written
    // beside the status page; the merged one and the one without a change have none.
    assert_eq!(dom.matches("<a class=\"review\"").count(), 1, "{dom}");
    let reviews: Vec<_> = std::fs::read_dir(w.root.path().join("status-reviews"))
        .expect("the reviews' folder")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(reviews.len(), 1, "{reviews:?}");
    assert!(reviews[0].starts_with("c-"), "{reviews:?}");
    assert!(
        dom.contains(&format!("href=\"status-reviews/{}\"", reviews[0])),
        "{dom}"
    );
    let review = std::fs::read_to_string(w.root.path().join("status-reviews").join(&reviews[0]))
        .expect("read the review page");
    assert!(review.contains("console.log(2)"), "{review}");
    // The chart: both lines, one point per state commit.
    let commits: usize = w
        .state
        .git(&["rev-list", "--count", "refs/astedit-campaign/log-to-logger"])
        .trim()
        .parse()
        .expect("count");
    for class in ["open", "merged"] {
        let at = dom
            .find(&format!("class=\"{class}\""))
            .unwrap_or_else(|| panic!("no {class} line: {dom}"));
        let points = dom[at..]
            .split("points=\"")
            .nth(1)
            .and_then(|s| s.split('"').next())
            .expect("points");
        assert_eq!(points.split_whitespace().count(), commits, "{points}");
    }
    assert!(
        dom.contains("<li data-status=\"merged\">merged: 1</li>"),
        "{dom}"
    );
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

/// Four repositories published at once under `rate_per_minute = 120`: the writes to
/// the forge still come one every half second; `max_open` holds the fifth back.
#[test]
fn the_rate_limit_spaces_forge_writes_across_parallel_workers() {
    let w = World::new();
    let mut spec = SPEC_HEAD
        .replace(
            "rate_per_minute = 6000",
            "rate_per_minute = 120\nmax_open = 4",
        )
        .replace(
            "name = \"log-to-logger\"",
            "name = \"log-to-logger\"\nat_once = 4",
        );
    for name in ["a", "b", "c", "d", "e"] {
        let b = w.bare(name, &[("x.ts", "console.log(1);\n")]);
        spec.push_str(&format!("[[repos]]\nurl = \"{}\"\n", b.display()));
    }
    let spec = w.spec(&spec);
    let ws = w.workspace();
    w.run(&["--json", "campaign", "stage", &spec, "--workspace", &ws])
        .assert_code(0);
    let out = w.run(&["--json", "campaign", "publish", &spec]);
    out.assert_code(0);
    let r = out.json();
    assert_eq!(r["totals"]["published"], 4, "{r}");
    assert_eq!(r["outcomes"][4]["action"], "waiting", "{r}");
    let notes = r["notes"].to_string();
    assert!(
        notes.contains("at most 4 open at the same time") && notes.contains("every 0.5s"),
        "{notes}"
    );
    let mut times: Vec<f64> = w.writes().iter().map(|(t, _, _)| *t).collect();
    times.sort_by(f64::total_cmp);
    assert_eq!(times.len(), 4);
    // Three gaps of half a second at least (less a margin for the stand-in's start).
    assert!(times[3] - times[0] >= 1.0, "{times:?}");
    // A spec that asks for nothing at once is refused, as is the flag.
    let zero = w.spec(
        &std::fs::read_to_string(&spec)
            .expect("spec")
            .replace("at_once = 4", "at_once = 0"),
    );
    let out = w.run(&["--json", "campaign", "stage", &zero]);
    out.assert_code(2);
    assert_eq!(out.json()["error"]["code"], "bad-campaign-spec");
    let out = w.run(&["--json", "campaign", "publish", &spec, "--at-once", "0"]);
    out.assert_code(2);
    assert_eq!(out.json()["error"]["code"], "usage");
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

/// Every file under `dir` (the git folder's HEAD, refs and index included, objects
/// left out) with its bytes, and what `git status` says of it: a folder a campaign
/// must not touch is compared with this before and after.
fn folder_state(w: &World, dir: &Path) -> (Vec<(String, Vec<u8>)>, String, String) {
    fn walk(root: &Path, dir: &Path, out: &mut Vec<(String, Vec<u8>)>) {
        let mut entries: Vec<_> = std::fs::read_dir(dir)
            .expect("read_dir")
            .flatten()
            .collect();
        entries.sort_by_key(|e| e.file_name());
        for e in entries {
            let p = e.path();
            let rel = p.strip_prefix(root).expect("inside").display().to_string();
            if rel == ".git/objects" || rel == ".git/logs" {
                continue;
            }
            if e.file_type().expect("type").is_dir() {
                walk(root, &p, out);
            } else {
                out.push((rel, std::fs::read(&p).expect("read")));
            }
        }
    }
    let mut files = Vec::new();
    walk(dir, dir, &mut files);
    let status = w.git_in(
        dir,
        &[
            "status",
            "--porcelain",
            "--ignored",
            "--untracked-files=all",
        ],
    );
    let refs = w.git_in(dir, &["for-each-ref"]);
    (files, status, refs)
}

/// A user's own work in a checkout: a change to a tracked file, an ignored `.env`,
/// an untracked file.
fn dirty_up(dir: &Path) {
    std::fs::write(
        dir.join("src/app.ts"),
        "console.log(2); // mine, not committed\n",
    )
    .expect("write");
    std::fs::write(dir.join(".env"), "TOKEN=do-not-lose-me\n").expect("write");
    std::fs::write(dir.join("notes.txt"), "untracked notes\n").expect("write");
}

/// Issue 35 item 1: `stage --workspace ~/src` with a spec naming `app` must not take
/// the user's own `~/src/app` for its clone: it is refused, and its uncommitted
/// change, ignored `.env` and untracked file are there byte for byte.
#[test]
fn a_same_named_user_checkout_in_the_workspace_is_refused_and_left_whole() {
    let (w, spec) = app_world();
    let ws = w.workspace();
    let mine = Path::new(&ws).join("app");
    std::fs::create_dir_all(&ws).expect("mkdir");
    let bare = w.root.path().join("app.git").display().to_string();
    w.state
        .git(&["clone", "-q", "--", &bare, &mine.display().to_string()]);
    dirty_up(&mine);
    let before = folder_state(&w, &mine);
    for _ in 0..2 {
        let out = w.run(&["--json", "campaign", "stage", &spec, "--workspace", &ws]);
        out.assert_code(1);
        let r = out.json();
        let note = r["outcomes"][0]["note"].as_str().expect("note");
        assert!(note.contains("(not-campaign-clone)"), "{note}");
        assert!(note.contains(&mine.display().to_string()), "{note}");
        assert_eq!(folder_state(&w, &mine), before);
    }
    // A clean checkout of the user's is not ours either.
    w.git_in(&mine, &["stash", "-q", "--include-untracked"]);
    let before = folder_state(&w, &mine);
    w.run(&["--json", "campaign", "stage", &spec, "--workspace", &ws])
        .assert_code(1);
    assert_eq!(folder_state(&w, &mine), before);
    // Another workspace gets a clone of its own, marked.
    let ws2 = w.root.path().join("ws2");
    w.run(&[
        "--json",
        "campaign",
        "stage",
        &spec,
        "--workspace",
        &ws2.display().to_string(),
    ])
    .assert_code(0);
    assert!(ws2.join("app/.git/astedit-campaign-clone").is_file());
}

/// Issue 35 item 1: a campaign's own clone that someone worked in is refused, not
/// cleaned: `refresh` after the base moved leaves the work where it is.
#[test]
fn a_campaign_clone_with_changes_is_refused_not_cleaned() {
    let (w, spec) = app_world();
    let ws = w.workspace();
    w.run(&["--json", "campaign", "stage", &spec, "--workspace", &ws])
        .assert_code(0);
    let clone = Path::new(&ws).join("app");
    dirty_up(&clone);
    let before = folder_state(&w, &clone);
    w.push(
        "app",
        "main",
        &[("src/new.ts", "console.log(3);\n")],
        "more",
    );
    let out = w.run(&["--json", "campaign", "refresh", &spec]);
    let r = out.json();
    let note = r["outcomes"][0]["note"].as_str().expect("note");
    assert!(note.contains("(dirty-clone)"), "{note}");
    assert!(note.contains("notes.txt"), "{note}");
    let (files, status, _) = folder_state(&w, &clone);
    // Only the fetch moved refs; the work tree and what git says of it are the same.
    assert_eq!(status, before.1);
    let tree = |f: &[(String, Vec<u8>)]| -> Vec<(String, Vec<u8>)> {
        f.iter()
            .filter(|(p, _)| !p.starts_with(".git/"))
            .cloned()
            .collect()
    };
    assert_eq!(tree(&files), tree(&before.0));
    // Once the work is gone, the same refresh goes through.
    w.git_in(&clone, &["checkout", "-q", "--", "."]);
    std::fs::remove_file(clone.join(".env")).expect("rm");
    std::fs::remove_file(clone.join("notes.txt")).expect("rm");
    let out = w.run(&["--json", "campaign", "refresh", &spec]);
    out.assert_code(0);
    assert_eq!(out.json()["outcomes"][0]["action"], "refreshed", "{out:?}");
}

/// Issue 35 item 1: the state is shared (pushed, collected from shards); a `checkout`
/// in it naming the user's own checkout is never where refresh or publish work.
#[test]
fn a_forged_checkout_path_in_the_state_is_never_worked_in() {
    let (w, spec) = app_world();
    let ws = w.workspace();
    w.run(&["--json", "campaign", "stage", &spec, "--workspace", &ws])
        .assert_code(0);
    // The user's own checkout (World::bare made it, origin the same bare repository).
    let mine = w.root.path().join("src").join("app");
    dirty_up(&mine);
    let before = folder_state(&w, &mine);
    forge_state(&w, "app", |e| {
        e["checkout"] = mine.display().to_string().into();
    });
    w.push(
        "app",
        "main",
        &[("src/new.ts", "console.log(3);\n")],
        "more",
    );
    let out = w.run(&["--json", "campaign", "refresh", &spec]);
    out.assert_code(0);
    assert_eq!(out.json()["outcomes"][0]["action"], "refreshed", "{out:?}");
    assert_eq!(folder_state(&w, &mine), before);
    // Publish pushes from the workspace's clone; the user's checkout gets no branch.
    w.run(&["--json", "campaign", "publish", &spec])
        .assert_code(0);
    assert_eq!(folder_state(&w, &mine), before);
    assert_eq!(
        w.bare_show("app", "astedit/log-to-logger:src/new.ts"),
        "logger.info(3);\n"
    );
    // With a workspace that has no clone of it, nothing runs anywhere.
    let elsewhere = w.root.path().join("elsewhere").display().to_string();
    w.push(
        "app",
        "main",
        &[("src/more.ts", "console.log(4);\n")],
        "again",
    );
    let out = w.run(&[
        "--json",
        "campaign",
        "refresh",
        &spec,
        "--workspace",
        &elsewhere,
    ]);
    let note = out.json()["outcomes"][0]["note"].clone();
    assert!(
        note.as_str().unwrap_or("").contains("(no-campaign-clone)"),
        "{out:?}"
    );
    assert_eq!(folder_state(&w, &mine), before);
}

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

/// Issue 35 item 7: with no git identity at all (an empty HOME, no config, no
/// variables: a CI runner), a campaign stages and publishes; the branch's commit and
/// reflog name the fallback committer.
#[test]
fn a_campaign_publishes_without_a_git_identity() {
    let (w, spec) = app_world();
    let ws = w.workspace();
    w.run_without_identity(&["--json", "campaign", "stage", &spec, "--workspace", &ws])
        .assert_code(0);
    let out = w.run_without_identity(&["--json", "campaign", "publish", &spec]);
    out.assert_code(0);
    assert_eq!(out.json()["outcomes"][0]["action"], "published", "{out:?}");
    let branch = "astedit/log-to-logger";
    let pushed = w.bare_rev("app", branch);
    let clone = Path::new(&ws).join("app");
    assert_eq!(w.git_in(&clone, &["rev-parse", branch]).trim(), pushed);
    let fallback = "git-astedit <git-astedit@localhost>";
    let bare = w.root.path().join("app.git");
    assert_eq!(
        w.git_in(&bare, &["log", "-1", "--format=%cn <%ce>", branch])
            .trim(),
        fallback
    );
    assert_eq!(
        w.git_in(&clone, &["reflog", "show", "--format=%gn <%ge>", branch])
            .trim(),
        fallback
    );
    let status = w.run_without_identity(&["--json", "campaign", "status", &spec]);
    status.assert_code(0);
    assert_eq!(status.json()["totals"]["published"], 1, "{status:?}");
}

/// Issue 35 item 6: a publish killed holding the state ref's lock (the pull request
/// opened, not yet recorded) leaves `<ref>.lock` in the state repository; the rerun
/// clears it, finds the pull request instead of opening a second, and records it.
#[test]
fn a_publish_killed_holding_the_state_ref_lock_is_cleared_by_the_rerun() {
    let (w, spec) = app_world();
    let ws = w.workspace();
    w.run(&["--json", "campaign", "stage", &spec, "--workspace", &ws])
        .assert_code(0);
    w.kill_at(&["campaign", "publish", &spec], "refs-locked:campaign");
    assert_eq!(
        w.state.lock_files(),
        ["refs/astedit-campaign/log-to-logger.lock"]
    );
    assert_eq!(w.creates(), 1);
    let out = w.run(&["--json", "campaign", "publish", &spec]);
    out.assert_code(0);
    let r = out.json();
    assert_eq!(r["outcomes"][0]["action"], "found", "{r}");
    assert_eq!(r["totals"]["published"], 1, "{r}");
    assert_eq!(w.state.lock_files(), Vec::<String>::new());
    assert_eq!(w.creates(), 1);
}

/// Issue 35 item 6: a publish killed inside the clone's branch update leaves the
/// branch's lock and `packed-refs.lock` (a clone's refs are packed) in the clone; the
/// rerun clears both and publishes. `packed-refs.lock` is git's own `pack-refs` lock
/// too, so ours is broken only once older than two seconds: it is aged here as a
/// rerun a little later would find it.
#[test]
fn a_publish_killed_holding_the_clone_branch_lock_is_cleared_by_the_rerun() {
    let (w, spec) = app_world();
    let ws = w.workspace();
    w.run(&["--json", "campaign", "stage", &spec, "--workspace", &ws])
        .assert_code(0);
    w.kill_at(&["campaign", "publish", &spec], "refs-locked:pr-branch");
    let git_dir = Path::new(&ws).join("app/.git");
    assert_eq!(
        crate::util::lock_files_in(&git_dir),
        ["packed-refs.lock", "refs/heads/astedit/log-to-logger.lock"]
    );
    let packed = std::fs::OpenOptions::new()
        .write(true)
        .open(git_dir.join("packed-refs.lock"))
        .expect("open");
    let minute_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(60);
    packed.set_modified(minute_ago).expect("age");
    drop(packed);
    assert_eq!(w.creates(), 0);
    let out = w.run(&["--json", "campaign", "publish", &spec]);
    out.assert_code(0);
    let r = out.json();
    assert_eq!(r["outcomes"][0]["action"], "published", "{r}");
    assert_eq!(crate::util::lock_files_in(&git_dir), Vec::<String>::new());
    assert_eq!(w.creates(), 1);
    let branch = "astedit/log-to-logger";
    let clone = Path::new(&ws).join("app");
    assert_eq!(
        w.bare_rev("app", branch),
        w.git_in(&clone, &["rev-parse", branch]).trim()
    );
}

/// After the base moved (someone changed the file the preview changes on `main`):
/// refresh, publish, and check that what was pushed is a commit of the refreshed
/// preview on the new base — the branch in
/// the bare repository, the clone's and the state's `pushed_commit` all the same.
fn refresh_then_publish_pushes_the_current_commit(w: &World, spec: &str) {
    let base = w.push(
        "app",
        "main",
        &[("src/app.ts", "// the app\nconsole.log(1);\n")],
        "more",
    );
    let out = w.run(&["--json", "campaign", "refresh", spec]);
    out.assert_code(0);
    assert_eq!(out.json()["outcomes"][0]["action"], "refreshed", "{out:?}");
    let out = w.run(&["--json", "campaign", "publish", spec]);
    out.assert_code(0);
    assert_eq!(out.json()["outcomes"][0]["action"], "published", "{out:?}");
    let branch = "astedit/log-to-logger";
    let pushed = w.bare_rev("app", branch);
    assert_eq!(w.bare_rev("app", &format!("{branch}^")), base);
    assert_eq!(
        w.bare_show("app", &format!("{branch}:src/app.ts")),
        "// the app\nlogger.info(1);\n"
    );
    let clone = Path::new(&w.workspace()).join("app");
    assert_eq!(w.git_in(&clone, &["rev-parse", branch]).trim(), pushed);
    let entry = state_entry(w, "app");
    assert_eq!(entry["status"], "published");
    assert_eq!(entry["pushed_commit"], pushed.as_str());
    let creates = w.writes().iter().filter(|x| x.2 == "create").count();
    assert_eq!(creates, 1);
}

/// Issue 35 item 5: a publish whose push was rejected leaves a local branch with the
/// old preview's commit; after the base moved and a refresh, the next publish pushes
/// the refreshed preview's commit, not the old one.
#[test]
fn a_publish_after_a_rejected_push_and_a_refresh_pushes_the_current_commit() {
    let (w, spec) = app_world();
    let ws = w.workspace();
    w.run(&["--json", "campaign", "stage", &spec, "--workspace", &ws])
        .assert_code(0);
    let hook = w.root.path().join("app.git/hooks/pre-receive");
    std::fs::write(
        &hook,
        "#!/bin/sh\necho 'push refused by policy' >&2\nexit 1\n",
    )
    .expect("hook");
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let out = w.run(&["--json", "campaign", "publish", &spec]);
    let note = out.json()["outcomes"][0]["note"].to_string();
    assert!(note.contains("push refused by policy"), "{out:?}");
    std::fs::remove_file(&hook).expect("rm hook");
    refresh_then_publish_pushes_the_current_commit(&w, &spec);
}

/// Issue 35 item 5: a publish whose push went through but whose `gh pr create` failed
/// left the old commit on the remote branch too; after a refresh, the next publish
/// moves the remote branch (by lease on that commit) to the current one.
#[test]
fn a_publish_after_a_failed_pr_create_and_a_refresh_pushes_the_current_commit() {
    let (w, spec) = app_world();
    let ws = w.workspace();
    w.run(&["--json", "campaign", "stage", &spec, "--workspace", &ws])
        .assert_code(0);
    std::fs::create_dir_all(w.gh.path()).expect("mkdir");
    let fail = w.gh.path().join("fail-create-app");
    std::fs::write(&fail, "").expect("arm");
    let out = w.run(&["--json", "campaign", "publish", &spec]);
    let note = out.json()["outcomes"][0]["note"].to_string();
    assert!(note.contains("createPullRequest"), "{out:?}");
    let stale = w.bare_rev("app", "astedit/log-to-logger");
    std::fs::remove_file(&fail).expect("disarm");
    refresh_then_publish_pushes_the_current_commit(&w, &spec);
    assert_ne!(w.bare_rev("app", "astedit/log-to-logger"), stale);
}

/// Issue 35 item 5: `[pr] branch = "main"` (the base) is refused before anything
/// moves: the base branch is neither pushed nor reported as a pull request.
#[test]
fn a_campaign_branch_equal_to_the_base_is_refused() {
    let w = World::new();
    let b = w.bare("app", &[("src/app.ts", "console.log(1);\n")]);
    let head = SPEC_HEAD.replace("branch = \"astedit/log-to-logger\"", "branch = \"main\"");
    let spec = w.spec(&format!(
        "{head}[[repos]]\nurl = \"{}\"\nbase = \"main\"\n",
        b.display()
    ));
    let ws = w.workspace();
    w.run(&["--json", "campaign", "stage", &spec, "--workspace", &ws])
        .assert_code(0);
    let main = w.bare_rev("app", "main");
    let clone = Path::new(&ws).join("app");
    let local = w.git_in(&clone, &["rev-parse", "refs/heads/main"]);
    let out = w.run(&["--json", "campaign", "publish", &spec]);
    out.assert_code(1);
    let o = &out.json()["outcomes"][0];
    assert_eq!(o["action"], "failed", "{o}");
    assert!(
        o["note"].as_str().unwrap_or("").contains("base branch"),
        "{o}"
    );
    assert_eq!(w.bare_rev("app", "main"), main);
    assert_eq!(w.git_in(&clone, &["rev-parse", "refs/heads/main"]), local);
    assert_eq!(w.creates(), 0);
    assert_eq!(state_entry(&w, "app")["status"], "staged");
}

/// Issue 35 item 5: an old closed pull request with the campaign's head branch name is
/// not taken for this one: a new one is opened and recorded.
#[test]
fn an_old_closed_pull_request_with_the_same_head_is_not_adopted() {
    let (w, spec) = app_world();
    let ws = w.workspace();
    w.run(&["--json", "campaign", "stage", &spec, "--workspace", &ws])
        .assert_code(0);
    let prs = w.gh.path().join("prs");
    std::fs::create_dir_all(&prs).expect("mkdir");
    std::fs::write(prs.join("app"), "3\n").expect("old pr");
    std::fs::write(w.gh.path().join("counter"), "3\n").expect("counter");
    w.flip("app", "CLOSED");
    let out = w.run(&["--json", "campaign", "publish", &spec]);
    out.assert_code(0);
    let o = &out.json()["outcomes"][0];
    assert_eq!(o["action"], "published", "{o}");
    assert_eq!(o["note"], "https://github.com/acme/app/pull/4", "{o}");
    assert_eq!(w.creates(), 1);
    let entry = state_entry(&w, "app");
    assert_eq!(entry["pr_number"], 4);
    assert_eq!(entry["status"], "published");
}

/// Issue 35 item 8: a `campaign stage` killed outright while `git clone` runs takes
/// the clone with it (a parent-death signal): no clone goes on to race the rerun. A
/// stand-in `git` first on PATH holds each clone (its pid written) before the real one.
#[cfg(target_os = "linux")]
#[test]
fn a_stage_killed_during_git_clone_takes_the_clone_with_it() {
    let (w, spec) = app_world();
    let ws = w.workspace();
    let real = std::process::Command::new("sh")
        .args(["-c", "command -v git"])
        .output()
        .expect("which git");
    let real = String::from_utf8(real.stdout).expect("utf8");
    let pid_file = w.root.path().join("clone.pid");
    let went_on = w.root.path().join("clone-went-on");
    let stub = w.gh.path().join("bin/git");
    std::fs::write(
        &stub,
        format!(
            "#!/bin/sh\nif [ \"$1\" = clone ]; then echo $$ > '{}'; sleep 30; : > '{}'; fi\nexec '{}' \"$@\"\n",
            pid_file.display(),
            went_on.display(),
            real.trim()
        ),
    )
    .expect("stub");
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&stub, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let mut child = w
        .command(&["campaign", "stage", &spec, "--workspace", &ws])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("spawn");
    w.wait_for(|| std::fs::read_to_string(&pid_file).is_ok_and(|p| p.ends_with('\n')));
    let pid: i32 = std::fs::read_to_string(&pid_file)
        .expect("pid")
        .trim()
        .parse()
        .expect("pid");
    child.kill().expect("kill");
    child.wait().expect("wait");
    w.wait_for(|| !crate::util::process_running(pid));
    assert!(
        !went_on.exists(),
        "the held clone went on after its run was killed"
    );
    std::fs::remove_file(&stub).expect("rm stub");
    let out = w.run(&["--json", "campaign", "stage", &spec, "--workspace", &ws]);
    out.assert_code(0);
    assert_eq!(out.json()["outcomes"][0]["action"], "staged", "{out:?}");
    assert!(Path::new(&ws)
        .join("app/.git/astedit-campaign-clone")
        .is_file());
}
