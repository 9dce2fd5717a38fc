//! `git astedit lane`: one linked worktree per agent (see `ops::lane`).

use git_astedit::error::Exit;
use git_astedit::ops::apply::VerifyPlan;
use git_astedit::ops::lane;
use git_astedit::Error;

use super::Ctx;

/// One work tree per agent: start, list, drop and merge lanes
///
/// A lane is a linked worktree at HEAD, under the git dir, for one agent: the harness
/// runs the agent there, its hook journals there, and no lane waits for another. `lane
/// merge` brings lanes back into this work tree as one preview, merged by syntax node.
#[derive(Debug, clap::Subcommand)]
pub enum LaneCommand {
    /// Make a lane at HEAD and print its path (run the agent there)
    ///
    /// The lane is `<git common dir>/astedit/lanes/NAME`, a linked worktree on a
    /// detached HEAD; `refs/astedit-lanes/NAME` keeps its base.
    Start(NameArgs),
    /// List the lanes, what each changed and what of it is not merged here
    List,
    /// Remove a lane (refused while it holds changes not merged here, unless --force)
    Drop(DropArgs),
    /// Merge lanes into one preview staged on this work tree, by syntax node
    ///
    /// Each lane's changes since its base are merged into this work tree, in the order
    /// given: by top-level declaration and class/impl member (kind and name) in Rust,
    /// Python, TypeScript/JavaScript and Go, by line elsewhere. The same declaration
    /// changed on both sides is a conflict (exit 3, code lane-conflict) that names it,
    /// and nothing is staged.
    Merge(MergeArgs),
}

#[derive(Debug, clap::Args)]
pub struct MergeArgs {
    /// The lanes, merged in this order
    #[arg(value_name = "NAME", required = true)]
    pub names: Vec<String>,

    /// Why (recorded in the preview)
    #[arg(long, value_name = "TEXT")]
    pub reason: Option<String>,

    /// Then run CMD (a shell command line) in a worktree holding the merged preview
    /// (see `verify`); exit 1 when it fails (the preview stays staged)
    #[arg(long, value_name = "CMD")]
    pub verify: Option<String>,

    /// With --verify: kill CMD (and what it started) after SECS seconds
    #[arg(long, value_name = "SECS", default_value_t = 600, requires = "verify")]
    pub verify_timeout: u64,

    /// Render at most N diff lines (0: no limit); the rest is summarized
    #[arg(long, value_name = "N", default_value_t = 2000)]
    pub max_render: usize,
}

#[derive(Debug, clap::Args)]
pub struct NameArgs {
    /// The lane's name: letters, digits, '.', '_', '-'
    #[arg(value_name = "NAME")]
    pub name: String,
}

#[derive(Debug, clap::Args)]
pub struct DropArgs {
    /// The lane's name
    #[arg(value_name = "NAME")]
    pub name: String,

    /// Drop it even when its changes are not merged here (they are lost; the report
    /// names them)
    #[arg(long)]
    pub force: bool,
}

pub fn run(ctx: &mut Ctx, cmd: LaneCommand) -> Result<Exit, Error> {
    let (repo, out) = ctx.parts()?;
    let report = match cmd {
        LaneCommand::Start(a) => lane::start(repo, &a.name)?,
        LaneCommand::List => lane::list(repo)?,
        LaneCommand::Drop(a) => lane::drop(repo, &a.name, a.force)?,
        LaneCommand::Merge(a) => {
            let request = lane::MergeRequest {
                names: a.names,
                reason: a.reason,
                verify: a
                    .verify
                    .map(|line| VerifyPlan::shell(line, a.verify_timeout)),
                max_render: a.max_render,
            };
            let report = lane::merge(repo, &request)?;
            out.emit(&report)?;
            return Ok(report.exit());
        }
    };
    out.emit(&report)?;
    Ok(Exit::Ok)
}
