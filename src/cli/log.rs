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
    /// Only what this agent's session did: its name as the journal spells it after
    /// `agent:` (`claude-code/session:ID`, an MCP client's `NAME/VERSION`), or a
    /// unique prefix of that or of the ID
    #[arg(long, value_name = "SESSION")]
    pub session: Option<String>,
    /// Show each change's diff, with its files' lines added and removed and the tool
    /// that made it
    #[arg(short = 'p', long = "patch")]
    pub patch: bool,
    /// Without an id or --session: the events of every work tree (the main tree and
    /// the lanes), not only of the one it runs in
    #[arg(long)]
    pub all_worktrees: bool,
}

pub fn run(ctx: &mut Ctx, args: LogArgs) -> Result<Exit, Error> {
    let (repo, out) = ctx.parts()?;
    let request = LogRequest {
        id: args.id,
        session: args.session,
        patch: args.patch,
        all_worktrees: args.all_worktrees,
        max_count: args.max_count,
    };
    out.emit(&git_astedit::ops::log::run(repo, &request)?)?;
    Ok(Exit::Ok)
}
