//! `gc` as text: the refs removed, then what was expired and pruned.

use super::Printed;
use super::Style;
use super::TextReport;
use crate::report::GcReport;
use crate::text::plural;

impl TextReport for GcReport {
    fn text(&self, _style: &Style) -> Printed {
        let mut printed = Printed::new();
        for r in &self.removed_refs {
            printed.out(format!(
                "Removed {}: not a readable preview ({}).\n",
                r.name, r.why
            ));
        }
        printed.out(format!(
            "Expired {}; pruned {} journal entr{} ({} kept).\n",
            plural(self.expired_previews.len(), "preview"),
            self.pruned_events,
            if self.pruned_events == 1 { "y" } else { "ies" },
            self.kept_events
        ));
        if let Some(c) = &self.cache {
            if c.removed > 0 {
                printed.out(format!(
                    "Pruned the result cache: {} removed ({} bytes), {} kept.\n",
                    plural(c.removed, "file"),
                    c.freed_bytes,
                    c.kept
                ));
            }
        }
        printed
    }
}
