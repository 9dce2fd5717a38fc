//! Errors, rendered once for both front ends from the one [`ErrorReport`]: the CLI's
//! `error:` lines (its JSON is the report itself), and the server's text block and
//! JSON (the same report with the call to make next).

use super::Printed;
use super::Style;
use super::TextReport;
use crate::report::ErrorReport;
use crate::report::ToolErrorBody;
use crate::report::ToolErrorReport;

/// The CLI's text: `error: …`, the causes under it, then the hint, on stderr.
impl TextReport for ErrorReport {
    fn text(&self, _style: &Style) -> Printed {
        let e = &self.error;
        let mut text = format!("error: {}", e.message);
        for cause in &e.causes {
            text.push_str(&format!("\n  caused by: {cause}"));
        }
        if let Some(hint) = &e.hint {
            text.push_str(&format!("\nhint: {hint}"));
        }
        let mut printed = Printed::new();
        printed.note(text);
        printed
    }
}

/// The server's text block: what happened first (with the files it is about,
/// `paths`, on that first line when it does not name them), then what to do, then the
/// code and what its exit class means (`meaning`).
pub fn tool_text(report: &ErrorReport, paths: &[String], meaning: &str) -> String {
    let e = &report.error;
    let (first, rest) = e.message.split_once('\n').unwrap_or((&e.message, ""));
    let mut text = format!("error: {first}");
    if !paths.is_empty() && !paths.iter().all(|p| first.contains(p.as_str())) {
        let shown: Vec<&str> = paths.iter().take(5).map(String::as_str).collect();
        text.push_str(&format!(
            " ({}{})",
            shown.join(", "),
            if paths.len() > 5 {
                format!(" and {} more", paths.len() - 5)
            } else {
                String::new()
            }
        ));
    }
    text.push('\n');
    if !rest.is_empty() {
        text.push_str(rest);
        text.push('\n');
    }
    if let Some(hint) = &e.hint {
        text.push_str(&format!("hint: {hint}\n"));
    }
    for cause in &e.causes {
        text.push_str(&format!("caused by: {cause}\n"));
    }
    text.push_str(&format!(
        "(code {}, exit class {}: {meaning})\n",
        e.code, e.exit
    ));
    text
}

/// The server's JSON: the CLI's `--json` error (`git astedit schema error`) with
/// `next`, the call to make next (`null`: none). Keys in alphabetical order, as the
/// server has always written them.
pub fn tool_json(report: ErrorReport, next: Option<serde_json::Value>) -> String {
    let report = ToolErrorReport {
        schema_version: report.schema_version,
        error: ToolErrorBody {
            body: report.error,
            next,
        },
    };
    // Through a `Value`, whose maps are sorted.
    serde_json::to_value(&report)
        .map(|v| v.to_string())
        .unwrap_or_default()
}
