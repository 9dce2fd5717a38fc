//! `git astedit merge`: previews with disjoint paths combined into one (sharded CI).

use git_astedit::error::Exit;
use git_astedit::ops::merge::MergeRequest;
use git_astedit::Error;

use super::Ctx;

/// Combine previews with disjoint paths into one new preview
///
/// The usual source is sharded CI: each job runs `git astedit scan --stage --shard I/N`
/// and pushes `refs/astedit/*`; one job fetches them all and merges. The merged
/// previews are discarded (recorded in the journal) unless --keep. Paths touched by
/// more than one preview are an error that names them.
#[derive(Debug, clap::Args)]
pub struct MergeArgs {
    /// Preview ids or unique prefixes (at least two)
    #[arg(value_name = "ID", required = true, num_args = 2..)]
    pub ids: Vec<String>,

    /// Why (recorded in the merged preview and the journal)
    #[arg(long, value_name = "TEXT")]
    pub reason: Option<String>,

    /// Keep the merged previews pending instead of discarding them
    #[arg(long)]
    pub keep: bool,

    /// Render at most N diff lines (0: no limit); the rest is summarized
    #[arg(long, value_name = "N", default_value_t = 2000)]
    pub max_render: usize,
}

pub fn run(ctx: &mut Ctx, args: MergeArgs) -> Result<Exit, Error> {
    let (repo, out) = ctx.parts()?;
    let request = MergeRequest {
        ids: args.ids,
        reason: args.reason,
        keep: args.keep,
        max_render: args.max_render,
    };
    out.emit(&git_astedit::ops::merge::run(repo, &request)?)?;
    Ok(Exit::Ok)
}
