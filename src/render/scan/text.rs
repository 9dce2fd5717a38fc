//! `scan` as text: findings as `path:line:col: severity[rule-id]: message` lines; in
//! the fix modes the diff of the fixes first, then the findings they leave.

use std::fmt::Write;

use super::super::Printed;
use super::super::Style;
use crate::report::FindingRow;
use crate::report::ScanReport;

/// The result text (stdout) of a scan.
pub fn body(report: &ScanReport, style: &Style, printed: &mut Printed) {
    let mut text = String::new();
    if report.mode.fixing() {
        // After `-i` every accepted fix has been shown already.
        if !report.no_fixes() && report.offered.is_none() {
            text.push_str(report.diff.as_deref().unwrap_or_default());
            text.push('\n');
        }
    }
    text.push_str(&lines(report.open_findings(), style));
    printed.out(text);
}

/// One line per finding, its path as the front end shows paths.
pub fn lines<'a>(findings: impl IntoIterator<Item = &'a FindingRow>, style: &Style) -> String {
    let mut out = String::new();
    for f in findings {
        let _ = writeln!(
            out,
            "{}:{}:{}: {}[{}]: {}",
            style.quoting.quote(&f.path),
            f.line,
            f.column,
            f.severity.as_str(),
            f.rule,
            crate::text::one_line(&f.message)
        );
    }
    out
}
