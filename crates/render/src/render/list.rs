//! `list` as text: one pending preview a line, newest first; skipped refs as warnings.

use super::Printed;
use super::Style;
use super::TextReport;
use crate::report::ListReport;
use crate::text::escape_line;

impl TextReport for ListReport {
    fn text(&self, _style: &Style) -> Printed {
        let mut printed = Printed::new();
        printed.warn_all(&self.warnings);
        if self.total == 0 {
            // On stderr: a script reading the list gets no line that is not a preview.
            printed.note(
                "No pending previews. Stage one with `git astedit edit -p PATTERN -r REWRITE` \
                 (or `git astedit scan --stage`); `git astedit log` shows what was applied.",
            );
        }
        for p in &self.previews {
            // One preview, one line: a summary or reason with a newline must not forge one.
            let mut line = format!(
                "{}  {}  {:<5}  {}",
                p.id,
                p.time,
                p.kind,
                escape_line(&p.summary)
            );
            if let Some(reason) = &p.reason {
                line.push_str(&format!("  ({})", escape_line(reason)));
            }
            if !p.origin.origin.is_trusted() {
                line.push_str("  [untrusted]");
            }
            line.push('\n');
            if let Some(state) = &p.review {
                line.push_str(&format!("    {}\n", super::review::state_line(state)));
            }
            // What a refresh would run, exactly: never a summary that can look harmless.
            for run in crate::ops::trust::run_lines(&p.runs, "    ") {
                line.push_str(&run);
                line.push('\n');
            }
            printed.out(line);
        }
        printed
    }
}
