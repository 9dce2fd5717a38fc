//! `git astedit gc`: prunes old previews and journal entries.

use git_astedit::error::Exit;
use git_astedit::report::GcReport;
use git_astedit::report::Version;
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
        ctx.out.json(&GcReport {
            schema_version: Version,
            expired_previews: report.expired_previews,
            pruned_events: report.pruned_events,
            kept_events: report.kept_events,
            removed_refs: report
                .removed_bad_refs
                .iter()
                .map(|(name, why)| git_astedit::report::UnreadableRef {
                    name: name.clone(),
                    why: why.clone(),
                })
                .collect(),
        })?;
    } else {
        for (name, why) in &report.removed_bad_refs {
            ctx.out.print(&format!(
                "Removed {name}: not a readable preview ({why}).\n"
            ))?;
        }
        ctx.out.print(&format!(
            "Expired {}; pruned {} journal entr{} ({} kept).\n",
            git_astedit::render::plural(report.expired_previews.len(), "preview"),
            report.pruned_events,
            if report.pruned_events == 1 {
                "y"
            } else {
                "ies"
            },
            report.kept_events
        ))?;
    }
    Ok(Exit::Ok)
}
