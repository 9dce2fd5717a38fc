//! `git astedit hook`.

use git_astedit::error::Exit;
use git_astedit::error::UsageError;
use git_astedit::Error;

use super::Ctx;

#[derive(Debug, clap::Subcommand)]
pub enum HookCommand {
    /// Write .git/hooks/pre-commit running `git astedit scan --check --cached`
    Install,
}

pub fn run(_ctx: &mut Ctx, _cmd: HookCommand) -> Result<Exit, Error> {
    Err(UsageError("`hook` is not implemented yet".into()).into())
}
