//! `log` as text: one event a line, newest first.

use super::Printed;
use super::Style;
use super::TextReport;
use crate::report::LogReport;
use crate::text::escape_line;
use crate::text::plural;

impl TextReport for LogReport {
    fn text(&self, _style: &Style) -> Printed {
        let mut printed = Printed::new();
        for e in &self.events {
            // One event, one line: text fields are escaped (a client name or reason with
            // a newline must not forge a line).
            let mut line = format!(
                "{}  {:<10} {}  {}",
                e.time,
                e.event,
                e.id,
                escape_line(&e.who)
            );
            if let Some(a) = &e.action {
                let op = e.op.map(|o| o.as_str()).unwrap_or("");
                line.push_str(&format!("  {op} {a}"));
            }
            line.push_str(&format!("  ({})", plural(e.file_count, "file")));
            if let [part, rest] = e.children.as_slice() {
                line.push_str(&format!("  into: {part} (selected) + {rest} (remainder)"));
            }
            if let Some(next) = &e.successor {
                line.push_str(&format!("  successor: {next}"));
            }
            if let Some(r) = &e.reason {
                line.push_str(&format!(
                    "  reason: {}",
                    escape_line(r.lines().next().unwrap_or(""))
                ));
            }
            if let Some(a) = &e.agent {
                line.push_str(&format!("  agent: {}", escape_line(a)));
            }
            if let Some(w) = &e.worktree {
                line.push_str(&format!("  worktree: {}", escape_line(w)));
            }
            if let Some(t) = &e.tool {
                line.push_str(&format!("  tool: {}", escape_line(t)));
            }
            for note in &e.notes {
                line.push_str(&format!("\n    note: {}", escape_line(note)));
            }
            for f in &e.changes {
                line.push_str(&format!(
                    "\n    {}  +{} -{}",
                    escape_line(&f.path),
                    f.added_lines,
                    f.removed_lines
                ));
            }
            line.push('\n');
            if let Some(d) = &e.diff {
                line.push_str(d);
                if !d.is_empty() && !d.ends_with('\n') {
                    line.push('\n');
                }
            }
            printed.out(line);
        }
        if self.capped {
            printed.out(format!(
                "… older events not shown (--max-count {}); `git astedit log -n 0` shows them all\n",
                self.max_count
            ));
        }
        printed
    }
}
