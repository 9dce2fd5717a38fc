//! `lane` as text: a started lane's path alone (for `cd "$(git astedit lane start a)"`),
//! a line per lane, or what a drop removed.

use super::Printed;
use super::Style;
use super::TextReport;
use crate::diff::render_diffs;
use crate::diff::DiffFile;
use crate::report::lane::LaneAction;
use crate::report::lane::LaneMergeReport;
use crate::report::lane::LaneReport;
use crate::report::lane::MergedHow;
use crate::text::plural;

impl TextReport for LaneReport {
    fn text(&self, _style: &Style) -> Printed {
        let mut printed = Printed::new();
        match self.action {
            LaneAction::Start => {
                for l in &self.lanes {
                    printed.out(format!("{}\n", l.path));
                }
            }
            LaneAction::List => {
                if self.lanes.is_empty() {
                    printed.out("No lanes (git astedit lane start NAME makes one).\n");
                }
                for l in &self.lanes {
                    let state = if !l.present {
                        "its work tree is gone".to_string()
                    } else if l.changed.is_empty() {
                        "no changes".to_string()
                    } else {
                        format!(
                            "{} changed, {} not merged here",
                            plural(l.changed.len(), "file"),
                            l.unmerged.len()
                        )
                    };
                    let base: String = l.base.chars().take(12).collect();
                    printed.out(format!("{}\t{}\t(base {base}; {state})\n", l.name, l.path));
                }
            }
            LaneAction::Drop => {
                for l in &self.lanes {
                    printed.out(format!("Dropped lane {} ({}).\n", l.name, l.path));
                    if !l.unmerged.is_empty() {
                        printed.out(format!(
                            "Lost with it (--force): its changes to {}.\n",
                            l.unmerged.join(", ")
                        ));
                    }
                }
            }
        }
        printed
    }
}

impl TextReport for LaneMergeReport {
    fn text(&self, style: &Style) -> Printed {
        let mut text = render_diffs(
            &DiffFile::from_changes(&self.changes),
            style.color,
            self.max_render,
        );
        if !text.is_empty() {
            text.push('\n');
        }
        for f in &self.files {
            let how = match f.how {
                MergedHow::Taken => "taken",
                MergedHow::ByLine => "merged by line",
                MergedHow::ByNode => "merged by declaration",
            };
            text.push_str(&format!(
                "{}: {how} (lane {})\n",
                f.path,
                f.lanes.join(", lane ")
            ));
        }
        text.push_str(&format!("{}.\n", self.summary));
        if let Some(id) = &self.id {
            text.push_str(&format!(
                "Staged preview {id}. Apply with `git astedit apply {id}`, drop with `git astedit discard {id}`.\n"
            ));
        }
        let mut printed = Printed::new();
        printed.out(text);
        if let Some(v) = &self.verify {
            printed.note(super::verify::verdict(v));
        }
        printed
    }
}
