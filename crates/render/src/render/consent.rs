//! `allow` as text: each command a repository names, its digest and whether it may run.

use super::Printed;
use super::Style;
use super::TextReport;
use crate::report::consent::AllowReport;

impl TextReport for AllowReport {
    fn text(&self, _style: &Style) -> Printed {
        let mut printed = Printed::new();
        if self.commands.is_empty() {
            printed.out(
                "This repository's files name no command (no [fmt] in astedit.toml, no \
                 customLanguages in sgconfig.yml).\n"
                    .to_string(),
            );
        }
        for c in &self.commands {
            let state = match (c.allowed, self.changed.contains(&c.digest)) {
                (true, true) => "allowed now",
                (true, false) => "allowed",
                (false, true) => "revoked",
                (false, false) => "not allowed",
            };
            printed.out(format!("{}: {}\n", c.source, c.command));
            if !c.files.is_empty() {
                printed.out(format!("  runs: {}\n", c.files.join(", ")));
            }
            printed.out(format!("  {} ({state})\n", c.digest));
        }
        let named = |d: &String| self.commands.iter().any(|c| &c.digest == d);
        for d in self.changed.iter().filter(|d| !named(d)) {
            let what = if self.revoked { "Revoked" } else { "Allowed" };
            printed.out(format!("{what} {d}.\n"));
        }
        if self.changed.is_empty() && !self.commands.is_empty() {
            let pending = self.commands.iter().filter(|c| !c.allowed).count();
            printed.note(if pending == 0 {
                "Nothing changed: every command is allowed.".to_string()
            } else {
                format!(
                    "Nothing recorded: {pending} not allowed; `git astedit allow` allows \
                     them once you have read them."
                )
            });
        }
        printed
    }
}
