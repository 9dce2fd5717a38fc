//! `trust` as text: what the preview runs on refresh, and whether it is trusted now.

use super::Printed;
use super::Style;
use super::TextReport;
use crate::report::trust::OriginKind;
use crate::report::trust::TrustReport;

impl TextReport for TrustReport {
    fn text(&self, _style: &Style) -> Printed {
        let mut printed = Printed::new();
        let lines = crate::ops::trust::run_lines(&self.runs, "  ");
        let mut text = if lines.is_empty() {
            format!("refreshing preview {} runs no program\n", self.id)
        } else {
            format!(
                "refreshing preview {} runs:\n{}\n",
                self.id,
                lines.join("\n")
            )
        };
        text.push_str(&match (self.recorded, self.was) {
            (true, _) => format!(
                "trusted: its refresh may run this (commit {}, {})\n",
                self.commit, self.digest
            ),
            (false, OriginKind::MadeHere) => "it was made here: trusted already\n".to_string(),
            (false, OriginKind::Signed) => {
                "it is signed by an allowed signer: trusted already\n".to_string()
            }
            (false, _) => "trusted already\n".to_string(),
        });
        printed.out(text);
        printed
    }
}
