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
        let secs = self.duration_ms as f64 / 1000.0;
        let how = if self.timed_out {
            format!("timed out after {secs:.1} s and was killed")
        } else {
            match (self.exit_code, self.signal) {
                (Some(code), _) => format!("exited {code} in {secs:.1} s"),
                (None, Some(sig)) => format!("was killed by signal {sig} after {secs:.1} s"),
                (None, None) => format!("ended after {secs:.1} s"),
            }
        };
        let verdict = if self.passed { "passed" } else { "failed" };
        printed.note(format!(
            "Preview {} {verdict}: `{}` {how} in a worktree of the preview; the work tree is unchanged.",
            self.id, self.command
        ));
        printed
    }
}
