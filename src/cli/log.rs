//! `git astedit log`: the journal, newest first.

use git_astedit::error::Exit;
use git_astedit::render;
use git_astedit::report::EventRow;
use git_astedit::report::LogReport;
use git_astedit::report::Version;
use git_astedit::Error;

use super::Ctx;

/// Events shown when `-n` is not given: enough to see what happened lately, and a
/// page that costs the same however long the journal is.
pub const DEFAULT_MAX_COUNT: usize = 200;

#[derive(Debug, clap::Args)]
pub struct LogArgs {
    /// Only events of this transaction (a unique id prefix)
    pub id: Option<String>,
    /// Show at most N events (0: no limit)
    #[arg(short = 'n', long = "max-count", value_name = "N", default_value_t = DEFAULT_MAX_COUNT)]
    pub max_count: usize,
}

pub fn run(ctx: &mut Ctx, args: LogArgs) -> Result<Exit, Error> {
    let json = ctx.json;
    let (repo, out) = ctx.parts()?;
    let prefix = args.id.as_deref().map(str::to_ascii_lowercase);
    let cap = match args.max_count {
        0 => usize::MAX,
        n => n,
    };
    let (events, capped) = match prefix.as_deref() {
        // The newest page only: read from the journal's end, never past the page.
        None => git_astedit::txn::newest(repo, cap)?,
        // With an id, the whole line of one change: the previews it was split from and
        // the parts it was split into, wherever in the journal their events are.
        Some(p) => {
            let all = git_astedit::txn::log(repo)?;
            let related = git_astedit::txn::lineage(&all, p);
            let mut events: Vec<_> = all
                .into_iter()
                .filter(|e| related.contains(&e.id))
                .collect();
            let capped = events.len() > cap;
            events.truncate(cap);
            (events, capped)
        }
    };
    if json {
        out.json(&LogReport {
            schema_version: Version,
            events: events.iter().map(EventRow::of).collect(),
            capped,
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
    if capped {
        out.print(&format!(
            "… older events not shown (--max-count {}); `git astedit log -n 0` shows them all\n",
            args.max_count
        ))?;
    }
    Ok(Exit::Ok)
}
