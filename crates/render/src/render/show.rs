//! `show` as text: the preview's header, then its diff (streamed by the operation) or,
//! with `--stat`, its per-file line counts.

use super::Printed;
use super::Style;
use super::TextReport;
use crate::diff::stat_line;
use crate::diff::LineCounts;
use crate::report::ShowReport;
use crate::text::escape_line;
use crate::text::plural;

impl TextReport for ShowReport {
    fn text(&self, style: &Style) -> Printed {
        let mut printed = Printed::new();
        printed.out(header(self));
        if self.streamed {
            // The diff follows, streamed.
            return printed;
        }
        if let Some(diff) = &self.diff {
            printed.out(diff.diff.clone());
            return printed;
        }
        let paths: Vec<String> = self
            .files
            .iter()
            .map(|f| style.quoting.quote_owned(f.path.clone()))
            .collect();
        let width = paths.iter().map(|p| p.chars().count()).max().unwrap_or(0);
        let (mut added, mut removed) = (0, 0);
        let mut text = String::new();
        for (f, path) in self.files.iter().zip(&paths) {
            added += f.added_lines;
            removed += f.removed_lines;
            let counts = LineCounts {
                added: f.added_lines,
                removed: f.removed_lines,
            };
            stat_line(&mut text, path, width, counts, style.color);
        }
        text.push_str(&format!(
            " {} changed, {} insertions(+), {} deletions(-)\n",
            plural(self.files.len(), "file"),
            added,
            removed
        ));
        printed.out(text);
        printed
    }
}

/// The lines above a shown preview: id, time, kind, summary, reason.
fn header(r: &ShowReport) -> String {
    let p = &r.preview;
    let mut text = format!(
        "preview {}  {}  {}\n{}\n",
        p.id,
        p.time,
        p.kind,
        escape_line(&p.summary)
    );
    if let Some(reason) = &p.reason {
        text.push_str(&format!("reason: {}\n", escape_line(reason)));
    }
    // `signed by NAME (ssh key SHA256:…): good`; the signer's name is its own text.
    if let Some(sig) = p.signature.as_ref().filter(|s| s.is_signed()) {
        text.push_str(&format!("{}\n", escape_line(&sig.describe())));
    }
    if let Some(state) = &p.review {
        text.push_str(&format!("{}\n", super::review::state_line(state)));
    }
    if let Some(why) = &p.origin.origin_why {
        text.push_str(&format!("origin: untrusted ({why})\n"));
    }
    // What a refresh would run, exactly: never a summary that can look harmless.
    let runs = crate::ops::trust::run_lines(&p.runs, "  ");
    if !runs.is_empty() {
        text.push_str("refresh runs:\n");
        for line in runs {
            text.push_str(&line);
            text.push('\n');
        }
    }
    text.push('\n');
    text
}
