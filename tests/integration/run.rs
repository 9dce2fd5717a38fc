//! `run`: a command's change in a worktree of its own, staged as a preview; the user's
//! tree untouched until apply; refresh runs the command again.

use serde_json::json;

use crate::util::TestRepo;

/// A committed tree, an uncommitted edit, an untracked file and an ignored one.
fn tree() -> TestRepo {
    let repo = TestRepo::new();
    repo.write(".gitignore", "*.log\n");
    repo.write("a.txt", "one\n");
    repo.write("b.txt", "bee\n");
    repo.write("tool.sh", "echo hi\n");
    repo.write("keep.txt", "keep\n");
    repo.commit_all("base");
    repo.write("a.txt", "one\nuser\n");
    repo.write("u.txt", "untracked\n");
    repo.write("old.log", "ignored\n");
    repo
}

/// The linked worktrees git knows of (the main one included).
fn worktrees(repo: &TestRepo) -> usize {
    repo.git(&["worktree", "list", "--porcelain"])
        .lines()
        .filter(|l| l.starts_with("worktree "))
        .count()
}

fn executable(repo: &TestRepo, path: &str) -> bool {
    use std::os::unix::fs::PermissionsExt;
    let meta = std::fs::metadata(repo.path().join(path)).expect("meta");
    meta.permissions().mode() & 0o111 != 0
}

const EDITS: &str = "printf 'ONE\\nuser\\n' > a.txt && rm b.txt && mkdir -p sub && \
                     echo new > sub/new.txt && chmod +x tool.sh && echo junk > out.log && \
                     cat u.txt old.log > copy.txt 2>/dev/null; echo done";

#[test]
fn a_command_that_edits_adds_deletes_and_chmods_is_staged_exactly() {
    let repo = tree();
    let before = repo.snapshot();
    let out = repo.run(&["--json", "run", "--reason", "tidy", "--", "sh", "-c", EDITS]);
    out.assert_code(0);
    let v = out.json();
    crate::contract::validate(&repo, "run", &v);
    assert_eq!(v["kind"], "run");
    assert_eq!(v["staged"], true);
    let files: Vec<(String, serde_json::Value)> = v["files"]
        .as_array()
        .expect("files")
        .iter()
        .map(|f| {
            (
                f["path"].as_str().unwrap_or("").to_string(),
                f["flags"].clone(),
            )
        })
        .collect();
    assert_eq!(
        files,
        vec![
            ("a.txt".to_string(), json!([])),
            ("b.txt".to_string(), json!(["deleted"])),
            // The command saw the untracked file; the ignored one was not copied.
            ("copy.txt".to_string(), json!(["added"])),
            ("sub/new.txt".to_string(), json!(["added"])),
            ("tool.sh".to_string(), json!([])),
        ]
    );
    assert_eq!(v["run"]["exit_code"], 0);
    assert_eq!(v["run"]["output"], "done\n");
    assert_eq!(v["run"]["argv"], json!(["sh", "-c", EDITS]));
    // Nothing written to the user's tree, no worktree left behind.
    assert_eq!(repo.snapshot(), before);
    assert_eq!(worktrees(&repo), 1);
    // The record holds the command, its status and its output's end.
    let id = v["id"].as_str().expect("id").to_string();
    let message = repo.git(&["log", "-1", "--format=%B", &format!("refs/astedit/{id}")]);
    assert!(message.contains("\"output_tail\": \"done\""), "{message}");
    assert!(message.contains("\"exit_code\": 0"), "{message}");

    // verify sees the preview, as for every kind.
    repo.run(&["verify", &id, "--", "test", "-x", "tool.sh"])
        .assert_code(0);
    repo.run(&["apply", &id]).assert_code(0);
    assert_eq!(repo.read_string("a.txt"), "ONE\nuser\n");
    assert!(!repo.exists("b.txt"));
    assert_eq!(repo.read_string("sub/new.txt"), "new\n");
    assert_eq!(repo.read_string("copy.txt"), "untracked\n");
    assert!(executable(&repo, "tool.sh"));
    assert!(!repo.exists("out.log"), "ignored output is not staged");
    assert_eq!(repo.read_string("u.txt"), "untracked\n");

    repo.run(&["undo", &id]).assert_code(0);
    assert_eq!(repo.snapshot(), before);
    assert!(!executable(&repo, "tool.sh"));
    repo.fsck();
}

#[test]
fn pathspecs_limit_what_is_staged_and_the_command_runs_in_the_current_folder() {
    let repo = TestRepo::new();
    repo.write("src/a.txt", "a\n");
    repo.write("docs/b.txt", "b\n");
    repo.commit_all("base");
    let out = repo.run_in(
        "src",
        &[
            "--json",
            "run",
            ".",
            "--",
            "sh",
            "-c",
            "echo A > a.txt; echo B > ../docs/b.txt",
        ],
    );
    out.assert_code(0);
    let v = out.json();
    assert_eq!(v["file_count"], 1, "{v}");
    assert_eq!(v["files"][0]["path"], "a.txt");
    assert_eq!(v["run"]["left_out"], 1);
    // A command that changes nothing stages nothing: exit 1.
    let out = repo.run(&["run", "--", "true"]);
    out.assert_code(1);
    assert!(out.stderr.contains("changed nothing"), "{}", out.stderr);
}

#[test]
fn a_failing_command_stages_nothing_unless_allowed() {
    let repo = tree();
    let before = repo.snapshot();
    let script = "echo half > a.txt; echo broken >&2; exit 3";
    let out = repo.run(&["--json", "run", "--", "sh", "-c", script]);
    out.assert_code(1);
    let err = out.json();
    assert_eq!(err["error"]["code"], "run-failed", "{err}");
    assert_eq!(err["error"]["details"]["output"], "broken\n");
    assert!(repo.astedit_refs().is_empty());
    assert_eq!(repo.snapshot(), before);
    assert_eq!(worktrees(&repo), 1);
    // Allowed: staged, with the status recorded.
    let out = repo.run(&["--json", "run", "--allow-failure", "--", "sh", "-c", script]);
    out.assert_code(0);
    let v = out.json();
    assert_eq!(v["run"]["exit_code"], 3);
    assert_eq!(v["files"][0]["path"], "a.txt");
    assert_eq!(repo.snapshot(), before);
    // A program that does not exist.
    let out = repo.run(&["--json", "run", "--", "no-such-program-here"]);
    out.assert_code(2);
    assert_eq!(out.json()["error"]["code"], "run-spawn");
    assert_eq!(worktrees(&repo), 1);
}

#[test]
fn a_command_that_writes_under_git_is_refused() {
    let repo = tree();
    let before = repo.snapshot();
    let head = repo.git(&["rev-parse", "HEAD"]);
    for script in [
        "echo x > a.txt; git commit -qam sneaky",
        "echo x > a.txt; rm .git; mkdir .git; echo x > .git/config",
        "git tag sneaky",
        "git config core.sneaky true",
    ] {
        let out = repo.run(&["--json", "run", "--", "sh", "-c", script]);
        out.assert_code(4);
        assert_eq!(out.json()["error"]["code"], "run-touched-git", "{script}");
        assert!(repo.astedit_refs().is_empty(), "{script}");
        assert_eq!(repo.snapshot(), before, "{script}");
    }
    assert_eq!(repo.git(&["rev-parse", "HEAD"]), head);
    repo.git(&["worktree", "prune"]);
    assert_eq!(worktrees(&repo), 1);
    // A `.git` folder the command makes in a subfolder is never staged.
    let out = repo.run(&[
        "--json",
        "run",
        "--",
        "sh",
        "-c",
        "mkdir -p sub/.git && echo x > sub/.git/config",
    ]);
    out.assert_code(1);
    assert!(repo.astedit_refs().is_empty());
    repo.fsck();
}

#[test]
fn refresh_runs_the_command_again_on_the_tree_as_it_is_now() {
    let repo = TestRepo::new();
    repo.write("a.txt", "x1\n");
    repo.write("b.txt", "x2\n");
    repo.write("c.txt", "y\n");
    repo.commit_all("base");
    let upper = ["run", "--json", "--", "sh", "-c", "sed -i s/x/X/g *.txt"];
    let v = repo.run(&upper).json();
    let id = v["id"].as_str().expect("id").to_string();
    assert_eq!(v["file_count"], 2);
    // Nothing moved: the command makes the same change, the preview is current.
    let r = repo.run(&["--json", "refresh", &id]);
    r.assert_code(0);
    assert_eq!(r.json()["state"], "current", "{}", r.stdout);
    // The tree moves on: a.txt edited, b.txt no longer matching, c.txt now matching,
    // d.txt new.
    repo.write("a.txt", "x1\nx9\n");
    repo.write("b.txt", "done\n");
    repo.write("c.txt", "y\nx3\n");
    repo.write("d.txt", "x4\n");
    repo.run(&["apply", &id]).assert_code(3);
    let r = repo.run(&["--json", "refresh", &id]);
    r.assert_code(0);
    let r = r.json();
    assert_eq!(r["state"], "refreshed", "{r}");
    assert_eq!(r["dropped"], json!(["b.txt"]));
    assert_eq!(r["newly_matching"], json!(["c.txt", "d.txt"]));
    let successor = r["successor"].as_str().expect("successor").to_string();
    let before = repo.snapshot();
    repo.run(&["apply", &successor]).assert_code(0);
    assert_eq!(repo.read_string("a.txt"), "X1\nX9\n");
    assert_eq!(repo.read_string("b.txt"), "done\n");
    assert_eq!(repo.read_string("c.txt"), "y\nX3\n");
    assert_eq!(repo.read_string("d.txt"), "X4\n");
    repo.run(&["undo", &successor]).assert_code(0);
    assert_eq!(repo.snapshot(), before);
    repo.fsck();
}

#[test]
fn apply_verify_applies_only_what_passes() {
    let repo = tree();
    let before = repo.snapshot();
    let out = repo.run(&[
        "--json",
        "run",
        "--apply",
        "--verify",
        "grep -q nothing a.txt",
        "--",
        "sh",
        "-c",
        "echo changed > a.txt",
    ]);
    out.assert_code(1);
    assert_eq!(out.json()["error"]["code"], "verify-failed");
    assert_eq!(repo.snapshot(), before);
    assert_eq!(repo.astedit_refs().len(), 1, "the preview stays pending");
    let out = repo.run(&[
        "--json",
        "run",
        "--apply",
        "--verify",
        "grep -q changed a.txt",
        "--",
        "sh",
        "-c",
        "echo changed > keep.txt; echo changed > a.txt",
    ]);
    out.assert_code(0);
    let v = out.json();
    assert_eq!(v["applied"], true, "{v}");
    assert_eq!(v["run"]["verified"]["passed"], true);
    assert_eq!(repo.read_string("keep.txt"), "changed\n");
}

#[test]
fn the_mcp_run_tool_is_offered_only_with_allow_run() {
    use crate::mcp::Server;
    let repo = tree();
    let names = |s: &mut Server| -> Vec<String> {
        s.request("tools/list", json!({}))["tools"]
            .as_array()
            .expect("tools")
            .iter()
            .map(|t| t["name"].as_str().unwrap_or("").to_string())
            .collect()
    };
    let mut s = Server::start(&repo);
    s.handshake("2025-06-18", "runner");
    assert!(!names(&mut s).contains(&"run".to_string()));
    drop(s);

    let mut s = Server::start_args(&repo, &["--allow-run"]);
    s.handshake("2025-06-18", "runner");
    assert!(names(&mut s).contains(&"run".to_string()));
    let before = repo.snapshot();
    let v = s.ok(
        "run",
        json!({"command": ["sh", "-c", "echo agent > keep.txt"], "reason": "agent run"}),
    );
    assert_eq!(v["kind"], "run");
    assert_eq!(v["files"][0]["path"], "keep.txt");
    assert!(v["diff"].as_str().unwrap_or("").contains("+agent"), "{v}");
    assert_eq!(repo.snapshot(), before);
    let id = v["id"].as_str().expect("id").to_string();
    s.ok(
        "resolve",
        json!({"action": "apply", "reason": "ok", "id": id}),
    );
    assert_eq!(repo.read_string("keep.txt"), "agent\n");
}

#[test]
fn on_an_unborn_branch_the_command_sees_the_files_alone() {
    let repo = TestRepo::new();
    repo.write(".gitignore", "*.log\n");
    repo.write("a.txt", "a\n");
    repo.write("x.log", "ignored\n");
    let out = repo.run(&[
        "--json",
        "run",
        "--",
        "sh",
        "-c",
        "echo A >> a.txt; ls > list.txt",
    ]);
    out.assert_code(0);
    let v = out.json();
    assert_eq!(v["file_count"], 2, "{v}");
    let id = v["id"].as_str().expect("id").to_string();
    repo.run(&["apply", &id]).assert_code(0);
    assert_eq!(repo.read_string("a.txt"), "a\nA\n");
    assert_eq!(repo.read_string("list.txt"), "a.txt\nlist.txt\n");
}
