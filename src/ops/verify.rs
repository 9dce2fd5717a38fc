/*!
`verify`: a preview tested before it touches the tree. The preview is checked out into
a temporary linked worktree (`git worktree add`) at the commit it was staged on, its
after-blobs written over it, and a command (a compiler, a test suite, a formatter check)
run there; the user's work tree and index are not touched. The worktree is removed
afterwards, whatever the command did to it; one left by a crash is pruned by the next
verify.

What the worktree holds is the preview's base commit plus the preview: uncommitted
changes of the user's outside the preview's files are not in it.
*/

use std::io::Read as _;
use std::io::Seek as _;
use std::path::Path;
use std::path::PathBuf;
use std::process::Command;
use std::process::Stdio;
use std::time::Duration;
use std::time::Instant;

use crate::cancel::Cancel;
use crate::change::FileMode;
use crate::repo::Repo;
use crate::report::verify::VerifyReport;
use crate::report::Version;
use crate::Error;

/// The default time a verify command may take.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(600);
/// How much of the command's output a report keeps (its end, where errors are).
pub const MAX_OUTPUT: usize = 64 * 1024;
/// The name prefix of verify worktrees (in the system's temporary folder).
const WORKTREE_PREFIX: &str = "astedit-verify-";

/// The command to run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum VerifyCommand {
    /// A program and its arguments, run as they are.
    Argv(Vec<String>),
    /// A shell command line, run by `sh -c`.
    Shell(String),
}

impl VerifyCommand {
    /// As a person would type it.
    pub fn display(&self) -> String {
        match self {
            VerifyCommand::Argv(argv) => argv
                .iter()
                .map(|a| crate::text::shell_word(a))
                .collect::<Vec<_>>()
                .join(" "),
            VerifyCommand::Shell(line) => line.clone(),
        }
    }
}

/// What to verify.
#[derive(Debug, Clone)]
pub struct VerifyRequest {
    /// The preview (a unique id prefix; none: the newest pending).
    pub id: Option<String>,
    pub command: VerifyCommand,
    /// Killed (with everything it started) after this long.
    pub timeout: Duration,
    /// The agent asking (MCP client name/version), for the journal.
    pub agent: Option<String>,
}

/// Why a verify could not run.
#[derive(Debug, thiserror::Error)]
pub enum VerifyError {
    #[error("the verify command is empty")]
    Empty,
    #[error("cannot make the verify worktree: {detail}")]
    Worktree { detail: String },
    #[error("cannot write {path} into the verify worktree")]
    Write {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot run `{command}`")]
    Spawn {
        command: String,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot keep the output of `{command}`")]
    Output {
        command: String,
        #[source]
        source: std::io::Error,
    },
    /// `apply --verify`: the check failed, so nothing was applied.
    #[error("preview {id} was not applied: `{command}` {how} in a worktree of it")]
    Failed {
        id: String,
        command: String,
        how: String,
        /// The end of what the command printed.
        output: String,
    },
}

impl crate::error::Classify for VerifyError {
    fn code(&self) -> &'static str {
        match self {
            VerifyError::Empty => "usage",
            VerifyError::Worktree { .. } => "verify-worktree",
            VerifyError::Write { .. } => "io",
            VerifyError::Spawn { .. } => "verify-spawn",
            VerifyError::Output { .. } => "io",
            VerifyError::Failed { .. } => "verify-failed",
        }
    }
    fn exit(&self) -> crate::error::Exit {
        match self {
            VerifyError::Empty => crate::error::Exit::BadInput,
            VerifyError::Spawn { source, .. } if source.kind() == std::io::ErrorKind::NotFound => {
                crate::error::Exit::BadInput
            }
            // A check that fails, as `scan --check` does.
            VerifyError::Failed { .. } => crate::error::Exit::NothingFound,
            _ => crate::error::Exit::Internal,
        }
    }
    fn hint(&self) -> Option<String> {
        match self {
            VerifyError::Empty => {
                Some("give the command after `--`: `git astedit verify ID -- cargo test`".into())
            }
            VerifyError::Spawn { .. } => Some(
                "the command runs in a checkout of the preview, not through a shell; for a \
                 shell line use `sh -c '…'`"
                    .into(),
            ),
            VerifyError::Failed { id, output, .. } => {
                let tail: Vec<&str> = output.lines().rev().take(10).collect();
                let mut hint = format!(
                    "the work tree is unchanged and {id} still pending; `git astedit verify \
                     {id} -- CMD` runs the check again"
                );
                if !tail.is_empty() {
                    hint.push_str("; the output ended with:");
                    for line in tail.iter().rev() {
                        hint.push_str(&format!("\n    {}", crate::text::escape_line(line)));
                    }
                }
                Some(hint)
            }
            _ => None,
        }
    }
    fn details(&self) -> Option<serde_json::Value> {
        match self {
            VerifyError::Failed {
                id,
                command,
                output,
                ..
            } => Some(serde_json::json!({ "id": id, "command": command, "output": output })),
            _ => None,
        }
    }
}

pub fn run(repo: &Repo, req: &VerifyRequest, cancel: &Cancel) -> Result<VerifyReport, Error> {
    match &req.command {
        VerifyCommand::Argv(argv) if argv.is_empty() => return Err(VerifyError::Empty.into()),
        VerifyCommand::Shell(line) if line.trim().is_empty() => {
            return Err(VerifyError::Empty.into())
        }
        _ => {}
    }
    let preview = crate::txn::find(repo, req.id.as_deref())?;
    remove_abandoned(repo);
    // Held until the worktree is gone (dropped after it): a Ctrl-C, SIGTERM or SIGHUP
    // kills the command's group, the worktree is removed, then the run dies of it.
    let _stop = crate::cancel::StopSignals::catch();
    let cancel = &cancel.or_stopped();
    let tree = Worktree::add(repo, preview.meta.base_head.as_deref())?;
    let mut files = 0;
    let mut known_dirs = std::collections::HashSet::new();
    for entry in &preview.entries {
        cancel.check()?;
        // Apply's containment check, in the worktree: the base may have a symlink where
        // the preview writes a folder (a preview fetched from elsewhere can be built so),
        // and writing or removing through it would reach outside the worktree.
        crate::txn::check_contained_in(&tree.dir, &entry.path, &mut known_dirs)?;
        let path = tree.dir.join(&entry.path);
        let failed = |source| VerifyError::Write {
            path: entry.path.clone(),
            source,
        };
        match entry.after {
            Some((id, mode)) => {
                let bytes = crate::txn::blob(repo, id)?;
                if let Some(parent) = path.parent() {
                    std::fs::create_dir_all(parent).map_err(failed)?;
                }
                // A symlink or file the base had there is replaced, never followed.
                let _ = std::fs::remove_file(&path);
                std::fs::write(&path, bytes).map_err(failed)?;
                set_mode(&path, mode).map_err(failed)?;
            }
            None => match std::fs::remove_file(&path) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(failed(e).into()),
                _ => {}
            },
        }
        files += 1;
    }
    let ran = run_command(&tree.dir, &req.command, req.timeout, cancel)?;
    drop(tree);
    let report = VerifyReport {
        schema_version: Version,
        id: preview.id.clone(),
        command: req.command.display(),
        base: preview.meta.base_head.clone(),
        files,
        passed: ran.exit_code == Some(0) && !ran.timed_out,
        exit_code: ran.exit_code,
        signal: ran.signal,
        timed_out: ran.timed_out,
        duration_ms: ran.duration.as_millis().try_into().unwrap_or(u64::MAX),
        output: ran.output,
        output_truncated: ran.truncated,
    };
    // The journal keeps how the check ended, and the end of its output.
    let mut notes = vec![format!("verify: `{}` {}", report.command, how(&report))];
    let lines: Vec<&str> = report.output.lines().collect();
    for line in &lines[lines.len().saturating_sub(10)..] {
        notes.push(format!("output: {line}"));
    }
    crate::txn::record_verify(repo, &preview, req.agent.as_deref(), notes)?;
    Ok(report)
}

/// How a check ended, in words: `passed (exit 0, 1.2 s)`.
pub fn how(report: &VerifyReport) -> String {
    let secs = report.duration_ms as f64 / 1000.0;
    let verdict = if report.passed { "passed" } else { "failed" };
    let status = match (report.timed_out, report.exit_code, report.signal) {
        (true, ..) => "timed out".to_string(),
        (false, Some(code), _) => format!("exit {code}"),
        (false, None, Some(sig)) => format!("signal {sig}"),
        (false, None, None) => "no status".to_string(),
    };
    format!("{verdict} ({status}, {secs:.1} s)")
}

/// A linked worktree in the temporary folder, removed (and unregistered) on drop
/// (`run` stages what a command changes in one).
pub(super) struct Worktree<'r> {
    repo: &'r Repo,
    /// Holds the folder; `dir` is inside it (git wants to make the folder itself).
    _holder: tempfile::TempDir,
    pub(super) dir: PathBuf,
    /// Whether git knows it (false on an unborn branch: a plain folder).
    pub(super) registered: bool,
}

impl<'r> Worktree<'r> {
    pub(super) fn add(repo: &'r Repo, base: Option<&str>) -> Result<Worktree<'r>, Error> {
        // The pid in the name tells a later verify whether its owner is still alive.
        let holder = tempfile::Builder::new()
            .prefix(&format!("{WORKTREE_PREFIX}{}-", std::process::id()))
            .tempdir()
            .map_err(|e| VerifyError::Worktree {
                detail: e.to_string(),
            })?;
        let dir = holder.path().join("tree");
        let dir_arg = dir.to_string_lossy().into_owned();
        let registered = match base {
            // The base comes from the preview's metadata: only an object id may reach
            // git's argv, never something it could read as an option.
            Some(base) if !base.bytes().all(|b| b.is_ascii_hexdigit()) || base.is_empty() => {
                return Err(VerifyError::Worktree {
                    detail: format!("the preview's base '{base}' is not a commit id"),
                }
                .into());
            }
            Some(base) => {
                git(
                    repo,
                    &["worktree", "add", "--detach", "--force", &dir_arg, base],
                )?;
                true
            }
            // An unborn branch has no commit to check out: the preview alone.
            None => {
                std::fs::create_dir(&dir).map_err(|e| VerifyError::Worktree {
                    detail: e.to_string(),
                })?;
                false
            }
        };
        Ok(Worktree {
            repo,
            _holder: holder,
            dir,
            registered,
        })
    }
}

impl Drop for Worktree<'_> {
    fn drop(&mut self) {
        if self.registered {
            let dir = self.dir.to_string_lossy().into_owned();
            // Failing here leaves a folder the temp holder removes and a registration
            // the next prune forgets.
            let _ = git(
                self.repo,
                &["worktree", "remove", "--force", "--force", &dir],
            );
        }
    }
}

/// Removes the verify worktrees of processes that are gone (a crash or a kill left
/// them), and forgets registrations whose folder is gone. Best effort: a failure
/// leaves them for the next verify.
pub(super) fn remove_abandoned(repo: &Repo) {
    let _ = git(repo, &["worktree", "prune"]);
    let Ok(out) = Command::new("git")
        .arg("-C")
        .arg(&repo.workdir)
        .args(["worktree", "list", "--porcelain"])
        .stdin(Stdio::null())
        .output()
    else {
        return;
    };
    let listing = String::from_utf8_lossy(&out.stdout).into_owned();
    let temp = std::env::temp_dir();
    let temp = std::fs::canonicalize(&temp).unwrap_or(temp);
    for path in listing.lines().filter_map(|l| l.strip_prefix("worktree ")) {
        let path = Path::new(path);
        let Some(holder) = path.parent().filter(|h| h.parent() == Some(temp.as_path())) else {
            continue;
        };
        let Some(pid) = holder
            .file_name()
            .and_then(|n| n.to_str())
            .and_then(|n| n.strip_prefix(WORKTREE_PREFIX))
            .and_then(|rest| rest.split('-').next())
            .and_then(|pid| pid.parse::<i32>().ok())
        else {
            continue;
        };
        if process_alive(pid) {
            continue;
        }
        let _ = git(
            repo,
            &[
                "worktree",
                "remove",
                "--force",
                "--force",
                &path.to_string_lossy(),
            ],
        );
        let _ = std::fs::remove_dir_all(holder);
    }
}

#[cfg(unix)]
fn process_alive(pid: i32) -> bool {
    // SAFETY: kill(2) with signal 0 only checks that the process exists.
    let r = unsafe { libc::kill(pid, 0) };
    r == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

#[cfg(not(unix))]
fn process_alive(_: i32) -> bool {
    // Without a way to tell, a worktree is never taken for abandoned.
    true
}

/// Runs git in the repository (for what gix cannot do: linked worktrees).
fn git(repo: &Repo, args: &[&str]) -> Result<(), VerifyError> {
    let out = Command::new("git")
        .arg("-C")
        .arg(&repo.workdir)
        .args(args)
        .env_remove("GIT_INDEX_FILE")
        .stdin(Stdio::null())
        .output()
        .map_err(|e| VerifyError::Worktree {
            detail: format!("git {}: {e}", args.join(" ")),
        })?;
    if !out.status.success() {
        return Err(VerifyError::Worktree {
            detail: format!(
                "git {}: {}",
                args.first().copied().unwrap_or(""),
                String::from_utf8_lossy(&out.stderr).trim()
            ),
        });
    }
    Ok(())
}

#[cfg(unix)]
pub(super) fn set_mode(path: &Path, mode: FileMode) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt as _;
    let bits = match mode {
        FileMode::Executable => 0o755,
        _ => 0o644,
    };
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(bits))
}

#[cfg(not(unix))]
pub(super) fn set_mode(_: &Path, _: FileMode) -> std::io::Result<()> {
    Ok(())
}

pub(super) struct Ran {
    pub(super) exit_code: Option<i32>,
    pub(super) signal: Option<i32>,
    pub(super) timed_out: bool,
    pub(super) duration: Duration,
    pub(super) output: String,
    pub(super) truncated: bool,
}

/// Runs `command` in `dir` with stdout and stderr into one file (no pipe to fill up),
/// in its own process group so that a timeout, a cancel or a stop signal (while the
/// caller holds [`crate::cancel::StopSignals`]) kills what it started too.
pub(super) fn run_command(
    dir: &Path,
    command: &VerifyCommand,
    timeout: Duration,
    cancel: &Cancel,
) -> Result<Ran, Error> {
    let shown = command.display();
    let output_failed = |source| VerifyError::Output {
        command: shown.clone(),
        source,
    };
    let mut log = tempfile::tempfile().map_err(output_failed)?;
    let mut cmd = match command {
        VerifyCommand::Argv(argv) => {
            let mut c = Command::new(&argv[0]);
            c.args(&argv[1..]);
            c
        }
        VerifyCommand::Shell(line) => {
            let mut c = Command::new("sh");
            c.arg("-c").arg(line);
            c
        }
    };
    cmd.current_dir(dir)
        // The worktree is its own repository for git commands the command runs.
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .env_remove("GIT_INDEX_FILE")
        .stdin(Stdio::null())
        .stdout(log.try_clone().map_err(output_failed)?)
        .stderr(log.try_clone().map_err(output_failed)?);
    #[cfg(unix)]
    std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
    // Killed along with a run that is killed outright (its group is not: the next
    // verify removes the worktree under what is left of it).
    crate::cancel::end_with_parent(&mut cmd, crate::cancel::ParentDeath::Kill);
    let started = Instant::now();
    let mut child = cmd.spawn().map_err(|source| VerifyError::Spawn {
        command: shown.clone(),
        source,
    })?;
    let mut timed_out = false;
    let status = loop {
        if let Some(status) = child.try_wait().map_err(output_failed)? {
            break status;
        }
        let cancelled = cancel.is_cancelled();
        if cancelled || started.elapsed() >= timeout {
            timed_out = !cancelled;
            kill_group(&mut child);
            let status = child.wait().map_err(output_failed)?;
            if cancelled {
                cancel.check()?;
            }
            break status;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let duration = started.elapsed();
    let len = log.seek(std::io::SeekFrom::End(0)).map_err(output_failed)?;
    let from = len.saturating_sub(MAX_OUTPUT as u64);
    log.seek(std::io::SeekFrom::Start(from))
        .map_err(output_failed)?;
    let mut tail = Vec::new();
    log.read_to_end(&mut tail).map_err(output_failed)?;
    #[cfg(unix)]
    let signal = std::os::unix::process::ExitStatusExt::signal(&status);
    #[cfg(not(unix))]
    let signal = None;
    Ok(Ran {
        exit_code: status.code(),
        signal,
        timed_out,
        duration,
        output: String::from_utf8_lossy(&tail).into_owned(),
        truncated: from > 0,
    })
}

/// Kills the child's process group (it leads one), then the child.
fn kill_group(child: &mut std::process::Child) {
    #[cfg(unix)]
    if let Ok(pid) = i32::try_from(child.id()) {
        // SAFETY: kill(2) with a negative pid signals the group the child leads; it
        // touches no memory of ours.
        unsafe {
            libc::kill(-pid, libc::SIGKILL);
        }
    }
    let _ = child.kill();
}
