//! `git astedit edit`.

use git_astedit::error::Exit;
use git_astedit::error::UsageError;
use git_astedit::Error;

use super::Ctx;

#[derive(Debug, clap::Args)]
pub struct EditArgs {}

pub fn run(_ctx: &mut Ctx, _args: EditArgs) -> Result<Exit, Error> {
    Err(UsageError("`edit` is not implemented yet".into()).into())
}
