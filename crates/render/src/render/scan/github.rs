//! `scan --format github`: GitHub Actions workflow commands (`::error file=…,line=…::message`),
//! which the runner turns into annotations on the pull request. Paths are repository
//! paths: the runner resolves them against the checkout.

use std::fmt::Write;

use super::super::Printed;
use crate::levels::Severity;
use crate::report::FindingRow;
use crate::report::ScanMode;
use crate::report::ScanReport;

/// The result text (stdout): the diff of the fixes (fix modes), an annotation per
/// finding, and with `--check` one per file a fix would change.
pub fn body(report: &ScanReport, printed: &mut Printed) {
    let mut text = String::new();
    if report.mode.fixing() && !report.no_fixes() {
        text.push_str(report.diff.as_deref().unwrap_or_default());
    }
    // With `--baseline`, only the new findings: a change is annotated with what it brought.
    text.push_str(&annotations(report.findings.iter().filter(|f| {
        f.baseline != Some(crate::scan::baseline::State::Unchanged)
    })));
    if report.mode == ScanMode::Check {
        for f in report.files.iter().flatten() {
            let rules: Vec<String> = f
                .rules
                .iter()
                .map(|r| format!("{} ×{}", r.rule, r.count))
                .collect();
            text.push_str(&file_annotation(
                "error",
                &f.repo_path,
                "git astedit scan",
                &format!(
                    "`git astedit scan --apply` would change this file ({})",
                    rules.join(", ")
                ),
            ));
        }
    }
    printed.out(text);
}

/// One workflow command per finding.
pub fn annotations<'a>(findings: impl IntoIterator<Item = &'a FindingRow>) -> String {
    let mut out = String::new();
    for f in findings {
        let level = match f.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Info | Severity::Hint => "notice",
        };
        let _ = writeln!(
            out,
            "::{level} file={},line={},col={},endLine={},endColumn={},title={}::{}",
            escape_property(&f.repo_path),
            f.line,
            f.column,
            f.end_line,
            f.end_column,
            escape_property(&f.rule),
            escape_data(&f.message)
        );
    }
    out
}

/// One workflow command about a whole file (`::error file=…,title=…::message`).
pub fn file_annotation(level: &str, path: &str, title: &str, message: &str) -> String {
    format!(
        "::{level} file={},title={}::{}\n",
        escape_property(path),
        escape_property(title),
        escape_data(message)
    )
}

/// Workflow-command data escaping (the message part).
fn escape_data(s: &str) -> String {
    s.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// Workflow-command property escaping (`file=`, `title=`).
fn escape_property(s: &str) -> String {
    escape_data(s).replace(':', "%3A").replace(',', "%2C")
}
