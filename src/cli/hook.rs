//! `git astedit hook install`: the git pre-commit hook running `scan --check --cached
//! --changed-lines` (`--all`: `scan --check --cached`).

use git_astedit::error::Exit;
use git_astedit::ops::hook::HookRequest;
use git_astedit::Error;

use super::Ctx;

#[derive(Debug, clap::Subcommand)]
pub enum HookCommand {
    /// Write the pre-commit hook, which runs `git astedit scan --check --cached
    /// --changed-lines`
    ///
    /// The commit is blocked when the rules would change, or flag as an error, a line
    /// it adds or changes. The hook goes where git looks (core.hooksPath or
    /// .git/hooks). A hook astedit wrote before is rewritten; one it did not write is
    /// refused unless --force, which keeps it as pre-commit.astedit-backup.
    Install(InstallArgs),
}

#[derive(Debug, clap::Args)]
pub struct InstallArgs {
    /// Replace an existing pre-commit hook (it is kept as pre-commit.astedit-backup)
    #[arg(long)]
    pub force: bool,

    /// Check every staged file whole (`scan --check --cached`), not only the lines
    /// being committed
    #[arg(long, conflicts_with = "changed_lines")]
    pub all: bool,

    /// Check only the lines being committed (the default)
    #[arg(long, hide = true)]
    pub changed_lines: bool,
}

pub fn run(ctx: &mut Ctx, cmd: HookCommand) -> Result<Exit, Error> {
    let HookCommand::Install(args) = cmd;
    let (repo, out) = ctx.parts()?;
    let request = HookRequest {
        force: args.force,
        // The binary running now is the hook's fallback when git-astedit is not on PATH.
        fallback: std::env::current_exe().ok(),
        all: args.all,
    };
    out.emit(&git_astedit::ops::hook::run(repo, &request)?)?;
    Ok(Exit::Ok)
}
