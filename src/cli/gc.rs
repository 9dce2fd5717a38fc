//! `git astedit gc`.

use git_astedit::error::Exit;
use git_astedit::error::UsageError;
use git_astedit::Error;

use super::Ctx;

#[derive(Debug, clap::Args)]
pub struct GcArgs {}

pub fn run(_ctx: &mut Ctx, _args: GcArgs) -> Result<Exit, Error> {
    Err(UsageError("`gc` is not implemented yet".into()).into())
}
