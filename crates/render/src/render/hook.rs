//! `hook install` as text: where the hook is, and where a replaced one was kept.

use super::Printed;
use super::Style;
use super::TextReport;
use crate::report::HookReport;

impl TextReport for HookReport {
    fn text(&self, _style: &Style) -> Printed {
        let mut text = if self.unchanged {
            format!(
                "The pre-commit hook at {} is already installed.\n",
                self.path
            )
        } else {
            format!(
                "Installed the pre-commit hook at {}: commits run `{}`.\n",
                self.path, self.command
            )
        };
        if let Some(b) = &self.backup {
            text.push_str(&format!("The previous hook is kept at {b}.\n"));
        }
        let mut printed = Printed::new();
        printed.out(text);
        printed
    }
}
