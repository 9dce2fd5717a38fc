//! `git astedit show`: a preview's diff, stat or JSON.

use git_astedit::error::Exit;
use git_astedit::ops::show::ShowPiece;
use git_astedit::ops::show::ShowRequest;
use git_astedit::ops::show::Streamed;
use git_astedit::render::Format;
use git_astedit::Error;

use super::Ctx;

/// Show a preview's diff (the newest pending one when ID is omitted).
#[derive(Debug, clap::Args)]
pub struct ShowArgs {
    /// Preview id or unique prefix
    pub id: Option<String>,

    /// Show per-file line counts instead of the diff
    #[arg(long)]
    pub stat: bool,

    /// Render at most N diff lines (0: no limit); the rest is summarized
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub max_render: usize,

    /// Show only the files of the preview these git pathspecs select (relative to the
    /// current folder), as `git show ID -- PATHSPEC`
    #[arg(last = true, value_name = "PATHSPEC")]
    pub pathspecs: Vec<String>,
}

pub fn run(ctx: &mut Ctx, args: ShowArgs) -> Result<Exit, Error> {
    let (repo, out) = ctx.parts()?;
    let request = ShowRequest {
        id: args.id,
        stat: args.stat,
        pathspecs: args.pathspecs,
        max_render: args.max_render,
        // Text streams the diff as it is read; JSON holds it in the report.
        stream: (out.format() == Format::Text).then(|| Streamed { color: out.color() }),
    };
    let report = git_astedit::ops::show::run(repo, &request, &mut |piece| match piece {
        ShowPiece::Header(report) => Ok(out.emit(report)?),
        ShowPiece::Diff(chunk) => Ok(out.print(chunk)?),
    })?;
    if !report.streamed {
        out.emit(&report)?;
    }
    Ok(report.exit())
}
