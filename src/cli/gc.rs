//! `git astedit gc`: prunes old previews and journal entries.

use std::io::Write;

use git_astedit::error::Exit;
use git_astedit::Error;

use super::Ctx;

#[derive(Debug, clap::Args)]
pub struct GcArgs {
    /// Prune what is older than AGE: e.g. 30d, 12h, 45m, 2w, or now
    #[arg(long, value_name = "AGE", default_value = "30d")]
    pub expire: String,
}

pub fn run(ctx: &mut Ctx, args: GcArgs) -> Result<Exit, Error> {
    let expire = git_astedit::txn::parse_age(&args.expire)?;
    let repo = ctx.repo()?;
    let report = git_astedit::txn::gc(repo, expire)?;
    if ctx.json {
        let value = serde_json::to_value(&report).unwrap_or_default();
        let _ = writeln!(ctx.out.stdout(), "{value}");
    } else {
        let _ = writeln!(
            ctx.out.stdout(),
            "Expired {} preview{}; pruned {} journal entr{} ({} kept).",
            report.expired_previews.len(),
            if report.expired_previews.len() == 1 {
                ""
            } else {
                "s"
            },
            report.pruned_events,
            if report.pruned_events == 1 {
                "y"
            } else {
                "ies"
            },
            report.kept_events
        );
    }
    Ok(Exit::Ok)
}
