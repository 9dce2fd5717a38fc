//! `git astedit list`: pending previews, newest first.

use git_astedit::error::Exit;
use git_astedit::ops::list::ListRequest;
use git_astedit::Error;

use super::Ctx;

/// List pending previews, newest first.
#[derive(Debug, clap::Args)]
pub struct ListArgs {}

pub fn run(ctx: &mut Ctx, _args: ListArgs) -> Result<Exit, Error> {
    let (repo, out) = ctx.parts()?;
    let report = git_astedit::ops::list::run(repo, &ListRequest::default())?;
    out.emit(&report)?;
    Ok(report.exit())
}
