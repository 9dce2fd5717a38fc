//! `git astedit grep`.

use git_astedit::error::Exit;
use git_astedit::error::UsageError;
use git_astedit::Error;

use super::Ctx;

#[derive(Debug, clap::Args)]
pub struct GrepArgs {}

pub fn run(_ctx: &mut Ctx, _args: GrepArgs) -> Result<Exit, Error> {
    Err(UsageError("`grep` is not implemented yet".into()).into())
}
