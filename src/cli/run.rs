//! `git astedit run`: run a command in a worktree of the work tree and stage what it
//! changed there as a preview.

use std::time::Duration;

use git_astedit::cancel::Cancel;
use git_astedit::error::Exit;
use git_astedit::error::UsageError;
use git_astedit::ops::apply::VerifyPlan;
use git_astedit::ops::run::RunRequest;
use git_astedit::Error;

use super::common::StageArgs;
use super::Ctx;

/// Run a command in a worktree of the work tree and stage what it changed as a preview
///
/// The command (a formatter, a fixer, a script) runs in a temporary worktree holding
/// the work tree's tracked and untracked files. The work tree is not touched until the preview is applied: new, changed, deleted
/// files and mode changes are staged (within the pathspecs, when given), with the
/// command, its exit status and the end of its output in the preview's record.
/// `refresh` runs the command again on the tree as it is then. A command that exits
/// non-zero stages nothing (exit 1) unless --allow-failure; one that writes to the
/// repository (a commit, a tag, its config) is refused (exit 4).
#[derive(Debug, clap::Args)]
pub struct RunArgs {
    /// Stage only what the command changed under these git pathspecs (relative to the
    /// current folder); default: everything it changed
    #[arg(value_name = "PATHSPEC")]
    pub pathspecs: Vec<String>,

    #[command(flatten)]
    pub stage: StageArgs,

    /// Stage what the command changed even when it exits non-zero
    #[arg(long)]
    pub allow_failure: bool,

    /// Kill the command (and what it started) after SECS seconds
    #[arg(long, value_name = "SECS", default_value_t = 600)]
    pub timeout: u64,

    /// With --apply: first run CMD (a shell command line) in a worktree holding the
    /// preview; apply only if it exits 0 (see `verify`)
    #[arg(long, value_name = "CMD", requires = "apply")]
    pub verify: Option<String>,

    /// With --verify: kill CMD (and what it started) after SECS seconds
    #[arg(long, value_name = "SECS", default_value_t = 600, requires = "verify")]
    pub verify_timeout: u64,

    /// The command and its arguments, after `--` (run in the current folder's place in
    /// the worktree, as is, not through a shell)
    #[arg(last = true, required = true, value_name = "CMD")]
    pub command: Vec<String>,
}

pub fn run(ctx: &mut Ctx, args: RunArgs) -> Result<Exit, Error> {
    if args.command.first().is_none_or(|c| c.is_empty()) {
        return Err(UsageError("give the command to run after `--`".into()).into());
    }
    let (repo, out) = ctx.parts()?;
    let request = RunRequest {
        argv: args.command,
        pathspecs: args.pathspecs,
        allow_failure: args.allow_failure,
        timeout: Duration::from_secs(args.timeout.max(1)),
        verify: args
            .verify
            .map(|line| VerifyPlan::shell(line, args.verify_timeout)),
        staging: args.stage.staging(true, out.color()),
    };
    let report = git_astedit::ops::run::run(repo, &request, &Cancel::never())?;
    out.emit(&report)?;
    Ok(report.exit())
}
