//! `git astedit log`.

use git_astedit::error::Exit;
use git_astedit::error::UsageError;
use git_astedit::Error;

use super::Ctx;

#[derive(Debug, clap::Args)]
pub struct LogArgs {}

pub fn run(_ctx: &mut Ctx, _args: LogArgs) -> Result<Exit, Error> {
    Err(UsageError("`log` is not implemented yet".into()).into())
}
