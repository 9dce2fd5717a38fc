//! `git astedit discard`: drops a pending preview, recording why in the journal.

use std::io::Write;

use git_astedit::error::Exit;
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
        let value = serde_json::json!({
            "id": preview.id,
            "action": "discarded",
            "commit": preview.commit.to_string(),
            "reason": args.reason,
            "files": preview.entries.iter().map(|e| e.path.as_str()).collect::<Vec<_>>(),
        });
        let _ = writeln!(ctx.out.stdout(), "{value}");
    } else {
        let _ = writeln!(
            ctx.out.stdout(),
            "Discarded {}: {}",
            preview.id,
            preview.meta.summary
        );
    }
    Ok(Exit::Ok)
}
