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
use std::process::Stdio;
use std::time::Duration;
use std::time::Instant;

use super::worktree::Worktree;
use crate::cancel::Cancel;
use crate::change::FileMode;
use crate::repo::Repo;
use crate::report::verify::BaseCheck;
use crate::report::verify::NewOnly;
use crate::report::verify::VerifyReport;
use crate::report::Version;
use crate::Error;
use home::Home;

mod home;
mod new_only;
mod seed;

/// The default time a verify command may take.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(600);
/// How much of the command's output a report keeps (its end, where errors are).
pub const MAX_OUTPUT: usize = 64 * 1024;

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
    /// Passes when the check fails on the base too and the preview adds no diagnostic
    /// line to it (see [`new_only`]).
    pub new_only: bool,
}

/// Why a verify could not run.
#[derive(Debug, thiserror::Error)]
pub enum VerifyError {
    #[error("the verify command is empty")]
    Empty,
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
    super::worktree::remove_abandoned(repo);
    // Held until the worktree is gone (dropped after it): a Ctrl-C, SIGTERM or SIGHUP
    // kills the command and what it started, the worktree is removed, then the run
    // dies of it.
    let _stop = crate::cancel::StopSignals::catch();
    let cancel = &cancel.or_stopped();
    let tree = Worktree::add(repo, preview.meta.base_head.as_deref(), true)?;
    let files = write_preview(repo, &preview, &tree, cancel)?;
    let touched: Vec<&str> = preview.entries.iter().map(|e| e.path.as_str()).collect();
    let (ran, mut notes) = check_in(repo, &tree, &touched, req, cancel);
    let mut ran = ran?;
    let passed = ran.exit_code == Some(0) && !ran.timed_out;
    // `--new-only`: what the preview printed, for the base's to be taken from.
    let mine = (req.new_only && !passed)
        .then(|| new_only::diagnostics(&new_only::read_log(&mut ran.log), &tree.dir));
    drop(tree);
    let compared = match &mine {
        Some(mine) => Some(compare_with_base(
            repo, &preview, req, cancel, mine, &mut notes,
        )?),
        None if req.new_only => Some(NewOnly {
            base_check: None,
            added: Vec::new(),
        }),
        None => None,
    };
    // With `--new-only`, a failure the base has too is no failure of the preview's.
    let no_worse = compared.as_ref().is_some_and(|c| {
        c.base_check
            .as_ref()
            .is_some_and(|b| !b.passed && !b.timed_out)
            && c.added.is_empty()
            && ran.exit_code.is_some()
            && !ran.timed_out
    });
    let report = VerifyReport {
        schema_version: Version,
        id: preview.id.clone(),
        command: req.command.display(),
        base: preview.meta.base_head.clone(),
        files,
        passed: passed || no_worse,
        exit_code: ran.exit_code,
        signal: ran.signal,
        timed_out: ran.timed_out,
        duration_ms: ran.duration.as_millis().try_into().unwrap_or(u64::MAX),
        output: ran.output,
        output_truncated: ran.truncated,
        notes,
        new_only: compared,
    };
    // The journal keeps how the check ended, and the end of its output.
    let mut notes = vec![format!("verify: `{}` {}", report.command, how(&report))];
    notes.extend(report.notes.iter().map(|n| format!("note: {n}")));
    if let Some(c) = &report.new_only {
        notes.extend(c.added.iter().take(10).map(|l| format!("added: {l}")));
    }
    let lines: Vec<&str> = report.output.lines().collect();
    for line in &lines[lines.len().saturating_sub(10)..] {
        notes.push(format!("output: {line}"));
    }
    crate::txn::record_verify(repo, &preview, req.agent.as_deref(), notes)?;
    Ok(report)
}

/// Runs the check in `tree` with what it borrows from the checkout (`touched`: the
/// paths the preview wrote); returns how it went and the notes of what it borrowed.
fn check_in(
    repo: &Repo,
    tree: &Worktree,
    touched: &[&str],
    req: &VerifyRequest,
    cancel: &Cancel,
) -> (Result<Ran, Error>, Vec<String>) {
    let home = Home::borrow(repo, tree, touched);
    let ran = run_command_with(
        tree,
        &tree.dir,
        &req.command,
        req.timeout,
        cancel,
        &home.env,
    );
    (ran, home.finish())
}

/// Writes the preview's files over the base's in `tree`; returns how many.
fn write_preview(
    repo: &Repo,
    preview: &crate::txn::Preview,
    tree: &Worktree,
    cancel: &Cancel,
) -> Result<usize, Error> {
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
    Ok(files)
}

/// `--new-only` after the preview's check failed: the check on the base (cached per
/// base commit and command), and the diagnostic lines `mine` has that the base's lacks.
/// What the base's run did beyond its worktree joins `notes`.
fn compare_with_base(
    repo: &Repo,
    preview: &crate::txn::Preview,
    req: &VerifyRequest,
    cancel: &Cancel,
    mine: &[(String, String)],
    notes: &mut Vec<String>,
) -> Result<NewOnly, Error> {
    let base = preview.meta.base_head.as_deref();
    let base_key = base.unwrap_or("unborn");
    // The command's exact words (an argv and a shell line never read alike).
    let command_key = format!("{:?}", req.command);
    let (run, cached, timed_out) = match new_only::cached(repo, base_key, &command_key) {
        Some(run) => (run, true, false),
        None => {
            let tree = Worktree::add(repo, base, true)?;
            let (ran, borrowed) = check_in(repo, &tree, &[], req, cancel);
            notes.extend(borrowed.into_iter().map(|n| format!("on the base: {n}")));
            let mut ran = ran?;
            let run = new_only::BaseRun {
                base: base_key.to_string(),
                command: command_key,
                passed: ran.exit_code == Some(0) && !ran.timed_out,
                exit_code: ran.exit_code,
                diagnostics: new_only::diagnostics(&new_only::read_log(&mut ran.log), &tree.dir)
                    .into_iter()
                    .map(|(key, _)| key)
                    .collect(),
            };
            // A check cut short says nothing of the base: not kept.
            if !ran.timed_out {
                new_only::keep(repo, &run);
            }
            (run, false, ran.timed_out)
        }
    };
    if timed_out {
        notes.push("the check timed out on the base: nothing to compare with".into());
    }
    Ok(NewOnly {
        added: new_only::added(&run.diagnostics, mine),
        base_check: Some(BaseCheck {
            passed: run.passed,
            exit_code: run.exit_code,
            timed_out,
            cached,
            diagnostics: run.diagnostics.len(),
        }),
    })
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
    /// Everything the command printed (a temporary file).
    pub(super) log: std::fs::File,
}

/// Runs `command` in `dir` (a folder of `tree`) with stdout and stderr into one file
/// (no pipe to fill up), under a supervisor ([`crate::supervise`]): when it ends, is
/// timed out or cancelled, or a stop signal comes (while the caller holds
/// [`crate::cancel::StopSignals`]), or git-astedit is killed outright, what it started
/// is killed too.
pub(super) fn run_command(
    tree: &Worktree,
    dir: &Path,
    command: &VerifyCommand,
    timeout: Duration,
    cancel: &Cancel,
) -> Result<Ran, Error> {
    run_command_with(tree, dir, command, timeout, cancel, &[])
}

/// [`run_command`] with `env` added to the command's environment.
fn run_command_with(
    tree: &Worktree,
    dir: &Path,
    command: &VerifyCommand,
    timeout: Duration,
    cancel: &Cancel,
    env: &[(&str, std::path::PathBuf)],
) -> Result<Ran, Error> {
    let shown = command.display();
    let output_failed = |source| VerifyError::Output {
        command: shown.clone(),
        source,
    };
    let log = tempfile::tempfile().map_err(output_failed)?;
    let argv = match command {
        VerifyCommand::Argv(argv) => argv.clone(),
        VerifyCommand::Shell(line) => vec!["sh".into(), "-c".into(), line.clone()],
    };
    let started = Instant::now();
    let mut child = crate::supervise::spawn(&argv, Some(tree.holder()), |cmd| {
        cmd.current_dir(dir)
            .stdin(Stdio::null())
            .stdout(log.try_clone()?)
            .stderr(log.try_clone()?);
        // The worktree's own repository for git commands the command runs.
        super::worktree::scrub_repo_env(cmd);
        for (name, value) in env {
            cmd.env(name, value);
        }
        Ok(())
    })
    .map_err(|source| VerifyError::Spawn {
        command: shown.clone(),
        source,
    })?;
    let mut timed_out = false;
    let ended = loop {
        if let Some(ended) = child.try_wait().map_err(output_failed)? {
            break ended;
        }
        let cancelled = cancel.is_cancelled();
        if cancelled || started.elapsed() >= timeout {
            timed_out = !cancelled;
            let ended = child.stop().map_err(output_failed)?;
            if cancelled {
                cancel.check()?;
            }
            break ended;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let duration = started.elapsed();
    let mut log = log;
    let len = log.seek(std::io::SeekFrom::End(0)).map_err(output_failed)?;
    let from = len.saturating_sub(MAX_OUTPUT as u64);
    log.seek(std::io::SeekFrom::Start(from))
        .map_err(output_failed)?;
    let mut tail = Vec::new();
    log.read_to_end(&mut tail).map_err(output_failed)?;
    Ok(Ran {
        exit_code: ended.code,
        signal: ended.signal,
        timed_out,
        duration,
        output: String::from_utf8_lossy(&tail).into_owned(),
        truncated: from > 0,
        log,
    })
}
