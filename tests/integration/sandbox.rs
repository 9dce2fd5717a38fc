//! Issue 48 items 9 and 10: a command preview's command (`run`) and `verify`'s check
//! run with a throwaway git dir, so that no hook, config or ref they write reaches the
//! user's repository; nothing is copied into or out of their worktree through a
//! symlink; and nothing they start outlives git-astedit, killed outright included.

use std::path::Path;
use std::time::Duration;
use std::time::Instant;

use crate::util::TestRepo;

/// A committed tree with an uncommitted edit and a tag.
fn tree() -> TestRepo {
    let repo = TestRepo::new();
    repo.write("a.txt", "one\n");
    repo.write("keep.txt", "keep\n");
    repo.commit_all("base");
    repo.git(&["tag", "v1.0"]);
    repo.write("a.txt", "one\nuser\n");
    repo
}

/// The files under `dir` (recursively), with their bytes.
fn files_under(dir: &Path) -> Vec<(String, String)> {
    crate::util::files_under(dir)
        .into_iter()
        .map(|p| {
            let bytes = std::fs::read(&p).unwrap_or_default();
            (
                p.display().to_string(),
                String::from_utf8_lossy(&bytes).into_owned(),
            )
        })
        .collect()
}

/// The repository's refs (but git-astedit's own), config and hooks.
fn git_state(repo: &TestRepo) -> (String, String, Vec<String>) {
    let refs = repo.git(&["for-each-ref", "--format=%(refname) %(objectname)"]);
    let refs = refs.lines().filter(|l| !l.starts_with("refs/astedit"));
    (
        refs.collect::<Vec<_>>().join("\n"),
        repo.read_string(".git/config"),
        files_under(&repo.path().join(".git/hooks"))
            .into_iter()
            .map(|(p, bytes)| format!("{p} {}", bytes.len()))
            .collect(),
    )
}

/// The files a preview staged, by path.
fn staged_paths(out: &crate::util::Output) -> Vec<String> {
    let v = out.json();
    v["files"]
        .as_array()
        .expect("files")
        .iter()
        .map(|f| f["path"].as_str().unwrap_or("").to_string())
        .collect()
}

/// A hook the command writes where git says the hooks are (as an attacker would:
/// through `git rev-parse --git-path hooks`, the shared folder of a linked worktree)
/// lands in the throwaway git dir: the user's hooks are unchanged and a later commit
/// does not run it.
#[test]
fn a_hook_the_command_writes_never_reaches_the_repository() {
    let repo = tree();
    let before = git_state(&repo);
    let marker = repo.home().join("hook-ran");
    let script = format!(
        "h=$(git rev-parse --git-path hooks) && mkdir -p \"$h\" && \
         printf '#!/bin/sh\\ntouch {m}\\n' > \"$h/pre-commit\" && \
         chmod +x \"$h/pre-commit\" && echo two >> a.txt",
        m = marker.display()
    );
    let out = repo.run(&["--json", "run", "--", "sh", "-c", &script]);
    out.assert_code(0);
    assert_eq!(staged_paths(&out), ["a.txt"]);
    assert_eq!(git_state(&repo), before);
    repo.git(&["commit", "-q", "--allow-empty", "-m", "later"]);
    assert!(
        !marker.exists(),
        "the planted hook ran on the user's commit"
    );
    // The same for verify's command.
    let out = repo.run(&["--json", "verify", "--", "sh", "-c", &script]);
    out.assert_code(0);
    repo.git(&["commit", "-q", "--allow-empty", "-m", "later again"]);
    assert!(
        !marker.exists(),
        "the planted hook ran on the user's commit"
    );
    assert_eq!(git_state(&repo).2, before.2);
}

/// `core.hooksPath` and an alias written to the config, a branch and a tag created:
/// refused as before (exit 4, nothing staged), and now nothing of it is left in the
/// user's repository either.
#[test]
fn config_and_refs_the_command_writes_never_reach_the_repository() {
    let repo = tree();
    // A preview for verify to check.
    repo.run(&["run", "--", "sh", "-c", "echo z >> keep.txt"])
        .assert_code(0);
    let previews = repo.astedit_refs();
    let before = git_state(&repo);
    let snapshot = repo.snapshot();
    for script in [
        "git config core.hooksPath /tmp/evil-hooks; echo x >> a.txt",
        "git config alias.st '!touch owned'; echo x >> a.txt",
        "git branch sneaky; git tag sneaky-tag",
        "echo x >> a.txt; git commit -qam sneaky",
        "git config --file \"$(git rev-parse --git-common-dir)/config\" alias.co '!touch owned'",
    ] {
        let out = repo.run(&["--json", "run", "--", "sh", "-c", script]);
        out.assert_code(4);
        assert_eq!(out.json()["error"]["code"], "run-touched-git", "{script}");
        assert_eq!(repo.astedit_refs(), previews, "{script}");
        assert_eq!(git_state(&repo), before, "{script}");
        assert_eq!(repo.snapshot(), snapshot, "{script}");
        repo.run(&["verify", "--", "sh", "-c", script])
            .assert_code(0);
        assert_eq!(git_state(&repo), before, "verify: {script}");
    }
    let out = repo.git_output(&["config", "--get", "alias.st"]);
    assert_eq!(out.code, 1, "{}", out.stdout);
    repo.fsck();
}

/// What a command sees of git is the user's repository: the branch, the tags, the
/// uncommitted edit as the only difference, the local config, and what the user's
/// global config includes for this folder (an identity kept per folder).
#[test]
fn the_command_sees_the_repository_as_the_user_does() {
    let repo = tree();
    repo.git(&["config", "user.email", "local@example.com"]);
    let global = repo.home().join("gitconfig");
    let include = repo.home().join("work.inc");
    std::fs::write(&include, "[user]\n\tname = Work Name\n").expect("write");
    let top = std::fs::canonicalize(repo.path()).expect("canonical");
    std::fs::write(
        &global,
        format!(
            "[includeIf \"gitdir:{}/\"]\n\tpath = {}\n",
            top.display(),
            include.display()
        ),
    )
    .expect("write");
    let script = "{ git rev-parse --abbrev-ref HEAD; git describe --tags --always; \
                  git status --porcelain --untracked-files=no; git config user.name; \
                  git config user.email; } > seen.txt 2>&1";
    let global_s = global.display().to_string();
    let out = repo.run_with(
        ".",
        &["--json", "run", "--", "sh", "-c", script],
        &[("GIT_CONFIG_GLOBAL", global_s.as_str())],
        None,
    );
    out.assert_code(0);
    let id = out.json()["id"].as_str().expect("id").to_string();
    repo.run(&["apply", &id]).assert_code(0);
    assert_eq!(
        repo.read_string("seen.txt"),
        "main\nv1.0\n M a.txt\nWork Name\nlocal@example.com\n"
    );
}

/// Item 9, built as the attack was: HEAD has a symlink to a folder outside the
/// repository where the work tree has a real folder. Nothing is copied through the
/// link (the file outside is untouched), the command sees the user's folder, and only
/// what the command changed is staged (no deletion it never made).
#[test]
fn a_symlinked_base_folder_is_never_copied_through() {
    let outside = tempfile::tempdir().expect("tempdir");
    std::fs::write(outside.path().join("a.txt"), "outside\n").expect("write");
    let repo = TestRepo::new();
    repo.write("keep.txt", "keep\n");
    std::os::unix::fs::symlink(outside.path(), repo.path().join("lib")).expect("symlink");
    repo.commit_all("base: lib is a link");
    std::fs::remove_file(repo.path().join("lib")).expect("rm");
    repo.write("lib/a.txt", "inside\n");
    let before = files_under(outside.path());
    let out = repo.run(&[
        "--json",
        "run",
        "--",
        "sh",
        "-c",
        "cat lib/a.txt > seen.txt; echo more >> keep.txt",
    ]);
    out.assert_code(0);
    assert_eq!(files_under(outside.path()), before);
    let mut paths = staged_paths(&out);
    paths.sort();
    assert_eq!(paths, ["keep.txt", "seen.txt"]);
    let id = out.json()["id"].as_str().expect("id").to_string();
    repo.run(&["apply", &id]).assert_code(0);
    assert_eq!(repo.read_string("seen.txt"), "inside\n");
    assert_eq!(repo.read_string("lib/a.txt"), "inside\n");
    assert_eq!(files_under(outside.path()), before);
    // A command that replaces the folder by a link to the folder outside: its file
    // there is gone (its own change), and nothing is read back through the link.
    let script = format!("rm -r lib && ln -s '{}' lib", outside.path().display());
    let out = repo.run(&["--json", "run", "lib/a.txt", "--", "sh", "-c", &script]);
    out.assert_code(0);
    let v = out.json();
    assert_eq!(staged_paths(&out), ["lib/a.txt"], "{v}");
    assert_eq!(
        v["files"][0]["flags"],
        serde_json::json!(["deleted"]),
        "{v}"
    );
    assert_eq!(files_under(outside.path()), before);
}

/// Waits (at most a minute) until `ready` holds.
#[track_caller]
fn wait_until(what: &str, ready: impl Fn() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while !ready() {
        assert!(
            Instant::now() < deadline,
            "waited a minute in vain for {what}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Starts `args` (a run or verify whose command is `script`: it starts a background
/// job, then says so in `scratch/started` and sleeps), waits until the command runs,
/// kills git-astedit with SIGKILL, and checks that the background job never writes its
/// marker and that no worktree is left.
fn killed_outright(repo: &TestRepo, args: &[&str], scratch: &Path) {
    let tmp = scratch.join("tmp");
    std::fs::create_dir_all(&tmp).expect("mkdir");
    let mut cmd = repo.command("", args);
    cmd.env("TMPDIR", &tmp)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    let mut child = cmd.spawn().expect("spawn");
    let started = scratch.join("started");
    let job = scratch.join("job");
    wait_until("the command to start", || {
        std::fs::read_to_string(&started).is_ok_and(|s| s.ends_with('\n'))
            && std::fs::read_to_string(&job).is_ok_and(|s| s.ends_with('\n'))
    });
    child.kill().expect("kill");
    child.wait().expect("wait");
    assert!(
        job_never_wrote(scratch),
        "a background job of the command outlived git-astedit: {args:?}"
    );
    wait_until("the worktree to go", || {
        std::fs::read_dir(&tmp).is_ok_and(|mut d| d.next().is_none())
    });
}

/// Waits until the background job of [`job_script`] (its pid in `scratch/job`) is gone,
/// then says whether its marker is absent: it sleeps 3 s before writing, so once it is
/// gone it will never write.
fn job_never_wrote(scratch: &Path) -> bool {
    let pid: i32 = std::fs::read_to_string(scratch.join("job"))
        .expect("job")
        .trim()
        .parse()
        .expect("a pid");
    wait_until("the background job to end", || {
        !crate::util::process_running(pid)
    });
    !scratch.join("marker").exists()
}

/// The command's shell line: a background job (in the command's process group, or in
/// a session of its own with `setsid`) that writes its pid, sleeps 3 s and writes a
/// marker; then the command says it started and sleeps.
fn job_script(scratch: &Path, setsid: bool) -> String {
    let job = format!(
        "echo \\$\\$ > '{pid}'; sleep 3; echo x > '{marker}'",
        pid = scratch.join("job").display(),
        marker = scratch.join("marker").display()
    );
    let start = if setsid {
        format!("setsid sh -c \"{job}\" &")
    } else {
        format!("sh -c \"{job}\" &")
    };
    format!(
        "{start} echo $$ > '{started}'; sleep 30",
        started = scratch.join("started").display()
    )
}

/// Item 10: git-astedit killed with SIGKILL while `run` runs its command: the
/// command's background job, in its group or in a session of its own, never writes.
#[cfg(target_os = "linux")]
#[test]
fn a_run_killed_outright_leaves_nothing_running() {
    let repo = tree();
    for setsid in [false, true] {
        let scratch = tempfile::tempdir().expect("tempdir");
        let script = job_script(scratch.path(), setsid);
        killed_outright(&repo, &["run", "--", "sh", "-c", &script], scratch.path());
    }
    assert!(repo.astedit_refs().is_empty());
}

/// Item 10 for `verify`.
#[cfg(target_os = "linux")]
#[test]
fn a_verify_killed_outright_leaves_nothing_running() {
    let repo = tree();
    repo.run(&["run", "--", "sh", "-c", "echo two >> a.txt"])
        .assert_code(0);
    for setsid in [false, true] {
        let scratch = tempfile::tempdir().expect("tempdir");
        let script = job_script(scratch.path(), setsid);
        killed_outright(
            &repo,
            &["verify", "--", "sh", "-c", &script],
            scratch.path(),
        );
    }
}

/// A command that ends leaves nothing running either: its background job is killed
/// with the worktree it ran in.
#[cfg(target_os = "linux")]
#[test]
fn what_the_command_leaves_running_is_killed_when_it_ends() {
    let repo = tree();
    let scratch = tempfile::tempdir().expect("tempdir");
    // The job started (its pid written: under load the supervisor could otherwise kill
    // it before it wrote one, and there would be nothing to look for), the command ends
    // at once.
    let wait_for_job = format!(
        "while [ ! -s '{}' ]; do sleep 0.05; done; echo two >> a.txt",
        scratch.path().join("job").display()
    );
    let script = job_script(scratch.path(), true).replace("sleep 30", &wait_for_job);
    let out = repo.run(&["--json", "run", "--", "sh", "-c", &script]);
    out.assert_code(0);
    assert!(job_never_wrote(scratch.path()));
}
