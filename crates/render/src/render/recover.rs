//! `recover` as text: the locks and the interrupted run with where each path stands,
//! or what `--finish`/`--abandon` did.

use super::Printed;
use super::Style;
use super::TextReport;
use crate::report::RecoverOutput;
use crate::report::RecoverStatusReport;
use crate::text::Quoting;

impl TextReport for RecoverOutput {
    fn text(&self, _style: &Style) -> Printed {
        let mut printed = Printed::new();
        match self {
            RecoverOutput::Status(status) => printed.out(status_text(status)),
            RecoverOutput::Done(done) => printed.out(format!("{}\n", done.message)),
        };
        printed
    }
}

fn status_text(report: &RecoverStatusReport) -> String {
    let mut text = String::new();
    for lock in &report.locks {
        text.push_str(&format!("Lock {}: {}.\n", lock.path, lock.what));
    }
    let Some(run) = &report.unfinished else {
        if report.locks.is_empty() {
            text.push_str("Nothing to recover.\n");
        }
        return text;
    };
    let next = if run.running {
        "still running: its process holds the lock"
    } else if run.rolls_back() {
        "before its point of no return: it will be rolled back"
    } else {
        "past its point of no return: it is rolled forward"
    };
    text.push_str(&format!(
        "Interrupted {} of {} (pid {}), {next}.\n",
        run.op, run.id, run.pid
    ));
    for f in &run.files {
        let what = f
            .what
            .as_deref()
            .map(|w| format!(": {w}"))
            .unwrap_or_default();
        text.push_str(&format!(
            "  {:<8} {}{what}\n",
            f.state,
            Quoting::default().quote(&f.path)
        ));
    }
    if let Some(hint) = report.hint {
        text.push_str(&format!("hint: {hint}\n"));
    }
    text
}
