//! `verify`: a preview's check in a temporary worktree; the user's tree untouched.

use std::time::Duration;
use std::time::Instant;

#[cfg(target_os = "linux")]
use crate::util::process_running as running;
use crate::util::TestRepo;

fn staged() -> TestRepo {
    let repo = TestRepo::new();
    repo.write("a.ts", "foo(1);\nfoo(2);\n");
    repo.write("keep.ts", "x();\n");
    repo.commit_all("base");
    repo.run(&["edit", "-p", "foo($A)", "-r", "bar($A)"])
        .assert_code(0);
    repo
}

/// The linked worktrees git knows of (the main one included).
fn worktrees(repo: &TestRepo) -> usize {
    repo.git(&["worktree", "list", "--porcelain"])
        .lines()
        .filter(|l| l.starts_with("worktree "))
        .count()
}

#[test]
fn the_command_sees_the_preview_and_the_tree_is_untouched() {
    let repo = staged();
    let before = repo.snapshot();
    let out = repo.run(&["--json", "verify", "--", "grep", "-c", "bar", "a.ts"]);
    out.assert_code(0);
    let v = out.json();
    assert_eq!(v["passed"], true);
    assert_eq!(v["exit_code"], 0);
    assert_eq!(v["output"], "2\n");
    assert_eq!(v["files"], 1);
    crate::contract::validate(&repo, "verify", &v);
    // A failing command: exit 1, its output kept.
    let out = repo.run(&["verify", "--", "grep", "foo", "a.ts"]);
    out.assert_code(1);
    assert!(
        out.stderr.contains("failed: `grep foo a.ts` exited 1"),
        "{}",
        out.stderr
    );
    // A command that writes and deletes in its worktree leaves the user's alone.
    let out = repo.run(&[
        "verify",
        "--",
        "sh",
        "-c",
        "echo x > new.txt; rm keep.ts a.ts",
    ]);
    out.assert_code(0);
    assert_eq!(repo.snapshot(), before);
    assert_eq!(worktrees(&repo), 1);
    // The preview is still pending, nothing applied.
    assert!(repo.read_string("a.ts").contains("foo(1)"));
    repo.run(&["apply"]).assert_code(0);
    repo.fsck();
}

#[test]
fn a_command_that_hangs_is_killed_at_the_timeout() {
    let repo = staged();
    let started = Instant::now();
    let out = repo.run(&[
        "--json",
        "verify",
        "--timeout",
        "1",
        "--",
        "sh",
        "-c",
        "sleep 60 & sleep 60",
    ]);
    out.assert_code(1);
    let v = out.json();
    assert_eq!(v["timed_out"], true);
    assert_eq!(v["passed"], false);
    // Killed with what it started: the run did not wait the minute out.
    assert!(started.elapsed() < Duration::from_secs(50));
    assert_eq!(worktrees(&repo), 1);
}

/// A verify killed outright (SIGKILL: no handler runs) takes its command with it and
/// leaves no worktree: its supervisor removes it; one left by a run whose supervisor
/// was killed too is removed by the next verify (issue 35 item 8).
#[cfg(target_os = "linux")]
#[test]
fn a_killed_verify_leaves_no_worktree_behind() {
    let repo = staged();
    let scratch = tempfile::tempdir().expect("tempdir");
    let (mut child, pid) = sleeping_verify(&repo, scratch.path(), StopSignals::Default);
    assert_eq!(holders(scratch.path()).len(), 1);
    child.kill().expect("kill");
    child.wait().expect("wait");
    wait_until("the command to end", || !running(pid));
    wait_until("the worktree to go", || holders(scratch.path()).is_empty());
    assert!(!scratch.path().join("marker").exists());
    // A folder of a git-astedit that is gone (a pid no process has now).
    let mut gone = std::process::Command::new("true").spawn().expect("true");
    let dead = gone.id();
    gone.wait().expect("wait");
    let left = scratch
        .path()
        .join("tmp")
        .join(format!("astedit-verify-{dead}-abc"));
    std::fs::create_dir_all(left.join("tree")).expect("mkdir");
    std::fs::write(left.join("tree").join("x"), "x").expect("write");
    let tmp = scratch.path().join("tmp").display().to_string();
    repo.run_with(
        ".",
        &["verify", "--", "true"],
        &[("TMPDIR", tmp.as_str())],
        None,
    )
    .assert_code(0);
    assert!(holders(scratch.path()).is_empty());
    assert_eq!(worktrees(&repo), 1);
}

/// The worktree folders in `scratch/tmp` (the runs' temporary folder).
#[cfg(target_os = "linux")]
fn holders(scratch: &std::path::Path) -> Vec<std::ffi::OsString> {
    std::fs::read_dir(scratch.join("tmp"))
        .expect("tmp")
        .flatten()
        .map(|e| e.file_name())
        .filter(|n| n.to_string_lossy().starts_with("astedit-verify-"))
        .collect()
}

#[test]
fn bad_input() {
    let repo = staged();
    // No command.
    repo.run(&["verify"]).assert_code(2);
    // A program that does not exist: exit 2, named.
    let out = repo.run(&["--json", "verify", "--", "no-such-program-here"]);
    out.assert_code(2);
    assert_eq!(out.json()["error"]["code"], "verify-spawn");
    // An unknown preview.
    repo.run(&["verify", "ffffffff", "--", "true"])
        .assert_code(2);
    assert_eq!(worktrees(&repo), 1);
}

#[test]
fn apply_verify_applies_only_what_passes() {
    let repo = staged();
    let before = repo.snapshot();
    // A failing check: exit 1, nothing applied, the preview still pending, the
    // journal says why.
    let out = repo.run(&[
        "--json",
        "apply",
        "--verify",
        "echo broken; grep -q foo a.ts",
    ]);
    out.assert_code(1);
    let err = out.json();
    assert_eq!(err["error"]["code"], "verify-failed");
    assert_eq!(err["error"]["details"]["output"], "broken\n");
    assert_eq!(repo.snapshot(), before);
    let log = repo.run(&["--json", "log"]).json();
    assert_eq!(log["events"][0]["event"], "verified");
    let notes = log["events"][0]["notes"].to_string();
    assert!(notes.contains("failed (exit 1"), "{notes}");
    assert!(notes.contains("output: broken"), "{notes}");
    // Out of time: killed, nothing applied.
    let out = repo.run(&["apply", "--verify", "sleep 60", "--verify-timeout", "1"]);
    out.assert_code(1);
    assert!(out.stderr.contains("timed out"), "{}", out.stderr);
    assert_eq!(repo.snapshot(), before);
    // Not with a part or a refresh.
    repo.run(&["apply", "--verify", "true", "--", "a.ts"])
        .assert_code(2);
    // A passing check: applied, with the check in the report, the journal and the
    // commit's trailers.
    let out = repo.run(&[
        "--json",
        "apply",
        "--verify",
        "grep -q bar a.ts",
        "--commit",
    ]);
    out.assert_code(0);
    let v = out.json();
    assert_eq!(v["verified"]["passed"], true);
    crate::contract::validate(&repo, "apply", &v);
    assert_eq!(repo.read_string("a.ts"), "bar(1);\nbar(2);\n");
    let message = repo.git(&["log", "-1", "--format=%B"]);
    assert!(
        message.contains("Astedit-Verified: grep -q bar a.ts passed (exit 0"),
        "{message}"
    );
    let log = repo.run(&["--json", "log"]).json();
    assert_eq!(log["events"][0]["event"], "applied");
    assert_eq!(log["events"][1]["event"], "verified");
    assert_eq!(worktrees(&repo), 1);
    repo.fsck();
}

/// Issue 35 item 2: the worktree is checked out at the preview's base; where the base
/// has a symlink to a folder outside and the preview writes a file under that path,
/// verify refuses (apply's containment check, exit 4) and nothing outside changes.
#[test]
fn a_symlinked_base_folder_is_never_written_through() {
    let outside = tempfile::tempdir().expect("tempdir");
    std::fs::write(outside.path().join("a.ts"), "outside(1);\n").expect("write");
    let repo = TestRepo::new();
    repo.write("keep.ts", "x();\n");
    std::os::unix::fs::symlink(outside.path(), repo.path().join("lib")).expect("symlink");
    repo.commit_all("base: lib is a link");
    // The user's tree has a plain folder there now; the preview is staged from it, on
    // the base that still has the link.
    std::fs::remove_file(repo.path().join("lib")).expect("rm");
    repo.write("lib/a.ts", "foo(1);\n");
    repo.git(&["rm", "-q", "--cached", "lib"]);
    repo.git(&["add", "lib/a.ts"]);
    repo.run(&["edit", "-p", "foo($A)", "-r", "bar($A)"])
        .assert_code(0);
    let before = std::fs::read_dir(outside.path()).expect("ls").count();
    for args in [
        &["--json", "verify", "--", "true"][..],
        &["--json", "apply", "--verify", "true"][..],
    ] {
        let out = repo.run(args);
        out.assert_code(4);
        let e = out.json();
        assert_eq!(e["error"]["code"], "refused", "{e}");
        assert!(
            e["error"]["message"]
                .as_str()
                .unwrap_or("")
                .contains("lib/a.ts"),
            "{e}"
        );
        assert_eq!(
            std::fs::read_to_string(outside.path().join("a.ts")).expect("read"),
            "outside(1);\n"
        );
        assert_eq!(
            std::fs::read_dir(outside.path()).expect("ls").count(),
            before
        );
        assert_eq!(worktrees(&repo), 1);
    }
    // Nothing applied: the user's file is as it was.
    assert_eq!(repo.read_string("lib/a.ts"), "foo(1);\n");
}

/// The running processes of process group `pgid`.
#[cfg(target_os = "linux")]
fn group(pgid: i32) -> Vec<i32> {
    std::fs::read_dir("/proc")
        .expect("/proc")
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| {
            std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .ok()
                .and_then(|stat| {
                    let rest = stat.rsplit_once(')')?.1.to_string();
                    let fields: Vec<&str> = rest.split_whitespace().collect();
                    Some(fields.get(2)? == &pgid.to_string().as_str())
                })
                .unwrap_or(false)
        })
        .filter(|pid| running(*pid))
        .collect()
}

/// Waits (at most a minute) until `ready` holds.
#[cfg(target_os = "linux")]
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

/// What the stop signals (SIGINT, SIGTERM, SIGHUP) of a run the tests start do.
#[cfg(target_os = "linux")]
#[derive(Clone, Copy)]
enum StopSignals {
    /// Their default action, as in a job at a terminal.
    Default,
    /// Ignored, as under `nohup` (and SIGINT in `cargo test &` from a script).
    Ignored,
}

/// Gives the run `cmd` starts the stop signals `how`, whatever the test run inherited:
/// a `cargo test` started in the background by a non-interactive shell (`sh -c 'cargo
/// test &'`, as CI scripts do) has SIGINT ignored, a run keeps an ignored stop signal
/// ignored, and a test expecting a Ctrl-C to stop it would wait out its command.
#[cfg(target_os = "linux")]
fn stop_signals(cmd: &mut std::process::Command, how: StopSignals) {
    use std::os::unix::process::CommandExt as _;
    let action = match how {
        StopSignals::Default => libc::SIG_DFL,
        StopSignals::Ignored => libc::SIG_IGN,
    };
    // SAFETY: the hook runs in the forked child before exec and only calls signal(2),
    // which is async-signal-safe.
    unsafe {
        cmd.pre_exec(move || {
            for signal in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
                if libc::signal(signal, action) == libc::SIG_ERR {
                    return Err(std::io::Error::last_os_error());
                }
            }
            Ok(())
        });
    }
}

/// A verify whose command writes its pid, then writes a marker once `scratch/go`
/// exists (or after two minutes): started with its temporary folder in `scratch/tmp`
/// and its stop signals `how`; returns the child and the command's pid once the
/// command runs.
#[cfg(target_os = "linux")]
fn sleeping_verify(
    repo: &TestRepo,
    scratch: &std::path::Path,
    how: StopSignals,
) -> (std::process::Child, i32) {
    let tmp = scratch.join("tmp");
    std::fs::create_dir_all(&tmp).expect("mkdir");
    let script = format!(
        "echo $$ > '{pid}'; i=0; while [ ! -e '{go}' ] && [ $i -lt 2400 ]; do \
         sleep 0.05; i=$((i+1)); done; touch '{marker}'",
        pid = scratch.join("pid").display(),
        go = scratch.join("go").display(),
        marker = scratch.join("marker").display()
    );
    let mut cmd = repo.command("", &["verify", "--", "sh", "-c", &script]);
    cmd.env("TMPDIR", &tmp)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    stop_signals(&mut cmd, how);
    let child = cmd.spawn().expect("spawn");
    let pid_file = scratch.join("pid");
    wait_until("the command to start", || {
        std::fs::read_to_string(&pid_file).is_ok_and(|p| p.ends_with('\n'))
    });
    let pid = std::fs::read_to_string(&pid_file)
        .expect("pid")
        .trim()
        .parse()
        .expect("a pid");
    (child, pid)
}

/// Issue 35 item 8: SIGINT (a Ctrl-C does not reach the command, which leads its own
/// process group), SIGTERM or SIGHUP to a running `verify` kills the command with what
/// it started, removes the worktree, and the run dies of the signal: the marker the
/// command would write later never appears.
#[cfg(target_os = "linux")]
#[test]
fn a_stop_signal_during_verify_kills_the_command_and_removes_the_worktree() {
    use std::os::unix::process::ExitStatusExt as _;
    for (name, number) in [("INT", 2), ("TERM", 15), ("HUP", 1)] {
        let repo = staged();
        let before = repo.snapshot();
        let scratch = tempfile::tempdir().expect("tempdir");
        let (mut child, pid) = sleeping_verify(&repo, scratch.path(), StopSignals::Default);
        assert_eq!(holders(scratch.path()).len(), 1);
        let sent = std::process::Command::new("kill")
            .args(["-s", name, "--", &child.id().to_string()])
            .status()
            .expect("kill");
        assert!(sent.success());
        let status = child.wait().expect("wait");
        assert_eq!(status.signal(), Some(number), "SIG{name}: {status:?}");
        // Nothing of the command's group runs: the marker can never be written.
        wait_until("the command's group to end", || group(pid).is_empty());
        assert!(!scratch.path().join("marker").exists(), "SIG{name}");
        assert_eq!(worktrees(&repo), 1, "SIG{name}");
        let left: Vec<_> = std::fs::read_dir(scratch.path().join("tmp"))
            .expect("tmp")
            .flatten()
            .map(|e| e.file_name())
            .collect();
        assert!(left.is_empty(), "SIG{name}: {left:?}");
        assert_eq!(repo.snapshot(), before);
    }
}

/// A stop signal that was ignored when the run started (`nohup`) stays ignored: the
/// verify runs its command to the end and reports it. (The kernel drops a signal sent
/// to a process that ignores it, so the command may finish right after.)
#[cfg(target_os = "linux")]
#[test]
fn a_stop_signal_ignored_at_the_start_stays_ignored_during_verify() {
    let repo = staged();
    let scratch = tempfile::tempdir().expect("tempdir");
    let (mut child, _) = sleeping_verify(&repo, scratch.path(), StopSignals::Ignored);
    for name in ["INT", "TERM", "HUP"] {
        let sent = std::process::Command::new("kill")
            .args(["-s", name, "--", &child.id().to_string()])
            .status()
            .expect("kill");
        assert!(sent.success());
    }
    std::fs::write(scratch.path().join("go"), "").expect("go");
    let status = child.wait().expect("wait");
    assert_eq!(status.code(), Some(0), "{status:?}");
    assert!(scratch.path().join("marker").exists());
    assert_eq!(worktrees(&repo), 1);
}
