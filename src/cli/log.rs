//! `git astedit log`: the journal, newest first.

use git_astedit::error::Exit;
use git_astedit::ops::log::LogRequest;
use git_astedit::ops::log::DEFAULT_MAX_COUNT;
use git_astedit::Error;

use super::Ctx;

#[derive(Debug, clap::Args)]
pub struct LogArgs {
    /// Only events of this transaction (a unique id prefix)
    pub id: Option<String>,
    /// Show at most N events (0: no limit)
    #[arg(short = 'n', long = "max-count", value_name = "N", default_value_t = DEFAULT_MAX_COUNT)]
    pub max_count: usize,
}

pub fn run(ctx: &mut Ctx, args: LogArgs) -> Result<Exit, Error> {
    let (repo, out) = ctx.parts()?;
    let request = LogRequest {
        id: args.id,
        max_count: args.max_count,
    };
    out.emit(&git_astedit::ops::log::run(repo, &request)?)?;
    Ok(Exit::Ok)
}
