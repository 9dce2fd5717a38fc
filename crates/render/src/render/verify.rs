//! `verify` as text: the command's output, then one line with the verdict.

use super::Printed;
use super::Style;
use super::TextReport;
use crate::report::verify::BaseCheck;
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
        if let Some(base) = self.new_only.as_ref().and_then(|c| c.base_check.as_ref()) {
            printed.note(format!("note: {}", on_the_base(self, base)));
        }
        if let Some(c) = self.new_only.as_ref().filter(|c| !c.added.is_empty()) {
            for line in &c.added {
                printed.note(format!("  {}", crate::text::escape_line(line)));
            }
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
    let no_worse = if report.passed && report.exit_code != Some(0) {
        ", adding nothing to the base's failure"
    } else {
        ""
    };
    format!(
        "Preview {} {passed}: `{}` {how} in a worktree of the preview{no_worse}",
        report.id, report.command
    )
}

/// `--new-only`: how the check went on the base, and what the preview added to it.
fn on_the_base(report: &VerifyReport, base: &BaseCheck) -> String {
    let ran = if base.cached {
        "as an earlier run found"
    } else {
        "run now"
    };
    let at = report
        .base
        .as_deref()
        .map_or("the base", |b| &b[..b.len().min(12)]);
    let how = if base.timed_out {
        "timed out, so there is nothing to compare with".to_string()
    } else if base.passed {
        "passes".to_string()
    } else {
        let lines = match base.diagnostics {
            1 => "1 diagnostic line".to_string(),
            n => format!("{n} diagnostic lines"),
        };
        format!("fails too ({lines})")
    };
    let added = report.new_only.as_ref().map_or(0, |c| c.added.len());
    let adds = match added {
        0 => "the preview adds none".to_string(),
        1 => "the preview adds 1 line:".to_string(),
        n => format!("the preview adds {n} lines:"),
    };
    format!("the check on {at} ({ran}) {how}; {adds}")
}
