//! `git astedit log`: the journal, newest first.

use git_astedit::error::Exit;
use git_astedit::render;
use git_astedit::report::EventRow;
use git_astedit::report::LogReport;
use git_astedit::report::Version;
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
    let json = ctx.json;
    let (repo, out) = ctx.parts()?;
    let prefix = args.id.as_deref().map(str::to_ascii_lowercase);
    let all = git_astedit::txn::log(repo)?;
    // With an id, the whole line of one change: the previews it was split from and
    // the parts it was split into.
    let related = prefix
        .as_deref()
        .map(|p| git_astedit::txn::lineage(&all, p));
    let events: Vec<_> = all
        .into_iter()
        .filter(|e| related.as_ref().is_none_or(|ids| ids.contains(&e.id)))
        .take(args.max_count.unwrap_or(usize::MAX))
        .collect();
    if json {
        out.json(&LogReport {
            schema_version: Version,
            events: events.iter().map(EventRow::of).collect(),
        })?;
        return Ok(Exit::Ok);
    }
    for e in &events {
        let e_notes = e.notes.clone();
        let e = EventRow::of(e);
        // One event, one line: text fields are escaped (a client name or reason with a
        // newline must not forge a line).
        let mut line = format!(
            "{}  {:<10} {}  {}",
            e.time,
            e.event,
            e.id,
            render::escape_line(&e.who)
        );
        if let Some(a) = &e.action {
            let op = e.op.as_deref().unwrap_or("");
            line.push_str(&format!("  {op} {a}"));
        }
        line.push_str(&format!("  ({})", render::plural(e.file_count, "file")));
        if let [part, rest] = e.children.as_slice() {
            line.push_str(&format!("  into: {part} (selected) + {rest} (remainder)"));
        }
        if let Some(next) = &e.successor {
            line.push_str(&format!("  successor: {next}"));
        }
        if let Some(r) = &e.reason {
            line.push_str(&format!(
                "  reason: {}",
                render::escape_line(r.lines().next().unwrap_or(""))
            ));
        }
        if let Some(a) = &e.agent {
            line.push_str(&format!("  agent: {}", render::escape_line(a)));
        }
        for note in &e_notes {
            line.push_str(&format!("\n    note: {}", render::escape_line(note)));
        }
        line.push('\n');
        out.print(&line)?;
    }
    Ok(Exit::Ok)
}
