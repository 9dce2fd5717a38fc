//! `git astedit patch`: resolve a `*** Begin Patch` text against the work tree and
//! stage it as a preview (or apply it with `--apply`).

use std::io::Read;

use git_astedit::cancel::Cancel;
use git_astedit::error::Exit;
use git_astedit::error::InputError;
use git_astedit::error::IoError;
use git_astedit::error::UsageError;
use git_astedit::ops::patch::PatchRequest;
use git_astedit::Error;

use super::common::StageArgs;
use super::Ctx;

/// Stage a `*** Begin Patch` patch as a preview; no work-tree file is touched.
///
/// Every chunk is placed at exactly one place: exact lines first, then ignoring
/// trailing whitespace and typographic punctuation, then bounded rescues of drifted
/// context, which are reported. An ambiguous or unplaceable chunk refuses the whole
/// patch (exit 5); paths outside the tree, under .git/ or through symlinks, and
/// overwrites by Add or Move are refused (exit 4). Paths are relative to the current
/// folder.
#[derive(Debug, clap::Args)]
pub struct PatchArgs {
    /// The patch file; `-` or nothing reads standard input
    #[arg(value_name = "FILE")]
    pub file: Option<String>,

    #[command(flatten)]
    pub stage: StageArgs,
}

fn read_patch(file: Option<&str>) -> Result<String, Error> {
    let mut bytes = Vec::new();
    match file {
        None | Some("-") => std::io::stdin()
            .read_to_end(&mut bytes)
            .map(|_| ())
            .map_err(|e| IoError {
                action: "read",
                path: "standard input".into(),
                source: e,
            })?,
        Some(path) => {
            bytes = std::fs::read(path).map_err(|e| InputError {
                action: "read",
                path: path.to_string(),
                source: e,
            })?
        }
    }
    String::from_utf8(bytes).map_err(|_| UsageError("the patch text is not UTF-8".into()).into())
}

pub fn run(ctx: &mut Ctx, args: PatchArgs) -> Result<Exit, Error> {
    let text = read_patch(args.file.as_deref())?;
    let (repo, out) = ctx.parts()?;
    let request = PatchRequest {
        text,
        base: repo.prefix.clone().unwrap_or_default(),
        staging: args.stage.staging(true, out.color()),
    };
    let report = git_astedit::ops::patch::run(repo, &request, &Cancel::never())?;
    out.emit(&report)?;
    Ok(report.exit())
}
