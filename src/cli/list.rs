//! `git astedit list`.

use git_astedit::error::Exit;
use git_astedit::error::UsageError;
use git_astedit::Error;

use super::Ctx;

#[derive(Debug, clap::Args)]
pub struct ListArgs {}

pub fn run(_ctx: &mut Ctx, _args: ListArgs) -> Result<Exit, Error> {
    Err(UsageError("`list` is not implemented yet".into()).into())
}
