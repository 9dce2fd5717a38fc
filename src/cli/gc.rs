//! `git astedit gc`: prunes old previews and journal entries.

use git_astedit::error::Exit;
use git_astedit::ops::gc::GcRequest;
use git_astedit::Error;

use super::Ctx;

#[derive(Debug, clap::Args)]
pub struct GcArgs {
    /// Prune what is older than AGE: e.g. 30d, 12h, 45m, 2w, or now
    #[arg(long, value_name = "AGE", default_value = "30d")]
    pub expire: String,
}

pub fn run(ctx: &mut Ctx, args: GcArgs) -> Result<Exit, Error> {
    // A bad age is refused before the repository is opened (and recovered).
    let mut request = GcRequest::parse(&args.expire)?;
    request.cache = ctx.cache.clone();
    let (repo, out) = ctx.parts()?;
    let report = git_astedit::ops::gc::run(repo, &request)?;
    out.emit(&report)?;
    Ok(report.exit())
}
