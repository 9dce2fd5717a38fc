//! Publishing: a publish killed and run again opens each pull request once, the rate
//! limit, locks left by a killed publish, a refresh between publishes, what is refused.

use std::path::Path;

use crate::campaign_world::*;

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
