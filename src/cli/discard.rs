//! `git astedit discard`: drops a pending preview, recording why in the journal.

use git_astedit::error::Exit;
use git_astedit::ops::apply::DiscardRequest;
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
    let repo = ctx.repo()?;
    let request = DiscardRequest {
        id: args.id,
        reason: args.reason,
        agent: None,
    };
    let discarded = git_astedit::ops::apply::discard(repo, &request)?;
    if ctx.json {
        ctx.out.json(&discarded.report)?;
    } else {
        ctx.out.print(&format!(
            "Discarded {}: {}\n",
            discarded.report.id,
            git_astedit::render::escape_line(&discarded.summary)
        ))?;
    }
    Ok(Exit::Ok)
}
