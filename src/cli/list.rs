//! `git astedit list`: pending previews, newest first.

use std::io::Write;

use git_astedit::error::Exit;
use git_astedit::render;
use git_astedit::txn;
use git_astedit::Error;

use super::show::preview_json;
use super::Ctx;

/// List pending previews, newest first.
#[derive(Debug, clap::Args)]
pub struct ListArgs {}

pub fn run(ctx: &mut Ctx, _args: ListArgs) -> Result<Exit, Error> {
    let json = ctx.json;
    let (repo, out) = ctx.parts()?;
    let previews = txn::list(repo)?;
    if json {
        let rows: Vec<serde_json::Value> = previews.iter().map(preview_json).collect();
        let _ = writeln!(out.stdout(), "{}", serde_json::json!({ "previews": rows }));
        return Ok(Exit::Ok);
    }
    let mut text = String::new();
    for p in &previews {
        text.push_str(&format!(
            "{}  {}  {:<5}  {}",
            p.id,
            render::format_time(p.time),
            p.meta.kind,
            p.meta.summary
        ));
        if let Some(reason) = &p.meta.reason {
            text.push_str(&format!("  ({reason})"));
        }
        text.push('\n');
    }
    let _ = out.stdout().write_all(text.as_bytes());
    Ok(Exit::Ok)
}
