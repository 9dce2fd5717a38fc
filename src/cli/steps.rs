//! `git astedit steps`: run the ordered steps of astedit.toml, each on the previous
//! one's result, and stage what they change as one preview.

use git_astedit::cancel::Cancel;
use git_astedit::error::Exit;
use git_astedit::files;
use git_astedit::ops::steps::StepsRequest;
use git_astedit::Error;

use super::common::StageArgs;
use super::Ctx;

/// Run the [[steps]] of astedit.toml in order and stage their result as one preview
///
/// Each step is a rule set (rules, rule-files, as `scan` reads them) or ops (pattern
/// and rewrite, add-import, as `edit` takes them), run on the tree the steps before it
/// produced, in memory: no work-tree file is touched until the preview is applied. A
/// step may export what it captured (`export = { NEW = "$NEW" }`); a later step that
/// writes `$NEW` runs once per value. `refresh` runs every step again. Exits 1 when
/// nothing would change.
#[derive(Debug, clap::Args)]
pub struct StepsArgs {
    /// Git pathspecs (relative to the current folder); default: the current folder
    #[arg(value_name = "PATHSPEC")]
    pub pathspecs: Vec<String>,

    /// Read the [[steps]] from FILE (default: astedit.toml at the root)
    #[arg(short = 'c', long = "config", value_name = "FILE")]
    pub config: Option<std::path::PathBuf>,

    /// Run only the step named NAME (or numbered, when it has no name); the others are
    /// left out (can be repeated)
    #[arg(long = "step", value_name = "NAME")]
    pub steps: Vec<String>,

    /// Skip files larger than BYTES
    #[arg(long, value_name = "BYTES", default_value_t = files::DEFAULT_MAX_FILE_SIZE)]
    pub max_filesize: u64,

    #[command(flatten)]
    pub stage: StageArgs,
}

pub fn run(ctx: &mut Ctx, args: StepsArgs) -> Result<Exit, Error> {
    files::check_max_file_size(args.max_filesize)?;
    let (repo, out) = ctx.parts()?;
    let request = StepsRequest {
        config: args.config,
        only: args.steps,
        pathspecs: args.pathspecs,
        max_file_size: args.max_filesize,
        staging: args.stage.staging(true, out.color()),
    };
    let report = git_astedit::ops::steps::run(repo, &request, &Cancel::never())?;
    out.emit(&report)?;
    Ok(report.exit())
}
