//! `pr` (the CLI command and the `pr` tool) against a stub `gh`: a branch pushed and a
//! draft opened once, the fallback committer, what is refused and what it says.

use serde_json::json;
use serde_json::Value;

use super::error_json;
use super::journal;
use super::repo_with_code;
use super::text;
use super::GhStub;
use super::Server;

#[test]
fn pr_pushes_a_branch_and_opens_a_draft_once() {
    let t = repo_with_code();
    let gh = GhStub::new(&t);
    let edited = t.run(&[
        "--json",
        "edit",
        "-p",
        "foo($A)",
        "-r",
        "bar($A)",
        "--reason",
        "rename foo to bar",
        "--apply",
    ]);
    edited.assert_code(0);
    let id = edited.json()["id"].as_str().expect("id").to_string();
    let head = t.git(&["rev-parse", "HEAD"]).trim().to_string();

    let first = gh.run(&t, &["pr"]);
    first.assert_code(0);
    assert!(
        first
            .stdout
            .contains("Opened draft pull request https://github.com/acme/widgets/pull/7"),
        "{}",
        first.stdout
    );
    let j = journal(&t);
    assert_eq!(j[0]["event"], "pr", "the run is journalled");
    assert_eq!(j[0]["id"], id.as_str());
    assert!(j[0].get("agent").is_none(), "no agent on the command line");
    let branch = format!("astedit/{id}");
    // Pushed with plain git: the remote branch holds exactly the applied change on
    // top of the commit it was staged on.
    assert_eq!(
        gh.remote_git(&t, &["show", &format!("{branch}:src/a.rs")]),
        "fn main() {\n    bar(1);\n    bar(bar(2));\n}\n"
    );
    assert_eq!(
        gh.remote_git(&t, &["rev-parse", &format!("{branch}~")])
            .trim(),
        head
    );
    let changed = gh.remote_git(&t, &["diff", "--name-only", &format!("{branch}~"), &branch]);
    assert_eq!(changed, "src/a.rs\nsrc/b.rs\n");

    let calls = gh.calls();
    assert_eq!(calls.len(), 4, "{calls:?}");
    assert_eq!(calls[0], ["--version"]);
    assert_eq!(calls[1], ["auth", "status"]);
    assert_eq!(
        calls[2],
        [
            "pr",
            "list",
            "--head",
            &branch,
            "--state",
            "all",
            "--json",
            "number,url,state,isDraft,statusCheckRollup,reviewDecision,latestReviews,author,\
             headRefOid,isCrossRepository,headRepositoryOwner"
        ]
    );
    let create = &calls[3];
    assert_eq!(create.len(), 7, "{create:?}");
    // The caller's values travel in `--opt=VALUE` form: none can become an option.
    assert_eq!(
        create[..5],
        [
            "pr",
            "create",
            "--head",
            &branch,
            "--title=rename foo to bar",
        ]
    );
    assert_eq!(create[6], "--draft");
    for i in 0..4 {
        assert_eq!(
            gh.prompts_disabled(i),
            "1",
            "prompts not disabled in call {i}"
        );
    }

    let body = create[5].strip_prefix("--body=").expect("--body=");
    assert!(body.starts_with("rename foo to bar\n"), "{body}");
    assert!(body.contains("`foo($A)` → `bar($A)`"), "{body}");
    assert!(body.contains("| `src/a.rs` | 3 | 2 | 2 |"), "{body}");
    assert!(body.contains("| `src/b.rs` | 1 | 1 | 1 |"), "{body}");
    assert!(body.contains(&format!("staged     {id}")), "{body}");
    assert!(body.contains(&format!("applied    {id}")), "{body}");
    let marker = body
        .split("<!-- astedit:")
        .nth(1)
        .and_then(|m| m.split(" -->").next())
        .expect("marker");
    let marker: Value = serde_json::from_str(marker).expect("marker is JSON");
    assert_eq!(marker["id"], id.as_str());
    assert_eq!(marker["state"], "applied");
    assert_eq!(marker["reason"], "rename foo to bar");
    assert_eq!(marker["ops"][0]["pattern"], "foo($A)");
    assert_eq!(marker["files"][0]["path"], "src/a.rs");
    assert_eq!(marker["files"][0]["count"], 3);

    // Idempotent: the existing pull request is reported, nothing is created again.
    let second = gh.run(&t, &["--json", "pr", &id[..7]]);
    second.assert_code(0);
    let v = second.json();
    assert_eq!(v["created"], false);
    assert_eq!(v["draft"], true, "the draft found is still a draft: {v}");
    assert_eq!(v["url"], "https://github.com/acme/widgets/pull/7");
    assert_eq!(v["branch"], branch.as_str());
    let calls = gh.calls();
    assert_eq!(calls.len(), 7, "{calls:?}");
    assert!(
        calls
            .iter()
            .filter(|c| c.get(1).map(String::as_str) == Some("create"))
            .count()
            == 1
    );
}

/// Issue 35 item 7: with no git identity at all (an empty HOME, no config, no
/// variables: a CI runner), `pr` makes, pushes and journals its branch as the fallback
/// committer instead of failing on the reflog.
#[test]
fn pr_without_a_git_identity_uses_the_fallback_committer() {
    let t = repo_with_code();
    let gh = GhStub::new(&t);
    let staged = t.run(&["--json", "edit", "-p", "foo($A)", "-r", "bar($A)"]);
    staged.assert_code(0);
    let id = staged.json()["id"].as_str().expect("id").to_string();
    let home = tempfile::tempdir().expect("tempdir");
    let mut cmd = t.command(".", &["--json", "pr", &id]);
    cmd.env("PATH", gh.path_env())
        .env("GH_STUB_DIR", gh.dir.path());
    crate::util::without_identity(&mut cmd, home.path());
    let out = crate::util::run_command(cmd);
    out.assert_code(0);
    let branch = format!("astedit/{id}");
    assert_eq!(out.json()["branch"], branch.as_str());
    let fallback = "git-astedit <git-astedit@localhost>";
    assert_eq!(
        gh.remote_git(&t, &["log", "-1", "--format=%cn <%ce>", &branch])
            .trim(),
        fallback
    );
    assert_eq!(
        t.git(&["reflog", "show", "--format=%gn <%ge>", &branch])
            .trim(),
        fallback
    );
    assert_eq!(journal(&t)[0]["event"], "pr");
}

#[test]
fn pr_without_gh_or_auth_says_how_to_fix_it_and_pushes_nothing() {
    let t = repo_with_code();
    let gh = GhStub::new(&t);
    let staged = t.run(&["--json", "edit", "-p", "foo($A)", "-r", "bar($A)"]);
    staged.assert_code(0);
    let id = staged.json()["id"].as_str().expect("id").to_string();

    // A PATH with git but no gh.
    let bare = tempfile::tempdir().expect("tempdir");
    let git = String::from_utf8(
        std::process::Command::new("sh")
            .args(["-c", "command -v git"])
            .output()
            .expect("which git")
            .stdout,
    )
    .expect("utf8");
    std::os::unix::fs::symlink(git.trim(), bare.path().join("git")).expect("symlink");
    let path = bare.path().to_string_lossy().into_owned();
    let missing = t.run_with(".", &["pr", &id], &[("PATH", path.as_str())], None);
    missing.assert_code(70);
    assert!(
        missing.stderr.contains("`gh` was not found"),
        "{}",
        missing.stderr
    );
    assert!(
        missing.stderr.contains("https://cli.github.com"),
        "{}",
        missing.stderr
    );

    std::fs::write(gh.dir.path().join("noauth"), "").expect("write");
    let noauth = gh.run(&t, &["--json", "pr", &id]);
    noauth.assert_code(70);
    let err = &noauth.json()["error"];
    assert_eq!(err["code"], "gh-auth");
    assert!(err["hint"]
        .as_str()
        .unwrap_or_default()
        .contains("gh auth login"));

    assert!(
        t.git_output(&[
            "rev-parse",
            "--verify",
            "-q",
            &format!("refs/heads/astedit/{id}")
        ])
        .code
            != 0,
        "no branch made"
    );
    assert!(
        gh.remote_git(&t, &["for-each-ref"]).is_empty(),
        "nothing pushed"
    );

    std::fs::write(gh.dir.path().join("offline"), "").expect("write");
    let offline = gh.run(&t, &["--json", "pr", &id]);
    offline.assert_code(70);
    assert_eq!(offline.json()["error"]["code"], "network");

    // With gh ready, a configured remote that cannot be reached fails the push, with
    // the fix.
    std::fs::remove_file(gh.dir.path().join("offline")).expect("rm");
    std::fs::remove_file(gh.dir.path().join("noauth")).expect("rm");
    t.git(&["remote", "add", "gone", "/nonexistent/astedit-remote.git"]);
    let push = gh.run(&t, &["--json", "pr", &id, "--remote", "gone"]);
    push.assert_code(70);
    let err = &push.json()["error"];
    assert_eq!(err["code"], "push-failed");
    assert!(err["hint"]
        .as_str()
        .unwrap_or_default()
        .contains("git remote -v"));
    assert!(
        gh.calls()
            .iter()
            .all(|c| c.get(1).map(String::as_str) != Some("create")),
        "no pull request without a pushed branch"
    );
}

/// A remote (or base) that would be an option of `git push`/`gh`, or that names no
/// configured remote, is refused before anything runs: no command of the caller's
/// choosing, no push to a place the repository never named. CLI and tool alike.
#[test]
fn pr_refuses_option_like_and_unconfigured_remotes() {
    let t = repo_with_code();
    let gh = GhStub::new(&t);
    let staged = t.run(&["--json", "edit", "-p", "foo($A)", "-r", "bar($A)"]);
    staged.assert_code(0);
    let id = staged.json()["id"].as_str().expect("id").to_string();
    let pwned = t.path().join("pwned");
    let hostile = format!("--receive-pack=touch {}; git-receive-pack", pwned.display());
    let other = tempfile::tempdir().expect("tempdir");
    t.git(&["init", "-q", "--bare", &other.path().to_string_lossy()]);
    let unknown = other.path().to_string_lossy().into_owned();
    for (args, what) in [
        (
            vec!["--json", "pr", &id, &format!("--remote={hostile}")],
            "remote",
        ),
        (vec!["--json", "pr", &id, "--remote=-v"], "remote"),
        (vec!["--json", "pr", &id, "--remote", "nosuch"], "remote"),
        (vec!["--json", "pr", &id, "--remote", &unknown], "remote"),
        (vec!["--json", "pr", &id, "--base=--help"], "base branch"),
    ] {
        let out = gh.run(&t, &args);
        out.assert_code(4);
        let err = &out.json()["error"];
        assert_eq!(err["code"], "unsafe-argument", "{args:?}: {err}");
        assert!(
            err["message"]
                .as_str()
                .unwrap_or_default()
                .starts_with(what),
            "{args:?}: {err}"
        );
    }
    let err = gh
        .run(&t, &["--json", "pr", &id, "--remote", "nosuch"])
        .json();
    assert!(
        err["error"]["hint"]
            .as_str()
            .unwrap_or_default()
            .contains("origin"),
        "the hint names the configured remotes: {err}"
    );

    let mut s = Server::start_with(
        &t,
        ".",
        &[
            ("PATH", gh.path_env().as_str()),
            ("GH_STUB_DIR", &gh.dir.path().to_string_lossy()),
        ],
    );
    s.handshake("2025-06-18", "hostile");
    let result = s.call("pr", json!({"id": id, "remote": hostile}));
    assert_eq!(result["isError"], true, "{result}");
    assert_eq!(error_json(&result)["error"]["code"], "unsafe-argument");
    drop(s);

    assert!(!pwned.exists(), "the hostile receive-pack ran");
    assert!(gh.calls().is_empty(), "gh ran: {:?}", gh.calls());
    assert!(
        gh.remote_git(&t, &["for-each-ref"]).is_empty(),
        "nothing pushed"
    );
    assert!(
        std::fs::read_dir(other.path().join("refs/heads"))
            .map(|d| d.count())
            .unwrap_or(0)
            == 0,
        "nothing pushed to the unconfigured place"
    );

    // The URL of a configured remote is as good as its name.
    let url = gh.remote.path().to_string_lossy().into_owned();
    let out = gh.run(&t, &["--json", "pr", &id, "--remote", &url]);
    out.assert_code(0);
    assert_eq!(out.json()["remote"], "origin");
}

/// A no-id `pr` never publishes a preview that was undone since (here by another
/// agent, through the CLI): as for `resolve`, the error is `only-undone-pending` and
/// names it, and nothing is pushed or asked of gh.
#[test]
fn a_no_id_pr_does_not_publish_an_undone_preview() {
    let t = repo_with_code();
    let gh = GhStub::new(&t);
    let mut s = Server::start_with(
        &t,
        ".",
        &[
            ("PATH", gh.path_env().as_str()),
            ("GH_STUB_DIR", &gh.dir.path().to_string_lossy()),
        ],
    );
    s.handshake("2025-06-18", "publisher");
    let staged = s.ok(
        "ast_edit",
        json!({"ops": [{"pattern": "foo($A)", "rewrite": "bar($A)"}]}),
    );
    let id = staged["id"].as_str().expect("id").to_string();
    s.ok(
        "resolve",
        json!({"action": "apply", "id": id, "reason": "publish later"}),
    );
    t.run(&["undo", &id, "--reason", "another agent took it back"])
        .assert_code(0);
    let refused = s.call("pr", json!({}));
    assert_eq!(refused["isError"], true, "{refused}");
    let err = error_json(&refused);
    assert_eq!(err["error"]["code"], "only-undone-pending", "{err}");
    assert!(err.to_string().contains(&id), "{err}");
    assert!(gh.calls().is_empty(), "gh ran: {:?}", gh.calls());
    assert!(gh.remote_git(&t, &["for-each-ref"]).is_empty());
    s.finish();
}

/// The `pr` tool is the CLI's `pr` in-process: annotated open-world and destructive;
/// a no-id call means this session's transaction; the commit it makes carries the
/// `Astedit-*` trailers and the (escaped) agent; the journal names the agent.
#[test]
fn pr_tool_opens_a_pull_request_named_for_the_agent() {
    let t = repo_with_code();
    let gh = GhStub::new(&t);
    let path = gh.path_env();
    let dir = gh.dir.path().to_string_lossy().into_owned();
    let env = [("PATH", path.as_str()), ("GH_STUB_DIR", dir.as_str())];

    // Another session's preview is never published without its id.
    let mut other = Server::start_with(&t, ".", &env);
    other.handshake("2025-06-18", "bystander");
    let tools = other.request("tools/list", json!({}));
    let pr_tool = tools["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .find(|t| t["name"] == "pr")
        .expect("a pr tool")
        .clone();
    assert_eq!(pr_tool["annotations"]["openWorldHint"], true);
    assert_eq!(pr_tool["annotations"]["destructiveHint"], true);
    assert_eq!(pr_tool["annotations"]["readOnlyHint"], false);

    let mut s = Server::start_with(&t, ".", &env);
    s.handshake("2025-06-18", "pr\nbot");
    let staged = s.ok(
        "ast_edit",
        json!({"ops": [{"pattern": "foo($A)", "rewrite": "bar($A)"}], "reason": "rename foo"}),
    );
    let id = staged["id"].as_str().expect("id").to_string();
    let head = t.git(&["rev-parse", "HEAD"]).trim().to_string();

    let refused = other.call("pr", json!({}));
    assert_eq!(refused["isError"], true);
    assert_eq!(error_json(&refused)["error"]["code"], "id-required");
    assert!(text(&refused).contains(&id), "{}", text(&refused));
    assert!(
        text(&refused).contains(&format!(
            "call pr again with the id, e.g. {{\"id\": \"{id}\"}}"
        )),
        "{}",
        text(&refused)
    );
    assert!(gh.calls().is_empty(), "nothing ran for a refused call");
    other.finish();

    // No id: the preview this session staged (pending: the branch is made for it).
    let opened = s.ok("pr", json!({"title": "Rename foo"}));
    assert_eq!(opened["id"], id.as_str());
    assert_eq!(opened["created"], true);
    assert_eq!(opened["draft"], true);
    assert_eq!(opened["state"], "pending");
    assert_eq!(opened["url"], "https://github.com/acme/widgets/pull/7");
    crate::contract::validate(&t, "pr", &opened);
    let branch = format!("astedit/{id}");
    assert_eq!(opened["branch"], branch.as_str());
    let tip = opened["commit"].as_str().expect("commit").to_string();
    assert_eq!(
        gh.remote_git(&t, &["rev-parse", &branch]).trim(),
        tip,
        "the branch was pushed"
    );
    assert_eq!(
        gh.remote_git(&t, &["rev-parse", &format!("{branch}~")])
            .trim(),
        head
    );
    assert_eq!(
        gh.remote_git(&t, &["show", &format!("{branch}:src/b.rs")]),
        "fn b() { bar(3); }\n"
    );
    let trailers = t.git(&["log", "-1", "--format=%(trailers:only,unfold)", &tip]);
    assert!(
        trailers.contains(&format!("Astedit-Id: {id}")),
        "{trailers}"
    );
    assert!(trailers.contains("Astedit-Kind: edit"), "{trailers}");
    assert!(
        trailers.contains("Astedit-Agent: pr\\nbot/1.0"),
        "one escaped line: {trailers}"
    );
    let subject = t.git(&["log", "-1", "--format=%s", &tip]);
    assert_eq!(subject.trim(), "Rename foo");
    let create = gh
        .calls()
        .into_iter()
        .find(|c| c.get(1).map(String::as_str) == Some("create"))
        .expect("gh pr create");
    assert!(create.contains(&"--draft".to_string()), "{create:?}");
    assert_eq!(gh.prompts_disabled(0), "1");

    let j = journal(&t);
    assert_eq!(j[0]["event"], "pr");
    assert_eq!(j[0]["id"], id.as_str());
    assert_eq!(j[0]["agent"], "pr\\nbot/1.0");
    assert!(
        j[0]["notes"][0]
            .as_str()
            .unwrap_or_default()
            .contains("https://github.com/acme/widgets/pull/7"),
        "{}",
        j[0]
    );
    // Still pending: a pull request does not apply anything.
    assert_eq!(t.astedit_refs().len(), 1);
    let log = t.run(&["log"]).stdout;
    assert!(
        log.lines()
            .any(|l| l.contains("pr ") && l.contains(&id) && l.contains("pr\\nbot")),
        "{log}"
    );

    // Again, by id prefix: the existing pull request, nothing created twice.
    let again = s.ok("pr", json!({"id": &id[..7]}));
    assert_eq!(again["created"], false);
    assert_eq!(again["commit"], tip.as_str());
    let creates = gh
        .calls()
        .iter()
        .filter(|c| c.get(1).map(String::as_str) == Some("create"))
        .count();
    assert_eq!(creates, 1);

    // Without gh logged in: an isError result with the fix, nothing pushed anew.
    std::fs::write(gh.dir.path().join("noauth"), "").expect("write");
    let noauth = s.call("pr", json!({"id": id}));
    assert_eq!(noauth["isError"], true);
    let err = error_json(&noauth);
    assert_eq!(err["error"]["code"], "gh-auth");
    assert!(text(&noauth).contains("gh auth login"), "{}", text(&noauth));
    s.finish();
    assert_eq!(t.git_output(&["fsck", "--strict"]).code, 0);
}
