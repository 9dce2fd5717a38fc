//! `git astedit hook install`: the git pre-commit hook running `scan --check --cached`.

use git_astedit::error::Exit;
use git_astedit::ops::hook::HookRequest;
use git_astedit::Error;

use super::Ctx;

#[derive(Debug, clap::Subcommand)]
pub enum HookCommand {
    /// Write the pre-commit hook, which runs `git astedit scan --check --cached`
    ///
    /// The hook goes where git looks (core.hooksPath or .git/hooks). An existing hook
    /// that astedit did not write is refused unless --force, which keeps it as
    /// pre-commit.astedit-backup.
    Install(InstallArgs),
}

#[derive(Debug, clap::Args)]
pub struct InstallArgs {
    /// Replace an existing pre-commit hook (it is kept as pre-commit.astedit-backup)
    #[arg(long)]
    pub force: bool,

    /// Check only the lines being committed (scan --changed-lines), so old code in a
    /// touched file does not block a commit
    #[arg(long)]
    pub changed_lines: bool,
}

pub fn run(ctx: &mut Ctx, cmd: HookCommand) -> Result<Exit, Error> {
    let HookCommand::Install(args) = cmd;
    let (repo, out) = ctx.parts()?;
    let request = HookRequest {
        force: args.force,
        // The binary running now is the hook's fallback when git-astedit is not on PATH.
        fallback: std::env::current_exe().ok(),
        changed_lines: args.changed_lines,
    };
    out.emit(&git_astedit::ops::hook::run(repo, &request)?)?;
    Ok(Exit::Ok)
}
