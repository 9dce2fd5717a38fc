//! `git astedit discard`.

use git_astedit::error::Exit;
use git_astedit::error::UsageError;
use git_astedit::Error;

use super::Ctx;

#[derive(Debug, clap::Args)]
pub struct DiscardArgs {}

pub fn run(_ctx: &mut Ctx, _args: DiscardArgs) -> Result<Exit, Error> {
    Err(UsageError("`discard` is not implemented yet".into()).into())
}
