//! `git astedit discard`: drops a pending preview, recording why in the journal.

use git_astedit::error::Exit;
use git_astedit::report::Action;
use git_astedit::report::PreviewState;
use git_astedit::report::ResolveReport;
use git_astedit::report::Version;
use git_astedit::Error;

use super::Ctx;

#[derive(Debug, clap::Args)]
pub struct DiscardArgs {
    /// The preview to drop (a unique id prefix); the newest pending one when omitted
    pub id: Option<String>,
    /// Why it is dropped, recorded in the journal
    #[arg(long)]
    pub reason: Option<String>,
}

pub fn run(ctx: &mut Ctx, args: DiscardArgs) -> Result<Exit, Error> {
    let repo = ctx.repo()?;
    let preview = git_astedit::txn::discard(repo, args.id.as_deref(), args.reason.as_deref())?;
    if ctx.json {
        let files: Vec<String> = preview.entries.iter().map(|e| e.path.clone()).collect();
        ctx.out.json(&ResolveReport {
            schema_version: Version,
            id: preview.id.clone(),
            action: Action::Discarded,
            state: PreviewState::Discarded,
            written: Vec::new(),
            deleted: Vec::new(),
            file_count: files.len(),
            files,
            index: false,
            commit: None,
            reason: args.reason,
            index_restored: false,
            index_left: Vec::new(),
            commit_kept: None,
            split: None,
            refreshed: None,
        })?;
    } else {
        ctx.out.print(&format!(
            "Discarded {}: {}\n",
            preview.id,
            git_astedit::render::escape_line(&preview.meta.summary)
        ))?;
    }
    Ok(Exit::Ok)
}
