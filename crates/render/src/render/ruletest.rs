//! `test` as text, in `ast-grep test`'s shape (so CI logs read the same): `Running N
//! tests`, the details of failing cases, one `PASS`/`FAIL` line a rule with a letter a
//! case, and `test result: ok. N passed; M failed;`.

use std::fmt::Write as _;

use super::Printed;
use super::Style;
use super::TextReport;
use crate::report::ruletest::CaseStatus;
use crate::report::ruletest::CaseVerdict;
use crate::report::ruletest::RuleVerdict;
use crate::report::ruletest::TestReport;
use crate::report::ruletest::Verdict;
use crate::scan::ruletest::Snapshot;

/// Above this many cases, a rule's line counts them instead of a letter each.
const MAX_LETTERS: usize = 40;

impl TextReport for TestReport {
    fn text(&self, style: &Style) -> Printed {
        let mut printed = Printed::new();
        for w in &self.warnings {
            printed.warn(w.clone());
        }
        let mut out = format!("Running {} tests\n", self.tests);
        for id in &self.not_found {
            let _ = writeln!(out, "Configuration not found! {id}");
        }
        out.push_str("\n----------- Case Details -----------\n");
        for rule in self.rules.iter().filter(|r| r.verdict == Verdict::Fail) {
            for case in &rule.cases {
                case_detail(&mut out, &rule.id, case, style);
            }
        }
        for rule in &self.rules {
            let _ = writeln!(out, "{} {}  {}", label(rule, style), rule.id, summary(rule));
        }
        out.push('\n');
        let counts = format!("{} passed; {} failed;", self.passed, self.failed);
        if self.failed == 0 {
            let ok = paint(style, anstyle::AnsiColor::Green.on_default(), "ok");
            let _ = writeln!(out, "test result: {ok}. {counts}");
        } else {
            let _ = writeln!(out, "test failed. {counts}");
        }
        printed.out(out);
        for path in &self.written {
            printed.note(format!("wrote {path}"));
        }
        if self.failed > 0 && self.snapshots_only {
            printed.note(
                "hint: only snapshots differ; if the new output is right, `git astedit test -U` \
                 (or -i, one by one) writes it",
            );
        }
        printed
    }
}

fn paint(style: &Style, s: anstyle::Style, text: &str) -> String {
    if style.color {
        format!("{}{text}{}", s.render(), s.render_reset())
    } else {
        text.to_string()
    }
}

fn label(rule: &RuleVerdict, style: &Style) -> String {
    use anstyle::AnsiColor;
    let bold = anstyle::Style::new()
        .bold()
        .fg_color(Some(AnsiColor::White.into()));
    match rule.verdict {
        Verdict::Skip => paint(style, bold.bg_color(Some(AnsiColor::Yellow.into())), "SKIP"),
        Verdict::Pass => paint(style, bold.bg_color(Some(AnsiColor::Green.into())), "PASS"),
        Verdict::Fail => paint(style, bold.bg_color(Some(AnsiColor::Red.into())), "FAIL"),
    }
}

fn letter(status: CaseStatus) -> char {
    match status {
        CaseStatus::Validated | CaseStatus::Reported => '.',
        CaseStatus::Wrong => 'W',
        CaseStatus::Updated => 'U',
        CaseStatus::Missing => 'M',
        CaseStatus::Noisy => 'N',
        CaseStatus::Error => 'E',
    }
}

/// A letter a case, or for many cases the counts centred in dots.
fn summary(rule: &RuleVerdict) -> String {
    if rule.cases.len() <= MAX_LETTERS {
        return rule.cases.iter().map(|c| letter(c.status)).collect();
    }
    let count = |f: &dyn Fn(CaseStatus) -> bool| rule.cases.iter().filter(|c| f(c.status)).count();
    let parts: Vec<String> = [
        (
            "Pass",
            count(&|s| matches!(s, CaseStatus::Validated | CaseStatus::Reported)),
        ),
        ("Updated", count(&|s| s == CaseStatus::Updated)),
        ("Wrong", count(&|s| s == CaseStatus::Wrong)),
        ("Missing", count(&|s| s == CaseStatus::Missing)),
        ("Noisy", count(&|s| s == CaseStatus::Noisy)),
        ("Error", count(&|s| s == CaseStatus::Error)),
    ]
    .into_iter()
    .filter(|(_, n)| *n > 0)
    .map(|(label, n)| format!("{label} × {n}"))
    .collect();
    format!("{:.^50}", parts.join(", "))
}

fn indented(out: &mut String, code: &str) {
    for line in code.lines() {
        let _ = writeln!(out, "  {line}");
    }
}

fn yaml(snapshot: &Snapshot) -> String {
    serde_saphyr::to_string(snapshot).unwrap_or_else(|e| format!("(cannot show: {e})\n"))
}

/// One case's details, as the report shows a failing case (for `test -i`, before it
/// asks).
pub fn case_text(id: &str, case: &CaseVerdict, style: &Style) -> String {
    let mut out = String::new();
    case_detail(&mut out, id, case, style);
    out
}

fn case_detail(out: &mut String, id: &str, case: &CaseVerdict, style: &Style) {
    let underline = anstyle::Style::new().underline();
    let bold = anstyle::Style::new().bold();
    let italic = anstyle::Style::new().italic();
    let tag = |name: &str| format!("[{}]", paint(style, underline, name));
    let id = paint(style, bold, id);
    let section = |name: &str| paint(style, italic, name);
    match case.status {
        CaseStatus::Validated | CaseStatus::Reported => {}
        CaseStatus::Updated => {
            let _ = writeln!(
                out,
                "{} Rule {id}'s snapshot baseline has been updated.\n",
                tag("Updated")
            );
            indented(out, &case.code);
            out.push('\n');
        }
        CaseStatus::Wrong => {
            let actual = case.actual.as_ref().map(yaml).unwrap_or_default();
            match &case.expected {
                Some(expected) => {
                    let _ = writeln!(
                        out,
                        "{} {id} snapshot is different from baseline.",
                        tag("Wrong")
                    );
                    let _ = writeln!(out, "{}", section("Diff:"));
                    let expected = yaml(expected);
                    let diff = similar::TextDiff::from_lines(&expected, &actual);
                    for change in diff.iter_all_changes() {
                        let (sign, color) = match change.tag() {
                            similar::ChangeTag::Delete => ('-', Some(crate::diff::style::OLD)),
                            similar::ChangeTag::Insert => ('+', Some(crate::diff::style::NEW)),
                            similar::ChangeTag::Equal => (' ', None),
                        };
                        let line = format!("{sign}{}", change.value().trim_end_matches('\n'));
                        match color {
                            Some(c) => {
                                let _ = writeln!(out, "{}", paint(style, c, &line));
                            }
                            None => {
                                let _ = writeln!(out, "{line}");
                            }
                        }
                    }
                }
                None => {
                    let _ = writeln!(out, "{} No {id} baseline found.", tag("Wrong"));
                    let _ = writeln!(out, "{}", section("Generated Snapshot:"));
                    indented(out, &actual);
                }
            }
            let _ = writeln!(out, "{}", section("For Code:"));
            indented(out, &case.code);
            out.push('\n');
        }
        CaseStatus::Missing => {
            let _ = writeln!(
                out,
                "{} Expect rule {id} to report issues, but none found in:\n",
                tag("Missing")
            );
            indented(out, &case.code);
            out.push('\n');
        }
        CaseStatus::Noisy => {
            let _ = writeln!(
                out,
                "{} Expect {id} to report no issue, but some issues found in:\n",
                tag("Noisy")
            );
            indented(out, &case.code);
            out.push('\n');
        }
        CaseStatus::Error => {
            let why = case.message.as_deref().unwrap_or("");
            let _ = writeln!(out, "{} Fail to apply fix to {id}: {why}", tag("Error"));
        }
    }
}
