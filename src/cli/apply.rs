//! `git astedit apply` (and `resolve apply`): writes a pending preview to the work tree.

use git_astedit::error::Exit;
use git_astedit::ops::apply::ApplyOptions;
use git_astedit::ops::apply::ApplyRequest;
use git_astedit::ops::apply::VerifyPlan;
use git_astedit::Error;

use super::Ctx;

#[derive(Debug, clap::Args)]
pub struct ApplyArgs {
    /// The preview to apply (a unique id prefix); the newest pending one when omitted
    pub id: Option<String>,
    /// Why it is applied, recorded in the journal (and in --commit's trailers)
    #[arg(long)]
    pub reason: Option<String>,
    /// Also update the index entries of the touched paths
    #[arg(long)]
    pub index: bool,
    /// Make a commit on HEAD holding exactly the preview's changes, with audit trailers
    #[arg(long)]
    pub commit: bool,
    /// The commit message's subject for --commit
    #[arg(short = 'm', long = "message", value_name = "MSG", requires = "commit")]
    pub message: Option<String>,
    /// When the preview is stale, refresh it and apply the refreshed preview, only if
    /// it makes the same number of changes in the same files (else exit 3, the
    /// refreshed preview staged for review)
    #[arg(long, conflicts_with = "pathspecs")]
    pub refresh: bool,
    /// First run CMD (a shell command line) in a worktree holding the preview's base
    /// commit and its changes; apply only if it exits 0 (see `verify`)
    #[arg(long, value_name = "CMD", conflicts_with_all = ["refresh", "pathspecs"])]
    pub verify: Option<String>,
    /// With --verify: kill CMD (and what it started) after SECS seconds
    #[arg(long, value_name = "SECS", default_value_t = 600, requires = "verify")]
    pub verify_timeout: u64,
    /// Apply the whole preview as staged, even when it has review decisions (without
    /// it, a reviewed preview's accepted sites are applied, its rejected ones dropped
    /// and its undecided ones left pending)
    #[arg(long)]
    pub all: bool,
    /// Apply only the part of the preview under these git pathspecs (relative to the
    /// current folder); the rest stays pending as a new preview
    #[arg(last = true, value_name = "PATHSPEC")]
    pub pathspecs: Vec<String>,
}

pub fn run(ctx: &mut Ctx, args: ApplyArgs) -> Result<Exit, Error> {
    let (repo, out) = ctx.parts()?;
    let request = ApplyRequest::new(
        args.id,
        args.refresh,
        args.pathspecs,
        ApplyOptions {
            reason: args.reason,
            index: args.index || args.commit,
            commit: args.commit.then_some(args.message),
            agent: git_astedit::ops::agent_hook::shell_session(),
            allow_run: true,
        },
        args.verify
            .map(|line| VerifyPlan::shell(line, args.verify_timeout)),
    )?
    .all(args.all);
    let report = git_astedit::ops::review::apply::run(
        repo,
        &request,
        &git_astedit::cancel::Cancel::never(),
    )?;
    out.emit(&report)?;
    Ok(report.exit())
}
