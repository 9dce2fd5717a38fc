//! `git astedit scan`.

use git_astedit::error::Exit;
use git_astedit::error::UsageError;
use git_astedit::Error;

use super::Ctx;

#[derive(Debug, clap::Args)]
pub struct ScanArgs {}

pub fn run(_ctx: &mut Ctx, _args: ScanArgs) -> Result<Exit, Error> {
    Err(UsageError("`scan` is not implemented yet".into()).into())
}
