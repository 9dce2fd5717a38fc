//! `git astedit discard`: drops a pending preview, recording why in the journal.

use git_astedit::error::Exit;
use git_astedit::ops::discard::DiscardRequest;
use git_astedit::Error;

use super::Ctx;

#[derive(Debug, clap::Args)]
pub struct DiscardArgs {
    /// The preview to drop (a unique id prefix); the newest pending one when omitted
    pub id: Option<String>,
    /// Why it is dropped, recorded in the journal
    #[arg(long)]
    pub reason: Option<String>,
}

pub fn run(ctx: &mut Ctx, args: DiscardArgs) -> Result<Exit, Error> {
    let (repo, out) = ctx.parts()?;
    let request = DiscardRequest {
        id: args.id,
        reason: args.reason,
        agent: git_astedit::ops::agent_hook::shell_session(),
    };
    let report = git_astedit::ops::discard::run(repo, &request)?;
    out.emit(&report)?;
    Ok(report.exit())
}
