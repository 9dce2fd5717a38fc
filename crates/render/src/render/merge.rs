//! `merge` as text: the diff of the merged preview, its summary and what to do next.

use super::Printed;
use super::Style;
use super::TextReport;
use crate::diff::render_diffs;
use crate::diff::DiffFile;
use crate::report::MergeReport;

impl TextReport for MergeReport {
    fn text(&self, style: &Style) -> Printed {
        let id = &self.id;
        let mut text = render_diffs(
            &DiffFile::from_changes(&self.changes),
            style.color,
            self.max_render,
        );
        text.push_str(&format!("\n{}\n", self.summary));
        text.push_str(&format!(
            "Staged preview {id}. Apply with `git astedit apply {id}`, drop with `git astedit discard {id}`.\n"
        ));
        if self.discarded {
            text.push_str(&format!(
                "Discarded the merged previews: {}.\n",
                self.merged.join(", ")
            ));
        }
        let mut printed = Printed::new();
        printed.out(text);
        printed
    }
}
