//! `edit`, `patch`, `run` and `steps` as text: the diff, the patch's placement, the summary and the
//! line that says what was staged (or applied) and what to do next; warnings on
//! stderr.

use super::Printed;
use super::Style;
use super::TextReport;
use crate::change::PreviewKind;
use crate::report::StageReport;
use crate::text::plural;

impl TextReport for StageReport {
    fn text(&self, _style: &Style) -> Printed {
        let mut printed = Printed::new();
        let Some(id) = self.id.as_deref().filter(|_| self.staged) else {
            nothing_staged(self, &mut printed);
            return printed;
        };
        if let Some(diff) = &self.text.diff {
            printed.out(diff.as_str()).out("\n");
        }
        if let Some(placement) = &self.text.placement {
            printed.out(placement.as_str());
        }
        if let Some(steps) = &self.steps {
            for row in steps {
                printed.out(format!("{}\n", step_line(row)));
            }
        }
        printed.out(format!("{}\n", self.summary));
        printed.out(match &self.apply {
            Some(apply) => format!(
                "Staged and applied {id} ({} written). Undo with `git astedit undo {}{id}`.\n",
                plural(apply.written.len() + apply.deleted.len(), "file"),
                if self.text.apply_index { "--index " } else { "" }
            ),
            None => format!(
                "Staged preview {id}. Apply with `git astedit apply {}{id}`, drop with `git astedit discard {id}`.\n",
                if self.text.apply_index { "--index " } else { "" }
            ),
        });
        printed.warn_all(&self.diagnostics.warnings);
        if let Some(run) = &self.run {
            ran(run, &mut printed);
        }
        printed
    }
}

/// One step of `steps`: `step 2 (importers): 5 changes in 3 files, 2 runs`.
pub fn step_line(row: &crate::report::StepRow) -> String {
    let mut line = match &row.name {
        Some(name) => format!("step {} ({name}): ", row.number),
        None => format!("step {}: ", row.number),
    };
    line.push_str(&format!(
        "{} in {}",
        plural(row.changes, "change"),
        plural(row.files, "file")
    ));
    if row.runs != 1 {
        line.push_str(&format!(", {}", plural(row.runs, "run")));
    }
    match row.exported.as_slice() {
        [] => {}
        [one] => {
            let values: Vec<String> = one
                .iter()
                .map(|(k, v)| format!("${k} = {}", crate::text::escape_line(v)))
                .collect();
            line.push_str(&format!("; exported {}", values.join(", ")));
        }
        many => line.push_str(&format!("; exported {}", plural(many.len(), "value"))),
    }
    line
}

/// How a `run`'s command ended, on stderr: a line when it succeeded; the end of its
/// output too when it did not (its changes were staged by `--allow-failure`).
fn ran(run: &crate::report::run::RunFacts, printed: &mut Printed) {
    if run.succeeded() {
        printed.note(format!("`{}` {}.", run.command, run.how()));
        return;
    }
    printed.warn(format!(
        "`{}` {}; its changes were staged as --allow-failure asks",
        run.command,
        run.how()
    ));
    let lines: Vec<&str> = run.output.lines().collect();
    for line in &lines[lines.len().saturating_sub(10)..] {
        printed.note(format!("    {}", crate::text::escape_line(line)));
    }
}

/// Nothing staged: an edit's warnings and why; a patch's placement and why.
fn nothing_staged(report: &StageReport, printed: &mut Printed) {
    match report.kind {
        PreviewKind::Patch => {
            if let Some(placement) = &report.text.placement {
                printed.out(placement.as_str());
            }
            printed.note(if report.text.already_applied > 0 {
                "The patch is already applied; nothing staged."
            } else {
                "The patch changes nothing; nothing staged."
            });
        }
        PreviewKind::Run => {
            printed.warn_all(&report.diagnostics.warnings);
            if let Some(run) = &report.run {
                printed.note(format!(
                    "`{}` {} and changed nothing; nothing staged.",
                    run.command,
                    run.how()
                ));
            }
        }
        _ => {
            printed.warn_all(&report.diagnostics.warnings);
            printed.note(match report.text.offered {
                Some(offered) if offered > 0 => {
                    format!("No change accepted ({offered} offered); nothing staged.")
                }
                _ => "No changes; nothing staged.".to_string(),
            });
        }
    }
}
