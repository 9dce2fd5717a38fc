//! `git astedit list`: pending previews, newest first.

use git_astedit::error::Exit;
use git_astedit::render;
use git_astedit::report::ListReport;
use git_astedit::report::PreviewRow;
use git_astedit::report::UnreadableRef;
use git_astedit::report::Version;
use git_astedit::txn;
use git_astedit::Error;

use super::Ctx;

/// List pending previews, newest first.
#[derive(Debug, clap::Args)]
pub struct ListArgs {}

pub fn run(ctx: &mut Ctx, _args: ListArgs) -> Result<Exit, Error> {
    let json = ctx.json;
    let (repo, out) = ctx.parts()?;
    let (previews, bad) = txn::list_checked(repo)?;
    let warnings: Vec<String> = bad.iter().map(txn::BadRef::describe).collect();
    if json {
        out.json(&ListReport {
            schema_version: Version,
            previews: previews.iter().map(PreviewRow::of).collect(),
            unreadable_refs: bad
                .iter()
                .map(|b| UnreadableRef {
                    name: b.name.clone(),
                    why: b.why.clone(),
                })
                .collect(),
            warnings,
        })?;
        return Ok(Exit::Ok);
    }
    for w in &warnings {
        out.warn(w);
    }
    let mut text = String::new();
    for p in &previews {
        text.push_str(&format!(
            "{}  {}  {:<5}  {}",
            p.id,
            render::format_time(p.time),
            p.meta.kind,
            render::escape_line(&p.meta.summary)
        ));
        if let Some(reason) = &p.meta.reason {
            text.push_str(&format!("  ({})", render::escape_line(reason)));
        }
        text.push('\n');
    }
    out.print(&text)?;
    Ok(Exit::Ok)
}
