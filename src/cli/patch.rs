//! `git astedit patch`.

use git_astedit::error::Exit;
use git_astedit::error::UsageError;
use git_astedit::Error;

use super::Ctx;

#[derive(Debug, clap::Args)]
pub struct PatchArgs {}

pub fn run(_ctx: &mut Ctx, _args: PatchArgs) -> Result<Exit, Error> {
    Err(UsageError("`patch` is not implemented yet".into()).into())
}
