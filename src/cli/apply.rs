//! `git astedit apply`.

use git_astedit::error::Exit;
use git_astedit::error::UsageError;
use git_astedit::Error;

use super::Ctx;

#[derive(Debug, clap::Args)]
pub struct ApplyArgs {}

pub fn run(_ctx: &mut Ctx, _args: ApplyArgs) -> Result<Exit, Error> {
    Err(UsageError("`apply` is not implemented yet".into()).into())
}
