//! `git astedit refresh`: re-derives a stale pending preview on the current work tree
//! and stages the result as its successor (the engine is `git_astedit::ops::refresh`).

use git_astedit::error::Exit;
use git_astedit::ops::refresh::RefreshRequest;
use git_astedit::Error;

use super::Ctx;

/// Re-derive a pending preview on the current work tree, staged as its successor
///
/// Files that still hold what the preview was computed from keep their blobs; edit
/// previews re-run their ops on changed files, patch previews resolve their patch
/// again, scan and merge previews take a three-way merge. A file edited where the
/// preview changes it refuses the refresh (exit 3, naming the lines). The old preview
/// is then `refreshed` in the journal, naming its successor.
#[derive(Debug, clap::Args)]
pub struct RefreshArgs {
    /// The preview to refresh (a unique id prefix); the newest pending one when omitted
    pub id: Option<String>,
    /// Edit and scan previews: re-run the ops or rules over the whole file set recorded
    /// at staging, so files that match now join the successor
    #[arg(long)]
    pub all: bool,
    /// Sign the successor with git (`git commit-tree -S`), as `git config
    /// astedit.signPreviews true` does for every preview
    #[arg(long)]
    pub sign: bool,
}

pub fn run(ctx: &mut Ctx, args: RefreshArgs) -> Result<Exit, Error> {
    super::common::sign(args.sign);
    let (repo, out) = ctx.parts()?;
    let request = RefreshRequest {
        id: args.id,
        all: args.all,
        agent: git_astedit::ops::agent_hook::shell_session(),
        // The user's own command line: the origin gate still holds.
        allow_run: true,
    };
    let report = git_astedit::ops::refresh::run(repo, &request)?;
    out.emit(&report)?;
    Ok(report.exit())
}
