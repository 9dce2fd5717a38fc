//! `git astedit mcp`.

use git_astedit::error::Exit;
use git_astedit::error::UsageError;
use git_astedit::Error;

use super::Ctx;

#[derive(Debug, clap::Args)]
pub struct McpArgs {}

pub fn run(_ctx: &mut Ctx, _args: McpArgs) -> Result<Exit, Error> {
    Err(UsageError("`mcp` is not implemented yet".into()).into())
}
