//! `git astedit verify`: run a command in a checkout of a preview.

use std::time::Duration;

use git_astedit::error::Exit;
use git_astedit::ops::verify::VerifyCommand;
use git_astedit::ops::verify::VerifyRequest;
use git_astedit::Error;

use super::Ctx;

/// Test a preview before it touches the tree: run a command in a temporary worktree
/// holding the preview's base commit and its changes
///
/// The work tree and the index are not touched; the worktree is removed afterwards.
/// Exits 0 when the command exits 0, 1 when it fails or runs out of time.
#[derive(Debug, clap::Args)]
pub struct VerifyArgs {
    /// The preview (a unique id prefix); default: the newest pending
    pub id: Option<String>,

    /// Kill the command (and what it started) after SECS seconds
    #[arg(long, value_name = "SECS", default_value_t = 600)]
    pub timeout: u64,

    /// Pass when the check fails on the base too and the preview adds no diagnostic
    /// line to its output (the base's run is cached per base commit and command)
    #[arg(long)]
    pub new_only: bool,

    /// The command and its arguments, after `--` (run as is, not through a shell)
    #[arg(last = true, required = true, value_name = "CMD")]
    pub command: Vec<String>,
}

pub fn run(ctx: &mut Ctx, args: VerifyArgs) -> Result<Exit, Error> {
    let request = VerifyRequest {
        id: args.id,
        command: VerifyCommand::Argv(args.command),
        timeout: Duration::from_secs(args.timeout.max(1)),
        agent: git_astedit::ops::agent_hook::shell_session(),
        new_only: args.new_only,
    };
    let (repo, out) = ctx.parts()?;
    let report =
        git_astedit::ops::verify::run(repo, &request, &git_astedit::cancel::Cancel::never())?;
    out.emit(&report)?;
    Ok(report.exit())
}
