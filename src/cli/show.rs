//! `git astedit show`.

use git_astedit::error::Exit;
use git_astedit::error::UsageError;
use git_astedit::Error;

use super::Ctx;

#[derive(Debug, clap::Args)]
pub struct ShowArgs {}

pub fn run(_ctx: &mut Ctx, _args: ShowArgs) -> Result<Exit, Error> {
    Err(UsageError("`show` is not implemented yet".into()).into())
}
