//! `git astedit merge`.

use git_astedit::error::Exit;
use git_astedit::error::UsageError;
use git_astedit::Error;

use super::Ctx;

#[derive(Debug, clap::Args)]
pub struct MergeArgs {}

pub fn run(_ctx: &mut Ctx, _args: MergeArgs) -> Result<Exit, Error> {
    Err(UsageError("`merge` is not implemented yet".into()).into())
}
