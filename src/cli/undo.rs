//! `git astedit undo`.

use git_astedit::error::Exit;
use git_astedit::error::UsageError;
use git_astedit::Error;

use super::Ctx;

#[derive(Debug, clap::Args)]
pub struct UndoArgs {}

pub fn run(_ctx: &mut Ctx, _args: UndoArgs) -> Result<Exit, Error> {
    Err(UsageError("`undo` is not implemented yet".into()).into())
}
