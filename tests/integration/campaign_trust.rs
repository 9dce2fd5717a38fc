//! Issue 48 items 6, 7, 8 and 11 (`repos_file`): what a campaign merges and adopts is
//! decided by the forge's approval answer and by commits this campaign made, never by a
//! merge status, the shared state's word or a branch name a fork can take. The stand-in
//! forges of [`crate::campaign_world`] answer as gh and GitLab's API do.

use std::path::Path;

use crate::campaign_world::*;

/// A campaign of the repositories `keys` on `forge`, staged and published.
fn published(keys: &[&str], forge: &str) -> (World, String) {
    let w = World::new();
    let head = SPEC_HEAD.replace(
        "name = \"log-to-logger\"\n",
        &format!("name = \"log-to-logger\"\nforge = \"{forge}\"\n"),
    );
    let spec = w.published(&head, keys);
    (w, spec)
}

/// The calls of `tool` (`gh` or `glab`) whose words after the tool start with `words`.
fn calls_of(w: &World, tool: &str, words: &[&str]) -> Vec<Vec<String>> {
    w.calls()
        .into_iter()
        .map(|c| match c.first().map(String::as_str) {
            Some("glab") => c,
            _ => std::iter::once("gh".to_string()).chain(c).collect(),
        })
        .filter(|c| c[0] == tool && c.len() > words.len() && c[1..=words.len()] == *words)
        .collect()
}

/// Each repository's action in a campaign report.
fn actions(report: &serde_json::Value) -> std::collections::BTreeMap<String, String> {
    report["outcomes"]
        .as_array()
        .expect("outcomes")
        .iter()
        .map(|o| {
            (
                o["key"].as_str().expect("key").to_string(),
                o["action"].as_str().expect("action").to_string(),
            )
        })
        .collect()
}

fn note_of(report: &serde_json::Value, key: &str) -> String {
    report["outcomes"]
        .as_array()
        .expect("outcomes")
        .iter()
        .find(|o| o["key"] == key)
        .and_then(|o| o["note"].as_str())
        .unwrap_or_default()
        .to_string()
}

/// GitLab's approvals endpoint answering `approved` by `approvers`.
fn approvals(approved: bool, left: u64, approvers: &[&str]) -> String {
    let by: Vec<serde_json::Value> = approvers
        .iter()
        .map(|u| serde_json::json!({"user": {"id": 5, "username": u, "name": u}}))
        .collect();
    serde_json::json!({
        "id": 70, "iid": 1, "project_id": 7, "state": "opened",
        "approved": approved, "approvals_required": 1, "approvals_left": left,
        "approved_by": by,
    })
    .to_string()
}

/// Item 6: on GitLab, with `require_approval = true` (the default), green merge
/// requests that nobody approved are not merged, whatever `detailed_merge_status`
/// says (a draft shows `draft_status`, open threads `discussions_not_resolved`, either
/// hiding the missing approval); nor one whose only approver is its author, nor one
/// GitLab calls approved with nobody's approval. Approved by someone else: merged, the
/// campaign's draft marked ready first.
#[test]
fn gitlab_merge_reads_the_approvals_endpoint_never_the_merge_status() {
    let (w, spec) = published(&["draft", "threads", "author", "nobody", "ok"], "gitlab");
    let mrs = w.gh.path().join("mrs");
    let put = |k: &str, what: &str, text: &str| {
        std::fs::write(mrs.join(format!("{k}.{what}")), text).expect("write")
    };
    for k in ["draft", "threads", "author", "nobody", "ok"] {
        put(k, "pipeline", "success");
    }
    // `draft` stays a draft: GitLab says draft_status.
    put("threads", "ready", "");
    put("threads", "merge-status", "discussions_not_resolved");
    put("author", "approvals", &approvals(true, 0, &["astedit-bot"]));
    put("nobody", "approvals", &approvals(true, 0, &[]));
    put("ok", "approvals", &approvals(true, 0, &["reviewer"]));

    let out = w.run(&["--json", "campaign", "merge", &spec]);
    out.assert_code(0);
    let r = out.json();
    let a = actions(&r);
    for k in ["draft", "threads", "author", "nobody"] {
        assert_eq!(a[k], "waiting", "{k}: {r}");
        assert!(note_of(&r, k).contains("not approved"), "{k}: {r}");
    }
    assert_eq!(a["ok"], "merged", "{r}");
    let merges = calls_of(&w, "glab", &["mr", "merge"]);
    assert_eq!(merges.len(), 1, "{merges:?}");
    // The approvals were asked of GitLab's endpoint, by the merge request's iid.
    let asked = calls_of(&w, "glab", &["api"]);
    assert!(
        asked
            .iter()
            .any(|c| c[2].starts_with("projects/:id/merge_requests/")
                && c[2].ends_with("/approvals")),
        "{asked:?}"
    );

    // Approved now, still a draft: marked ready, then merged.
    put("draft", "approvals", &approvals(true, 0, &["reviewer"]));
    let out = w.run(&["--json", "campaign", "merge", &spec]);
    out.assert_code(0);
    assert_eq!(actions(&out.json())["draft"], "merged", "{}", out.stdout);
    let calls = w.calls();
    let ready = calls
        .iter()
        .position(|c| c.len() > 4 && c[2] == "update" && c[4] == "--ready");
    let merged = calls.iter().rposition(|c| c.len() > 2 && c[2] == "merge");
    assert!(
        matches!((ready, merged), (Some(r), Some(m)) if r < m),
        "{calls:?}"
    );
    assert_eq!(calls_of(&w, "glab", &["mr", "merge"]).len(), 2);
}

/// Item 6: a GitLab approvals call that fails leaves the review unknown, and unknown is
/// not approved; finding the merge request (as `publish` does) still works.
#[test]
fn an_unreadable_gitlab_approval_is_not_an_approval() {
    let (w, spec) = published(&["app"], "gitlab");
    let mrs = w.gh.path().join("mrs");
    std::fs::write(mrs.join("app.pipeline"), "success").expect("pipeline");
    std::fs::write(mrs.join("app.approvals-fail"), "").expect("fail");
    let out = w.run(&["--json", "campaign", "merge", &spec]);
    out.assert_code(0);
    let r = out.json();
    assert_eq!(actions(&r)["app"], "waiting", "{r}");
    assert!(note_of(&r, "app").contains("403 Forbidden"), "{r}");
    assert_eq!(
        calls_of(&w, "glab", &["mr", "merge"]),
        Vec::<Vec<String>>::new()
    );
    w.run(&["campaign", "publish", &spec]).assert_code(0);
}

/// Item 6 on GitHub: where branch protection requires no review, `reviewDecision` is
/// empty and `latestReviews` decides: an approval of the head commit by someone other
/// than the author merges; the author's own, one of an older commit, or one beside a
/// request for changes does not.
#[test]
fn github_without_required_reviews_merges_on_an_approving_latest_review() {
    let keys = ["ok", "self", "stale", "blocked", "none"];
    let (w, spec) = published(&keys, "github");
    let prs = w.gh.path().join("prs");
    let review = |by: &str, state: &str, oid: &str| {
        serde_json::json!({
            "id": "PRR_1", "author": {"login": by}, "authorAssociation": "MEMBER",
            "body": "", "submittedAt": "2026-12-01T10:00:00Z", "includesCreatedEdit": false,
            "reactionGroups": [], "state": state, "commit": {"oid": oid},
        })
    };
    for k in keys {
        w.green(k, None);
        let head = w.bare_rev(k, "astedit/log-to-logger");
        let base = w.bare_rev(k, "main");
        let reviews = match k {
            "ok" => vec![review("reviewer", "APPROVED", &head)],
            "self" => vec![review("astedit-bot", "APPROVED", &head)],
            "stale" => vec![review("reviewer", "APPROVED", &base)],
            "blocked" => vec![
                review("reviewer", "APPROVED", &head),
                review("other", "CHANGES_REQUESTED", &head),
            ],
            _ => vec![],
        };
        std::fs::write(
            prs.join(format!("{k}.reviews")),
            serde_json::Value::from(reviews).to_string(),
        )
        .expect("reviews");
    }
    let out = w.run(&["--json", "campaign", "merge", &spec]);
    out.assert_code(0);
    let r = out.json();
    let a = actions(&r);
    assert_eq!(a["ok"], "merged", "{r}");
    for k in ["self", "stale", "blocked", "none"] {
        assert_eq!(a[k], "waiting", "{k}: {r}");
    }
    assert!(note_of(&r, "blocked").contains("CHANGES_REQUESTED"), "{r}");
    let merges = calls_of(&w, "gh", &["pr", "merge"]);
    assert_eq!(merges.len(), 1, "{merges:?}");
    assert!(merges[0][3].contains("/ok/pull/"), "{merges:?}");
}

/// Item 7, a rewritten state naming another branch: the entry's `branch` and
/// `pushed_commit` point at another team's approved, green pull request in the same
/// repository. The branch is the spec's, so that pull request is never looked at, and
/// nothing is merged.
#[test]
fn a_state_naming_another_teams_branch_gets_nothing_merged() {
    let (w, spec) = published(&["app"], "github");
    // Another team's branch and approved pull request.
    let bare = w.root.path().join("app.git");
    w.git_in(&bare, &["branch", "team/feature", "main"]);
    let theirs = w.push("app", "team/feature", &[("src/t.ts", "// team\n")], "team");
    let listed = serde_json::json!([{
        "number": 99, "url": "https://github.com/acme/app/pull/99", "state": "OPEN",
        "isDraft": false, "headRefName": "team/feature", "headRefOid": theirs,
        "isCrossRepository": false, "headRepositoryOwner": {"login": "acme"},
        "author": {"login": "teammate"},
        "statusCheckRollup": [{"status": "COMPLETED", "conclusion": "SUCCESS"}],
        "reviewDecision": "APPROVED", "latestReviews": [],
    }]);
    let branches = w.gh.path().join("branches").join("app");
    std::fs::create_dir_all(&branches).expect("mkdir");
    std::fs::write(branches.join("team_feature"), listed.to_string()).expect("write");
    forge_state(&w, "app", |e| {
        e["branch"] = "team/feature".into();
        e["pushed_commit"] = theirs.clone().into();
    });
    let out = w.run(&["--json", "campaign", "merge", &spec]);
    let r = out.json();
    assert_eq!(
        calls_of(&w, "gh", &["pr", "merge"]),
        Vec::<Vec<String>>::new(),
        "{r}"
    );
    // Only the spec's branch was asked about.
    for c in calls_of(&w, "gh", &["pr", "list"]) {
        assert_eq!(c[4], "astedit/log-to-logger", "{c:?}");
    }
    assert_eq!(w.bare_rev("app", "team/feature"), theirs);
}

/// Item 7, a rewritten state vouching for an attacker's commit: it was pushed onto the
/// campaign's branch after the review, and the state says it is the commit we pushed.
/// Its tree is not the base plus the preview, so it is not merged: the repository is
/// recorded diverged, saying why.
#[test]
fn a_state_vouching_for_an_attackers_commit_gets_nothing_merged() {
    let (w, spec) = published(&["app"], "github");
    w.green("app", Some("APPROVED"));
    let ours = state_entry(&w, "app")["pushed_commit"]
        .as_str()
        .expect("pushed")
        .to_string();
    let attack = w.push(
        "app",
        "astedit/log-to-logger",
        &[("src/app.ts", "logger.info(1); steal();\n")],
        "also",
    );
    assert_ne!(attack, ours);
    forge_state(&w, "app", |e| e["pushed_commit"] = attack.clone().into());
    let out = w.run(&["--json", "campaign", "merge", &spec]);
    out.assert_code(1);
    let r = out.json();
    assert_eq!(actions(&r)["app"], "diverged", "{r}");
    assert!(
        note_of(&r, "app").contains("not the commit this campaign made"),
        "{r}"
    );
    assert_eq!(
        calls_of(&w, "gh", &["pr", "merge"]),
        Vec::<Vec<String>>::new()
    );
    assert_eq!(state_entry(&w, "app")["status"], "diverged");
}

/// Item 7, where the preview is not in the clone (as for a collector): the commit is
/// vouched for only by a signed state commit. The state commits here are not signed, so
/// the pull request is not merged even though its head is what the state says we
/// pushed.
#[test]
fn without_its_preview_a_pushed_commit_needs_a_signed_state_commit() {
    let (w, spec) = published(&["app"], "github");
    w.green("app", Some("APPROVED"));
    let id = state_entry(&w, "app")["preview"]
        .as_str()
        .expect("preview")
        .to_string();
    let clone = Path::new(&w.workspace()).join("app");
    w.git_in(&clone, &["update-ref", "-d", &format!("refs/astedit/{id}")]);
    let out = w.run(&["--json", "campaign", "merge", &spec]);
    out.assert_code(1);
    let r = out.json();
    assert_eq!(actions(&r)["app"], "diverged", "{r}");
    assert!(
        note_of(&r, "app").contains("not signed by an allowed signer"),
        "{r}"
    );
    assert_eq!(
        calls_of(&w, "gh", &["pr", "merge"]),
        Vec::<Vec<String>>::new()
    );
}

/// Item 7 for a collector that signs: with `astedit.signPreviews` the state commits
/// are signed by an allowed signer, so a pull request whose preview is not in the clone
/// is merged on the word of the signed state commit that recorded its pushed commit;
/// an unsigned forged commit recording another pushed commit after it is refused.
#[test]
fn without_its_preview_a_signed_state_commit_vouches_for_the_pushed_commit() {
    let w = World::new();
    let key = crate::signing::keygen(w.state.home(), "ci");
    let allowed = w.state.home().join("allowed_signers");
    let line = format!("ci@example.com {}\n", crate::signing::public(&key));
    std::fs::write(&allowed, line).expect("allowed signers");
    for (k, v) in [
        ("gpg.format", "ssh".to_string()),
        ("user.signingKey", key.display().to_string()),
        ("gpg.ssh.allowedSignersFile", allowed.display().to_string()),
        ("astedit.signPreviews", "true".to_string()),
    ] {
        w.state.git(&["config", k, &v]);
    }
    let spec = w.published(SPEC_HEAD, &["good", "forged"]);
    let ws = w.workspace();
    let tip = w
        .state
        .git(&["rev-parse", "refs/astedit-campaign/log-to-logger"]);
    assert!(
        w.state.git_output(&["verify-commit", tip.trim()]).code == 0,
        "the state commits are signed"
    );
    for k in ["good", "forged"] {
        w.green(k, Some("APPROVED"));
        // As on a collector: the previews are not in the clones.
        let id = state_entry(&w, k)["preview"]
            .as_str()
            .expect("preview")
            .to_string();
        let clone = Path::new(&ws).join(k);
        w.git_in(&clone, &["update-ref", "-d", &format!("refs/astedit/{id}")]);
    }
    // An attacker's commit on `forged`'s branch, recorded by an unsigned state commit.
    let attack = w.push(
        "forged",
        "astedit/log-to-logger",
        &[("src/app.ts", "steal();\n")],
        "also",
    );
    forge_state(&w, "forged", |e| e["pushed_commit"] = attack.clone().into());
    let out = w.run(&["--json", "campaign", "merge", &spec]);
    out.assert_code(1);
    let r = out.json();
    let a = actions(&r);
    assert_eq!(a["good"], "merged", "{r}");
    assert_eq!(a["forged"], "diverged", "{r}");
    assert!(note_of(&r, "forged").contains("unsigned"), "{r}");
    let merges = calls_of(&w, "gh", &["pr", "merge"]);
    assert_eq!(merges.len(), 1, "{merges:?}");
    assert!(merges[0][3].contains("/good/pull/"), "{merges:?}");
}

/// Each state commit says who made it (the git identity), as a preview does.
#[test]
fn state_commits_name_who_made_them() {
    let (w, _spec) = published(&["app"], "github");
    let log = w.state.git(&[
        "log",
        "--format=%(trailers:key=Astedit-Made-By,valueonly)%x00",
        "refs/astedit-campaign/log-to-logger",
    ]);
    let made: Vec<&str> = log
        .split('\0')
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    let commits = w
        .state
        .git(&["rev-list", "--count", "refs/astedit-campaign/log-to-logger"]);
    assert_eq!(made.len().to_string(), commits.trim(), "{log}");
    let ident = w.state.git(&["var", "GIT_COMMITTER_IDENT"]);
    let who = ident.rsplitn(3, ' ').nth(2).expect("name <email>");
    assert!(made.iter().all(|m| *m == who), "{made:?} vs {who}");
}

/// Item 8: a fork's pull request from a branch with the campaign's name (gh's `--head`
/// matches the name only) is not adopted: a pull request of our own is opened, and the
/// fork's title and body are never written.
#[test]
fn a_forks_pull_request_with_the_campaigns_branch_is_not_adopted() {
    let (w, spec) = app_world();
    let ws = w.workspace();
    w.run(&["campaign", "stage", &spec, "--workspace", &ws])
        .assert_code(0);
    let prs = w.gh.path().join("prs");
    std::fs::create_dir_all(&prs).expect("mkdir");
    std::fs::write(prs.join("app"), "5\n").expect("fork pr");
    std::fs::write(prs.join("app.fork"), "mallory").expect("fork");
    std::fs::write(w.gh.path().join("counter"), "5\n").expect("counter");
    let out = w.run(&["--json", "campaign", "publish", &spec]);
    out.assert_code(0);
    let r = out.json();
    assert_eq!(actions(&r)["app"], "published", "{r}");
    assert_eq!(note_of(&r, "app"), "https://github.com/acme/app/pull/6");
    assert_eq!(w.creates(), 1);
    assert_eq!(
        calls_of(&w, "gh", &["pr", "edit"]),
        Vec::<Vec<String>>::new()
    );
    assert_eq!(state_entry(&w, "app")["pr_number"], 6);
}

/// Item 8 on GitLab: a merge request whose source project is not the target (a fork)
/// is not adopted, nor described again.
#[test]
fn a_forks_merge_request_with_the_campaigns_branch_is_not_adopted() {
    let w = World::new();
    let b = w.bare("app", &[("src/app.ts", "console.log(1);\n")]);
    let spec = w.spec(&format!(
        "{}[[repos]]\nurl = \"{}\"\nbase = \"main\"\nforge = \"gitlab\"\n",
        SPEC_HEAD,
        b.display()
    ));
    let ws = w.workspace();
    w.run(&["campaign", "stage", &spec, "--workspace", &ws])
        .assert_code(0);
    let mrs = w.gh.path().join("mrs");
    std::fs::create_dir_all(&mrs).expect("mkdir");
    std::fs::write(mrs.join("app"), "5\n").expect("fork mr");
    std::fs::write(mrs.join("app.fork"), "").expect("fork");
    std::fs::write(w.gh.path().join("counter"), "5\n").expect("counter");
    let out = w.run(&["--json", "campaign", "publish", &spec]);
    out.assert_code(0);
    let r = out.json();
    assert_eq!(actions(&r)["app"], "published", "{r}");
    assert_eq!(
        note_of(&r, "app"),
        "https://gitlab.com/acme/app/-/merge_requests/6"
    );
    assert_eq!(calls_of(&w, "glab", &["mr", "create"]).len(), 1);
    assert_eq!(
        calls_of(&w, "glab", &["mr", "update"]),
        Vec::<Vec<String>>::new()
    );
}

/// Item 11: `repos_file` must be a regular file of at most 1 MiB, checked before it is
/// read: `/dev/zero`, a FIFO (no writer: reading would wait forever) and a larger file
/// are refused with a clear error, under a 1 GiB address-space limit.
#[test]
fn a_repos_file_that_is_not_a_small_regular_file_is_refused() {
    let w = World::new();
    let fifo = w.root.path().join("repos.fifo");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .expect("mkfifo");
    assert!(made.success());
    let big = w.root.path().join("big.txt");
    std::fs::File::create(&big)
        .and_then(|f| f.set_len((1 << 20) + 1))
        .expect("big file");
    for (file, why) in [
        ("/dev/zero".to_string(), "not a regular file"),
        (fifo.display().to_string(), "not a regular file"),
        (big.display().to_string(), "larger than 1 MiB"),
    ] {
        let spec = w.spec(&SPEC_HEAD.replace(
            "name = \"log-to-logger\"\n",
            &format!("name = \"log-to-logger\"\nrepos_file = \"{file}\"\n"),
        ));
        let out = w
            .state
            .run_limited(&["campaign", "stage", &spec, "--dry-run"], None);
        out.assert_code(2);
        assert!(out.stderr.contains("repos_file"), "{}", out.stderr);
        assert!(out.stderr.contains(why), "{file}: {}", out.stderr);
    }
}
