//! The `previews` tool's text: a page of pending previews, or one preview's files (its
//! diff is in the structured content).

use crate::report::ListReport;
use crate::report::ShowReport;

/// One line per listed preview, then where the page sits when there are more.
pub fn list(report: &ListReport) -> String {
    let mut text = String::new();
    for r in &report.previews {
        text.push_str(&format!(
            "{}  {}  {:<5}  {}",
            r.id, r.time, r.kind, r.summary
        ));
        if let Some(reason) = &r.reason {
            text.push_str(&format!("  ({reason})"));
        }
        if let Some(sig) = r.signature.as_ref().filter(|s| s.is_signed()) {
            text.push_str(&format!("  [{}]", sig.describe()));
        }
        if !r.origin.origin.is_trusted() {
            text.push_str("  [untrusted]");
        }
        text.push('\n');
        // What a refresh would run, exactly (a summary can look harmless).
        for line in crate::ops::trust::run_lines(&r.runs, "    ") {
            text.push_str(&line);
            text.push('\n');
        }
    }
    let (offset, shown, total) = (report.offset, report.previews.len(), report.total);
    if total == 0 {
        text.push_str("No pending previews.\n");
    } else if offset > 0 || offset + shown < total {
        text.push_str(&format!(
            "{shown} of {total} pending previews, from offset {offset}"
        ));
        if offset + shown < total {
            text.push_str(&format!(
                "; more: call again with offset {}",
                offset + shown
            ));
        }
        text.push_str(".\n");
    }
    text
}

/// The preview's header, its files with line counts, and where its diff is.
pub fn show(report: &ShowReport) -> String {
    let r = &report.preview;
    let mut text = format!("preview {}  {}  {}\n{}\n", r.id, r.time, r.kind, r.summary);
    if let Some(reason) = &r.reason {
        text.push_str(&format!("reason: {reason}\n"));
    }
    if let Some(sig) = r.signature.as_ref().filter(|s| s.is_signed()) {
        text.push_str(&format!("{}\n", sig.describe()));
    }
    if let Some(why) = &r.origin.origin_why {
        text.push_str(&format!("origin: untrusted ({why})\n"));
    }
    let runs = crate::ops::trust::run_lines(&r.runs, "  ");
    if !runs.is_empty() {
        text.push_str(&format!("refresh runs:\n{}\n", runs.join("\n")));
    }
    for f in &report.files {
        text.push_str(&format!(
            "  {} (+{} -{})\n",
            f.path, f.added_lines, f.removed_lines
        ));
    }
    if let Some(diff) = &report.diff {
        text.push_str(&format!(
            "The diff ({} lines{}) is in the structured content's `diff`.\n",
            diff.diff_lines,
            if diff.diff_truncated { ", cut" } else { "" }
        ));
    }
    text
}
