//! Helpers for driving the real binary against real temporary git repositories.

#![allow(dead_code)]

use std::path::Path;
use std::path::PathBuf;
use std::process::Command;
use std::process::Stdio;

/// A temporary git repository with a hermetic environment.
pub struct TestRepo {
    pub dir: tempfile::TempDir,
    home: tempfile::TempDir,
}

/// The result of running a command.
#[derive(Debug)]
pub struct Output {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Output {
    /// Parses stdout as JSON.
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("stdout is not JSON ({e}):\n{}", self.stdout))
    }
    #[track_caller]
    pub fn assert_code(&self, code: i32) -> &Self {
        assert_eq!(
            self.code, code,
            "unexpected exit code\n--- stdout ---\n{}\n--- stderr ---\n{}",
            self.stdout, self.stderr
        );
        self
    }
}

pub fn bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_git-astedit"))
}

impl TestRepo {
    /// `git init` in a new temporary folder (SHA-1).
    pub fn new() -> TestRepo {
        Self::with_init_args(&[])
    }

    /// `git init <args>` in a new temporary folder.
    pub fn with_init_args(args: &[&str]) -> TestRepo {
        let repo = TestRepo {
            dir: tempfile::tempdir().expect("tempdir"),
            home: tempfile::tempdir().expect("tempdir"),
        };
        let mut init = vec!["init", "-q", "-b", "main"];
        init.extend_from_slice(args);
        repo.git(&init);
        repo
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// The `HOME` the commands run with (empty at first).
    pub fn home(&self) -> &Path {
        self.home.path()
    }

    /// Gives `cmd` the repository's hermetic environment (identity, no user config).
    pub fn env(&self, cmd: &mut Command) {
        cmd.env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", self.home.path())
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_AUTHOR_NAME", "Test Author")
            .env("GIT_AUTHOR_EMAIL", "author@example.com")
            .env("GIT_COMMITTER_NAME", "Test Committer")
            .env("GIT_COMMITTER_EMAIL", "committer@example.com")
            .env("GIT_AUTHOR_DATE", "2026-01-01T00:00:00Z")
            .env("GIT_COMMITTER_DATE", "2026-01-01T00:00:00Z")
            .env("LANG", "C.UTF-8");
    }

    /// Runs git in the repository root; panics on failure; returns stdout.
    #[track_caller]
    pub fn git(&self, args: &[&str]) -> String {
        let out = self.git_output(args);
        assert_eq!(out.code, 0, "git {args:?} failed: {}", out.stderr);
        out.stdout
    }

    /// Runs git in the repository root.
    pub fn git_output(&self, args: &[&str]) -> Output {
        let mut cmd = Command::new("git");
        self.env(&mut cmd);
        cmd.current_dir(self.path()).args(args);
        run(cmd, None)
    }

    /// Runs `git-astedit <args>` in the repository root.
    pub fn run(&self, args: &[&str]) -> Output {
        self.run_in(".", args)
    }

    /// Runs `git-astedit <args>` in a subfolder of the repository.
    pub fn run_in(&self, subdir: &str, args: &[&str]) -> Output {
        self.run_with(subdir, args, &[], None)
    }

    /// Runs `git-astedit <args>` with stdin and extra environment.
    pub fn run_with(
        &self,
        subdir: &str,
        args: &[&str],
        env: &[(&str, &str)],
        stdin: Option<&[u8]>,
    ) -> Output {
        let mut cmd = self.command(subdir, args);
        for (k, v) in env {
            cmd.env(k, v);
        }
        run(cmd, stdin)
    }

    /// A prepared `git-astedit` command (for tests that spawn it themselves).
    pub fn command(&self, subdir: &str, args: &[&str]) -> Command {
        let mut cmd = Command::new(bin());
        self.env(&mut cmd);
        cmd.current_dir(self.path().join(subdir)).args(args);
        cmd
    }

    /// Writes a file (creating folders).
    pub fn write(&self, path: &str, content: impl AsRef<[u8]>) {
        let p = self.path().join(path);
        if let Some(parent) = p.parent() {
            std::fs::create_dir_all(parent).expect("mkdir");
        }
        std::fs::write(p, content).expect("write");
    }

    pub fn read(&self, path: &str) -> Vec<u8> {
        std::fs::read(self.path().join(path)).unwrap_or_else(|e| panic!("read {path}: {e}"))
    }

    pub fn read_string(&self, path: &str) -> String {
        String::from_utf8(self.read(path)).expect("utf8")
    }

    pub fn exists(&self, path: &str) -> bool {
        self.path().join(path).symlink_metadata().is_ok()
    }

    /// `git add -A && git commit`.
    pub fn commit_all(&self, msg: &str) {
        self.git(&["add", "-A"]);
        self.git(&["commit", "-q", "-m", msg]);
    }

    /// Every file under the work tree (not `.git`) with its bytes, sorted: a snapshot
    /// to compare trees byte for byte.
    pub fn snapshot(&self) -> Vec<(String, Vec<u8>, bool)> {
        let mut out = Vec::new();
        snapshot_into(self.path(), self.path(), &mut out);
        out.sort();
        out
    }

    /// The refs under `refs/astedit/`.
    pub fn astedit_refs(&self) -> Vec<String> {
        self.git(&["for-each-ref", "--format=%(refname)", "refs/astedit/"])
            .lines()
            .map(str::to_string)
            .collect()
    }

    #[track_caller]
    pub fn fsck(&self) {
        let out = self.git_output(&["fsck", "--strict", "--no-progress"]);
        assert_eq!(out.code, 0, "git fsck failed: {}{}", out.stdout, out.stderr);
    }
}

fn snapshot_into(root: &Path, dir: &Path, out: &mut Vec<(String, Vec<u8>, bool)>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .expect("read_dir")
        .flatten()
        .collect();
    entries.sort_by_key(|e| e.file_name());
    for e in entries {
        let p = e.path();
        let rel = p
            .strip_prefix(root)
            .expect("prefix")
            .to_string_lossy()
            .into_owned();
        if rel == ".git" {
            continue;
        }
        let meta = std::fs::symlink_metadata(&p).expect("meta");
        if meta.is_dir() {
            out.push((format!("{rel}/"), Vec::new(), false));
            snapshot_into(root, &p, out);
        } else if meta.file_type().is_symlink() {
            let target = std::fs::read_link(&p).expect("readlink");
            out.push((
                rel,
                target.to_string_lossy().into_owned().into_bytes(),
                false,
            ));
        } else {
            use std::os::unix::fs::PermissionsExt;
            let exec = meta.permissions().mode() & 0o111 != 0;
            out.push((rel, std::fs::read(&p).expect("read"), exec));
        }
    }
}

/// Takes git's identity away from `cmd`, as on a CI runner: `home` (an empty folder)
/// for HOME, no global or system config, no author, committer or EMAIL variables.
pub fn without_identity(cmd: &mut Command, home: &Path) {
    cmd.env("HOME", home)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env_remove("GIT_CONFIG_GLOBAL")
        .env_remove("XDG_CONFIG_HOME")
        .env_remove("EMAIL");
    for who in ["AUTHOR", "COMMITTER"] {
        for what in ["NAME", "EMAIL"] {
            cmd.env_remove(format!("GIT_{who}_{what}"));
        }
    }
}

/// Whether process `pid` is running (a zombie is not: it only waits to be reaped).
#[cfg(target_os = "linux")]
pub fn process_running(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|stat| {
            let state = stat
                .rsplit_once(')')?
                .1
                .split_whitespace()
                .next()?
                .to_string();
            Some(state != "Z" && state != "X")
        })
        .unwrap_or(false)
}

/// Runs a prepared command (from [`TestRepo::command`]) without stdin.
pub fn run_command(cmd: Command) -> Output {
    run(cmd, None)
}

fn run(mut cmd: Command, stdin: Option<&[u8]>) -> Output {
    cmd.stdin(if stdin.is_some() {
        Stdio::piped()
    } else {
        Stdio::null()
    })
    .stdout(Stdio::piped())
    .stderr(Stdio::piped());
    let mut child = cmd.spawn().expect("spawn");
    if let Some(input) = stdin {
        use std::io::Write;
        let mut pipe = child.stdin.take().expect("stdin");
        // A command that refuses before reading its input closes the pipe first.
        if let Err(e) = pipe.write_all(input) {
            assert_eq!(e.kind(), std::io::ErrorKind::BrokenPipe, "write stdin: {e}");
        }
    }
    let out = child.wait_with_output().expect("wait");
    Output {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// The `(event, id)` pairs of a `log --json` output, in its order (newest first).
pub fn log_events(log: &serde_json::Value) -> Vec<(String, String)> {
    log["events"]
        .as_array()
        .expect("events")
        .iter()
        .map(|e| {
            (
                e["event"].as_str().unwrap_or("").to_string(),
                e["id"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect()
}

impl TestRepo {
    /// Runs `git-astedit <args>` with the fault hook pausing at `point` and SIGKILLs it
    /// there (no destructor, no cleanup: what a crash leaves).
    pub fn kill_at(&self, args: &[&str], point: &str) {
        kill_command_at(self.command(".", args), point);
    }
}

/// Runs a prepared `git-astedit` command with the fault hook pausing at `point`, and
/// SIGKILLs it there.
pub fn kill_command_at(mut cmd: Command, point: &str) {
    use std::io::BufRead as _;
    let args: Vec<_> = cmd.get_args().map(|a| a.to_owned()).collect();
    let mut child = cmd
        .env("GIT_ASTEDIT_FAULT", format!("pause:{point}:60000"))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let stderr = child.stderr.take().expect("stderr");
    let mut lines = std::io::BufReader::new(stderr).lines();
    let paused = lines.any(|l| l.is_ok_and(|l| l.contains("paused at")));
    child.kill().expect("kill");
    child.wait().expect("wait");
    assert!(paused, "git-astedit {args:?} never reached {point}");
}

impl TestRepo {
    /// Lock files under `.git` (any depth), relative to `.git`, sorted; not the
    /// repository lock `astedit.lock` (the next writer judges and breaks that one).
    pub fn lock_files(&self) -> Vec<String> {
        lock_files_in(&self.path().join(".git"))
    }
}

/// [`TestRepo::lock_files`] of the git folder `root`.
pub fn lock_files_in(root: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "lock")
                && p.file_name().is_some_and(|n| n != "astedit.lock")
            {
                out.push(p.strip_prefix(root).expect("prefix").display().to_string());
            }
        }
    }
    out.sort();
    out
}

/// The address-space limit of [`TestRepo::run_limited`]: far above what these inputs
/// need once bounded, far below what they took before (gigabytes).
pub const MEMORY_LIMIT_KB: u64 = 1024 * 1024;

impl TestRepo {
    /// Runs `git-astedit <args>` in the root under `ulimit -v` (`MEMORY_LIMIT_KB`),
    /// so an input that takes all memory fails the test instead of the machine.
    pub fn run_limited(&self, args: &[&str], stdin: Option<&[u8]>) -> Output {
        let mut cmd = Command::new("sh");
        self.env(&mut cmd);
        cmd.current_dir(self.path())
            .arg("-c")
            .arg(format!("ulimit -v {MEMORY_LIMIT_KB} && exec \"$0\" \"$@\""))
            .arg(bin())
            .args(args);
        run(cmd, stdin)
    }
}

/// Every file under `dir`, recursively (symlinks to folders not followed), sorted.
pub fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                stack.push(p);
            } else {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}
