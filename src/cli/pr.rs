//! `git astedit pr`: a pull request from an applied (or pending) transaction (the work
//! is [`git_astedit::ops::pr`]'s).

use git_astedit::error::Exit;
use git_astedit::ops::pr::PrRequest;
use git_astedit::Error;

use super::Ctx;

/// Open a pull request from a transaction with the GitHub CLI (`gh`).
///
/// Pushes a branch `astedit/<id>` holding exactly the transaction's changes on top
/// of the commit it was staged on, then runs `gh pr create` (a draft unless
/// --ready). The body holds the reason, the ops or patch digest, per-file counts,
/// the journal lines and a machine-readable `<!-- astedit:… -->` marker. Running it
/// again reports the existing pull request. Without ID: the newest applied
/// transaction, else the newest pending preview.
#[derive(Debug, clap::Args)]
pub struct PrArgs {
    /// Transaction id or unique prefix (applied or pending)
    pub id: Option<String>,

    /// The remote to push the branch to
    #[arg(long, value_name = "NAME", default_value = "origin")]
    pub remote: String,

    /// The branch the pull request merges into (default: the repository's default)
    #[arg(long, value_name = "BRANCH")]
    pub base: Option<String>,

    /// The pull request's title (default: the reason, else the summary)
    #[arg(long, value_name = "TEXT")]
    pub title: Option<String>,

    /// Open it ready for review instead of as a draft
    #[arg(long)]
    pub ready: bool,
}

pub fn run(ctx: &mut Ctx, args: PrArgs) -> Result<Exit, Error> {
    let (repo, out) = ctx.parts()?;
    let request = PrRequest {
        id: args.id,
        remote: args.remote,
        base: args.base,
        title: args.title,
        ready: args.ready,
        agent: git_astedit::ops::agent_hook::shell_session(),
        branch: None,
    };
    let report = git_astedit::ops::pr::run(repo, &request)?;
    out.emit(&report)?;
    Ok(report.exit())
}
