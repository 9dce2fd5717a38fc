//! `ast_grep`'s result: the rows kept within the call's byte budget, and the text
//! block (one line per match, then the counts and how to page on).

use super::notes::push_notes;
use crate::grep::GrepFile;
use crate::report::GrepMatch;
use crate::report::GrepReport;
use crate::rewrite::MatchText;
use crate::text::first_line;
use crate::text::plural;

/// Keeps the rows of a search while they fit a byte budget; the first always does.
pub struct Rows {
    /// Bytes the rows may take (the rest of the result's budget is kept for the rest).
    room: usize,
    used: usize,
    /// Match and capture text longer than this (characters) is cut with `…`.
    max_text: usize,
    rows: Vec<GrepMatch>,
    budget_cut: bool,
}

/// What [`Rows`] kept: the report with its rows, and whether the budget cut them.
pub struct Kept {
    pub report: GrepReport,
    pub budget_cut: bool,
}

impl Rows {
    pub fn new(room: usize, max_text: usize) -> Rows {
        Rows {
            room,
            used: 0,
            max_text,
            rows: Vec::new(),
            budget_cut: false,
        }
    }

    /// Rows carry the whole match text and the captures.
    pub fn match_text(&self) -> MatchText {
        MatchText::WithCaptures
    }

    /// Keeps `file`'s rows while they fit.
    pub fn add(&mut self, file: &GrepFile<'_>) {
        for mut m in crate::render::grep::rows_of(file) {
            if self.budget_cut {
                return;
            }
            m.span.text = cut(&m.span.text, self.max_text);
            // Captures are cut as match text is: one `$$$B` can hold a whole class.
            for span in m
                .meta_variables
                .single
                .values_mut()
                .chain(m.meta_variables.multi.values_mut().flatten())
            {
                span.text = cut(&span.text, self.max_text);
            }
            // The match as JSON, and its line of text.
            let size = serde_json::to_string(&m).map_or(0, |s| s.len())
                + m.path.len()
                + first_line(&m.span.text).len()
                + 16;
            self.used += size;
            if self.used <= self.room || self.used == size {
                self.rows.push(m);
            } else {
                self.budget_cut = true;
            }
        }
    }

    /// The report with the rows kept, counted from `offset`.
    pub fn finish(self, mut report: GrepReport, offset: usize) -> Kept {
        report.shown = self.rows.len();
        report.capped = offset + self.rows.len() < report.total;
        report.matches = self.rows;
        Kept {
            report,
            budget_cut: self.budget_cut,
        }
    }
}

fn cut(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_string(),
    }
}

/// The text block: `path:line:col: text` per row, then the counts; `budget` is the
/// call's byte budget, named when it cut the rows.
pub fn text(kept: &Kept, offset: usize, budget: usize, notes: &[String]) -> String {
    let out = &kept.report;
    let mut text = String::new();
    for m in &out.matches {
        text.push_str(&format!(
            "{}:{}:{}: {}\n",
            m.path,
            m.span.line,
            m.span.column,
            first_line(&m.span.text)
        ));
    }
    if out.total == 0 {
        text.push_str(&format!(
            "No matches ({} searched).\n",
            plural(out.files_searched, "file")
        ));
    } else {
        text.push_str(&format!(
            "{} {} in {}",
            out.total,
            if out.total == 1 { "match" } else { "matches" },
            plural(out.files_matched, "file")
        ));
        if offset > 0 || out.capped {
            text.push_str(&format!(
                "; showing {} from offset {offset}",
                out.matches.len()
            ));
        }
        if out.capped {
            text.push_str(&format!(
                "; more: call again with offset {} ({}or narrow paths)",
                offset + out.matches.len(),
                if kept.budget_cut {
                    format!("the {budget}-byte result budget was reached; or raise max_bytes, ")
                } else {
                    "or raise max_results, ".to_string()
                }
            ));
        }
        text.push_str(".\n");
    }
    push_notes(&mut text, notes, &out.diagnostics.warnings);
    text
}
