//! `git astedit undo`: restores what an apply replaced; the preview is pending again.

use git_astedit::error::Exit;
use git_astedit::ops::undo::UndoRequest;
use git_astedit::Error;

use super::Ctx;

#[derive(Debug, clap::Args)]
pub struct UndoArgs {
    /// The applied transaction to undo (a unique id prefix); the newest applied, not yet
    /// undone, when omitted
    pub id: Option<String>,
    /// Why it is undone, recorded in the journal
    #[arg(long)]
    pub reason: Option<String>,
    /// Also restore the index entries of the touched paths (after `apply --index` or
    /// `--commit`); without it the index keeps the applied content
    #[arg(long)]
    pub index: bool,
}

pub fn run(ctx: &mut Ctx, args: UndoArgs) -> Result<Exit, Error> {
    let (repo, out) = ctx.parts()?;
    let request = UndoRequest {
        id: args.id,
        reason: args.reason,
        agent: git_astedit::ops::agent_hook::shell_session(),
        index: args.index,
    };
    let report = git_astedit::ops::undo::run(repo, &request)?;
    out.emit(&report)?;
    Ok(report.exit())
}
