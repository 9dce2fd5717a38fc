//! `verify` as text: the command's output, then one line with the verdict.

use super::Printed;
use super::Style;
use super::TextReport;
use crate::report::verify::VerifyReport;

impl TextReport for VerifyReport {
    fn text(&self, _style: &Style) -> Printed {
        let mut printed = Printed::new();
        if self.output_truncated {
            printed.out("… (earlier output not kept)\n");
        }
        printed.out(self.output.clone());
        if !self.output.is_empty() && !self.output.ends_with('\n') {
            printed.out("\n");
        }
        for note in &self.notes {
            printed.note(format!("note: {note}"));
        }
        printed.note(format!("{}; the work tree is unchanged.", verdict(self)));
        printed
    }
}

/// One line: how the preview's check ended.
pub fn verdict(report: &VerifyReport) -> String {
    let secs = report.duration_ms as f64 / 1000.0;
    let how = if report.timed_out {
        format!("timed out after {secs:.1} s and was killed")
    } else {
        match (report.exit_code, report.signal) {
            (Some(code), _) => format!("exited {code} in {secs:.1} s"),
            (None, Some(sig)) => format!("was killed by signal {sig} after {secs:.1} s"),
            (None, None) => format!("ended after {secs:.1} s"),
        }
    };
    let passed = if report.passed { "passed" } else { "failed" };
    format!(
        "Preview {} {passed}: `{}` {how} in a worktree of the preview",
        report.id, report.command
    )
}
