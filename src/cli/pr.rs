//! `git astedit pr`.

use git_astedit::error::Exit;
use git_astedit::error::UsageError;
use git_astedit::Error;

use super::Ctx;

#[derive(Debug, clap::Args)]
pub struct PrArgs {}

pub fn run(_ctx: &mut Ctx, _args: PrArgs) -> Result<Exit, Error> {
    Err(UsageError("`pr` is not implemented yet".into()).into())
}
