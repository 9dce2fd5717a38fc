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
    /// Undo everything this agent's session applied that is still applied, newest
    /// first (its spelling after `agent:` in `git astedit log`, or a unique prefix);
    /// refused, nothing undone, where another session's later edit sits on top
    #[arg(long, value_name = "SESSION", conflicts_with = "id")]
    pub session: Option<String>,
}

pub fn run(ctx: &mut Ctx, args: UndoArgs) -> Result<Exit, Error> {
    let (repo, out) = ctx.parts()?;
    if let Some(session) = args.session {
        let request = git_astedit::ops::undo::SessionUndoRequest {
            session,
            reason: args.reason,
            agent: git_astedit::ops::agent_hook::shell_session(),
            index: args.index,
        };
        let report = git_astedit::ops::undo::run_session(repo, &request)?;
        out.emit(&report)?;
        return Ok(report.exit());
    }
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
