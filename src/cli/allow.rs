//! `git astedit allow`: consent to the commands a repository's files name.

use git_astedit::error::Exit;
use git_astedit::ops::consent::AllowRequest;
use git_astedit::Error;

use super::Ctx;

/// Allow the commands this repository's files name: [fmt] formatters, custom languages
///
/// Prints each command astedit.toml's [fmt] and sgconfig.yml's customLanguages name,
/// with the files it runs and its digest, then records your consent in this repository
/// (under the git dir: no clone or fetch carries it). A consent is keyed by the digest
/// of the command and of the repository files it names, so a changed command, script or
/// library asks again. Read them first: `git astedit allow --list`.
#[derive(Debug, clap::Args)]
pub struct AllowArgs {
    /// Only these digests (sha256:…, as listed); default: every command named now
    #[arg(value_name = "DIGEST")]
    pub digests: Vec<String>,

    /// Show the commands and whether each is allowed; record nothing
    #[arg(short = 'l', long, conflicts_with = "revoke")]
    pub list: bool,

    /// Withdraw consent (the digests given; none given: every consent of this
    /// repository)
    #[arg(long)]
    pub revoke: bool,
}

pub fn run(ctx: &mut Ctx, args: AllowArgs) -> Result<Exit, Error> {
    let request = AllowRequest {
        digests: args.digests,
        list: args.list,
        revoke: args.revoke,
    };
    let (repo, out) = ctx.parts()?;
    let report = git_astedit::ops::consent::allow(repo, &request)?;
    out.emit(&report)?;
    Ok(Exit::Ok)
}
