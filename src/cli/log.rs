//! `git astedit log`: the journal, newest first.

use std::io::Write;

use git_astedit::error::Exit;
use git_astedit::Error;

use super::Ctx;

#[derive(Debug, clap::Args)]
pub struct LogArgs {
    /// Only events of this transaction (a unique id prefix)
    pub id: Option<String>,
    /// Show at most N events
    #[arg(short = 'n', long = "max-count", value_name = "N")]
    pub max_count: Option<usize>,
}

pub fn run(ctx: &mut Ctx, args: LogArgs) -> Result<Exit, Error> {
    let repo = ctx.repo()?;
    let prefix = args.id.as_deref().map(str::to_ascii_lowercase);
    let events: Vec<_> = git_astedit::txn::log(repo)?
        .into_iter()
        .filter(|e| prefix.as_deref().is_none_or(|p| e.id.starts_with(p)))
        .take(args.max_count.unwrap_or(usize::MAX))
        .collect();
    if ctx.json {
        let value = serde_json::json!({ "events": events });
        let _ = writeln!(ctx.out.stdout(), "{value}");
        return Ok(Exit::Ok);
    }
    let out = ctx.out.stdout();
    for e in &events {
        let time = gix::date::Time::new(e.time, 0)
            .format(gix::date::time::format::ISO8601)
            .unwrap_or_else(|_| e.time.to_string());
        let mut line = format!("{time}  {:<10} {}  {}", e.event, e.id, e.who);
        if let Some(a) = &e.action {
            let op = e.op.map(|o| o.as_str()).unwrap_or("");
            line.push_str(&format!("  {op} {a}"));
        }
        line.push_str(&format!(
            "  ({} file{})",
            e.files.len(),
            if e.files.len() == 1 { "" } else { "s" }
        ));
        if let Some(r) = &e.reason {
            line.push_str(&format!("  reason: {}", r.lines().next().unwrap_or("")));
        }
        if let Some(a) = &e.agent {
            line.push_str(&format!("  agent: {a}"));
        }
        for note in &e.notes {
            line.push_str(&format!("\n    note: {note}"));
        }
        let _ = writeln!(out, "{line}");
    }
    Ok(Exit::Ok)
}
