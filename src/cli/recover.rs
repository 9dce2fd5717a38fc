//! `git astedit recover [--status | --finish | --abandon]`: an apply or undo that was
//! interrupted and could not be finished safely (a path edited after the crash, a
//! folder turned into a symlink) waits here for the user.

use git_astedit::error::Exit;
use git_astedit::ops::recover::RecoverRequest;
use git_astedit::Error;

use super::Ctx;

/// Show, finish or abandon an interrupted apply or undo
///
/// Every command first finishes (past its point of no return) or rolls back an
/// interrupted apply or undo. A path it cannot finish safely — one that holds neither
/// the before nor the after content (edited after the crash), or whose folder is now a
/// symlink — is left alone and the run stays unfinished until resolved here; meanwhile
/// commands that write refuse (exit 6) and the others warn.
#[derive(Debug, clap::Args)]
#[command(group(clap::ArgGroup::new("what").args(["status", "finish", "abandon"])))]
pub struct RecoverArgs {
    /// Show the interrupted run and where each of its paths stands (the default)
    #[arg(long)]
    pub status: bool,
    /// Finish what can be finished; paths holding neither side stay as they are
    #[arg(long)]
    pub finish: bool,
    /// Put back what can be put back safely, keep the rest as it is, drop the run
    #[arg(long)]
    pub abandon: bool,
}

pub fn run(ctx: &mut Ctx, args: RecoverArgs) -> Result<Exit, Error> {
    let (repo, out) = ctx.parts()?;
    let request = if args.finish {
        RecoverRequest::Finish
    } else if args.abandon {
        RecoverRequest::Abandon
    } else {
        RecoverRequest::Status
    };
    let report = git_astedit::ops::recover::run(repo, &request)?;
    out.emit(&report)?;
    Ok(report.exit())
}

/// What each command does while an interrupted run is unfinished (see the user guide's
/// Reliability chapter): commands that write (the work tree, previews, the journal)
/// refuse, read-only ones warn, `recover` itself looks without rolling anything. Which
/// command is which is its [`traits`](super::super::traits) entry.
pub(super) mod recover_policy {
    use git_astedit::repo::Repo;
    use git_astedit::Error;

    use super::super::traits::Policy;
    use super::super::Out;

    /// Recovers first (unless `Skip`), says what it did, and refuses under `Refuse`
    /// while the run stays unfinished.
    pub fn run(policy: Policy, repo: &Repo, out: &mut Out) -> Result<(), Error> {
        if policy == Policy::Skip {
            return Ok(());
        }
        let prelude = git_astedit::ops::session::prelude(repo);
        for line in &prelude.warnings {
            out.warn(line);
        }
        prelude.check(policy == Policy::Refuse)
    }
}
