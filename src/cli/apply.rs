//! `git astedit apply` (and `resolve apply`): writes a pending preview to the work tree.

use git_astedit::error::Exit;
use git_astedit::report::Action;
use git_astedit::txn::ApplyOptions;
use git_astedit::txn::ApplyReport;
use git_astedit::Error;

use super::Ctx;
use super::OutputError;

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
}

pub fn run(ctx: &mut Ctx, args: ApplyArgs) -> Result<Exit, Error> {
    let repo = ctx.repo()?;
    let opts = ApplyOptions {
        reason: args.reason,
        index: args.index || args.commit,
        commit: args.commit.then_some(args.message),
        agent: None,
    };
    let report = git_astedit::txn::apply(repo, args.id.as_deref(), &opts)?;
    print_report(ctx, Action::Applied, &report, opts.index, opts.reason)?;
    Ok(Exit::Ok)
}

/// Prints an apply or undo report: one JSON object, or a summary line per fact.
pub(super) fn print_report(
    ctx: &mut Ctx,
    action: Action,
    report: &ApplyReport,
    index: bool,
    reason: Option<String>,
) -> Result<(), OutputError> {
    if ctx.json {
        let mut files: Vec<String> = report
            .written
            .iter()
            .chain(&report.deleted)
            .cloned()
            .collect();
        files.sort();
        let value = super::common::resolve_report(report, action, files, index, reason);
        return ctx.out.json(&value);
    }
    let mut text = match action {
        Action::Undone => format!(
            "Undid {}: {} written, {} deleted. The preview is pending again; it is applied \
             again only by its id.\n",
            report.id,
            count(report.written.len()),
            count(report.deleted.len())
        ),
        _ => format!(
            "Applied {}: {} written, {} deleted.\n",
            report.id,
            count(report.written.len()),
            count(report.deleted.len())
        ),
    };
    if let Some(c) = &report.commit {
        text.push_str(&format!("Committed {c}.\n"));
    }
    ctx.out.print(&text)
}
fn count(n: usize) -> String {
    format!("{n} file{}", if n == 1 { "" } else { "s" })
}
