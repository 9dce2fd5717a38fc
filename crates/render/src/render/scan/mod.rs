/*!
The printers of `scan`: text for people ([`text`]), GitHub workflow annotations
([`github`]), a SARIF 2.1.0 log ([`sarif`]), and JSON. The front end chooses one
[`ScanFormat`] per run from `--format` and `--json` and hands it the report.

The two CI formats are scan's alone, so they live here rather than in
[`super::Format`], which every other command's printer would then have to refuse.
Every format but JSON ends with the same lines on stderr ([`status`]): warnings, and
what was found, fixed or staged.
*/

pub mod github;
mod note;
pub mod sarif;
pub mod text;

use super::Printed;
use super::Style;
use super::TextReport;
use crate::levels::Severity;
use crate::report::scan::Tally;
use crate::report::FindingRow;
use crate::report::ScanMode;
use crate::report::ScanReport;
use crate::text::plural;
pub use text::ReportStyle;

/// How a scan is printed, chosen once per run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScanFormat {
    /// Text in one of ast-grep's report styles (after the diff of the fixes).
    Text(ReportStyle),
    /// The report as one JSON document (`--json`).
    Json,
    /// The same, indented (`--json=pretty`).
    JsonPretty,
    /// GitHub Actions workflow commands (annotations).
    Github,
    /// A SARIF 2.1.0 log.
    Sarif,
    /// Each finding as ast-grep's object, one a line (`--json=stream`).
    AstGrep,
}

impl ScanFormat {
    /// The report in this format. What loading the rules said comes first, on stderr,
    /// in every format.
    pub fn print(self, report: &ScanReport, style: &Style) -> Result<Printed, serde_json::Error> {
        let mut printed = Printed::new();
        printed.warn_all(&report.notices);
        match self {
            ScanFormat::Json => {
                printed.out(serde_json::to_string(report)? + "\n");
                return Ok(printed);
            }
            ScanFormat::JsonPretty => {
                printed.out(serde_json::to_string_pretty(report)? + "\n");
                return Ok(printed);
            }
            ScanFormat::Text(rs) => text::body(report, style, rs, &mut printed),
            ScanFormat::Github => github::body(report, &mut printed),
            ScanFormat::AstGrep => ast_grep_lines(report.open_findings(), &mut printed)?,
            ScanFormat::Sarif => {
                let log = sarif::log(report);
                printed.out(serde_json::to_string_pretty(&log)? + "\n");
            }
        }
        status(report, style, &mut printed);
        Ok(printed)
    }
}

/// The key of the findings in the one-line JSON document (the report's field, in its
/// order: after the rules, before the counts).
const FINDINGS_KEY: &str = "\"findings\":[";

/// A `report`-mode scan printed as it goes (issue 26): each file's findings as they
/// come, in path order, then what follows them; the same bytes, stdout and stderr,
/// as [`ScanFormat::print`] of the whole report. Not for `--json=pretty`, whose
/// indentation only the whole report's printer knows (it holds its findings).
pub struct ScanStream {
    format: ScanFormat,
    style: Style,
    /// Notices printed (before the first finding); `None` until then.
    notices: Option<usize>,
    sarif: Option<sarif::Streamed>,
}

impl ScanStream {
    /// The printer for `format`, or `None` when that format is printed whole.
    pub fn new(format: ScanFormat, style: Style) -> Option<ScanStream> {
        (format != ScanFormat::JsonPretty).then_some(ScanStream {
            format,
            style,
            notices: None,
            sarif: None,
        })
    }

    /// One file's findings: the notices and the document's head before the first.
    /// `head` is the report before any finding.
    pub fn file(
        &mut self,
        head: &ScanReport,
        rows: &[FindingRow],
    ) -> Result<Printed, serde_json::Error> {
        let mut printed = Printed::new();
        let first = self.notices.is_none();
        if first {
            printed.warn_all(&head.notices);
            self.notices = Some(head.notices.len());
        }
        match self.format {
            ScanFormat::Text(rs) => {
                printed.out(text::findings(rows, &self.style, rs));
            }
            ScanFormat::JsonPretty => {
                let rs = ReportStyle::default();
                printed.out(text::findings(rows, &self.style, rs));
            }
            ScanFormat::Github => {
                printed.out(github::annotations(rows));
            }
            ScanFormat::AstGrep => ast_grep_lines(rows, &mut printed)?,
            ScanFormat::Json => {
                let mut out = String::new();
                if first {
                    let whole = serde_json::to_string(head)?;
                    match whole.find(FINDINGS_KEY) {
                        Some(at) => out.push_str(&whole[..at + FINDINGS_KEY.len()]),
                        None => out.push_str(&whole),
                    }
                }
                for (i, row) in rows.iter().enumerate() {
                    if !(first && i == 0) {
                        out.push(',');
                    }
                    out.push_str(&serde_json::to_string(row)?);
                }
                printed.out(out);
            }
            ScanFormat::Sarif => {
                if first {
                    let (streamed, text) = sarif::Streamed::start(head)?;
                    printed.out(text);
                    self.sarif = Some(streamed);
                }
                if let Some(s) = self.sarif.as_mut() {
                    printed.out(s.file(rows)?);
                }
            }
        }
        Ok(printed)
    }

    /// What follows the findings, for `report` (the whole scan's, findings not held):
    /// the whole report when no finding came.
    pub fn finish(self, report: &ScanReport) -> Result<Printed, serde_json::Error> {
        let Some(shown) = self.notices else {
            return self.format.print(report, &self.style);
        };
        let mut printed = Printed::new();
        // Notices that came after the rules' (`--max-results`).
        printed.warn_all(report.notices.iter().skip(shown));
        match self.format {
            ScanFormat::Json | ScanFormat::JsonPretty => {
                let whole = serde_json::to_string(report)?;
                let rest = match whole.find(FINDINGS_KEY) {
                    Some(at) => &whole[at + FINDINGS_KEY.len()..],
                    None => "",
                };
                printed.out(format!("{rest}\n"));
                return Ok(printed);
            }
            ScanFormat::Sarif => {
                if let Some(s) = self.sarif {
                    printed.out(s.finish(report)?);
                }
            }
            ScanFormat::Text(_) | ScanFormat::Github | ScanFormat::AstGrep => {}
        }
        status(report, &self.style, &mut printed);
        Ok(printed)
    }
}

/// Findings as ast-grep's `--json=stream` prints them, one object a line. A finding
/// whose file changed during the scan has none (its bytes are not known): it is named
/// on stderr instead.
fn ast_grep_lines<'a>(
    rows: impl IntoIterator<Item = &'a FindingRow>,
    printed: &mut Printed,
) -> Result<(), serde_json::Error> {
    let mut out = String::new();
    for row in rows {
        match &row.ast_grep {
            Some(object) => {
                out.push_str(&serde_json::to_string(object)?);
                out.push('\n');
            }
            None => {
                printed.warn(format!(
                    "{}:{}:{}: a finding of rule '{}' left out: the file changed during the \
                     scan",
                    row.path, row.line, row.column, row.rule
                ));
            }
        }
    }
    printed.out(out);
    Ok(())
}

impl TextReport for ScanReport {
    fn text(&self, style: &Style) -> Printed {
        let mut printed = Printed::new();
        printed.warn_all(&self.notices);
        text::body(self, style, ReportStyle::default(), &mut printed);
        status(self, style, &mut printed);
        printed
    }
}

/// The closing warnings and summary, on stderr: stdout stays the result proper.
pub fn status(report: &ScanReport, style: &Style, printed: &mut Printed) {
    use crate::change::FileFlag;
    let quoting = style.quoting;
    printed.warn_all(&report.diagnostics.warnings);
    for u in report.unconverged.iter().flatten() {
        printed.warn(format!(
            "rule '{}' still changed {} after {} passes; the result may change again on the next run",
            u.rule,
            quoting.quote(&u.shown),
            u.passes
        ));
    }
    let flagged: Vec<String> = report
        .files
        .iter()
        .flatten()
        .filter(|f| f.introduces_parse_errors)
        .map(|f| quoting.quote_owned(f.path.clone()))
        .collect();
    if !flagged.is_empty() {
        printed.warn(format!(
            "the fixes make {} parse with errors: {}",
            plural(flagged.len(), "file"),
            flagged.join(", ")
        ));
    }
    for (flag, what) in [
        (
            FileFlag::RepeatsKeptText,
            "the fixes repeat text their match keeps past the rule's pattern (the result \
             holds it twice; flag repeats-kept-text) in",
        ),
        (
            FileFlag::LeavesEmptyBlock,
            "a deleting fix leaves an empty block (flag leaves-empty-block) in",
        ),
    ] {
        let flagged: Vec<String> = report
            .files
            .iter()
            .flatten()
            .filter(|f| f.flags.contains(&flag))
            .map(|f| quoting.quote_owned(f.path.clone()))
            .collect();
        if !flagged.is_empty() {
            printed.warn(format!(
                "{what} {}: {}",
                plural(flagged.len(), "file"),
                flagged.join(", ")
            ));
        }
    }
    if let Some(v) = &report.verified {
        printed.note(crate::render::verify::verdict(v));
    }
    let findings = report.open_tally();
    let searched = plural(report.files_searched, "file");
    let mut lines = Vec::new();
    if report.mode == ScanMode::Report {
        let fixable = findings.fixable;
        if findings.total() == 0 {
            lines.push(format!("No findings in {searched}."));
        } else {
            lines.push(format!(
                "{} ({}) in {searched}{}.",
                plural(findings.total(), "finding"),
                severity_counts(&findings),
                if fixable > 0 {
                    format!("; {fixable} fixable with `{}`", report.fix_command)
                } else {
                    String::new()
                }
            ));
        }
    } else {
        let summary = report.summary.clone().unwrap_or_default();
        // Fixes of the staged content (`--cached`) go to the index too.
        let index = if report.apply_index { "--index " } else { "" };
        match report.offered {
            Some(offered) if offered > 0 && report.no_fixes() => lines.push(format!(
                "No change accepted ({offered} offered); nothing staged."
            )),
            _ if report.no_fixes() => lines.push(format!("No fixes needed in {searched}.")),
            _ => lines.push(match (report.mode, &report.id) {
                (ScanMode::Check, _) if report.apply_index => format!(
                    "{summary} would be made; run `{}` to make them (in the work tree and the index), then commit again.",
                    report.fix_command
                ),
                (ScanMode::Check, _) => format!(
                    "{summary} would be made; run `{}` to make them.",
                    report.fix_command
                ),
                (ScanMode::Apply, Some(id)) => format!(
                    "{summary}: staged and applied {id} ({} written). Undo with `git astedit undo {index}{id}`.",
                    plural(report.written, "file"),
                ),
                (_, Some(id)) => format!(
                    "{summary}: staged preview {id}. Apply with `git astedit apply {index}{id}`, drop with `git astedit discard {id}`."
                ),
                _ => summary,
            }),
        }
        if findings.total() > 0 {
            lines.push(format!(
                "{} left for a person ({}).",
                plural(findings.total(), "finding"),
                severity_counts(&findings)
            ));
        }
    }
    if report.other_shards > 0 {
        lines.push(format!(
            "{} belong to other shards.",
            plural(report.other_shards, "file")
        ));
    }
    if let Some(b) = &report.baseline {
        lines.push(baseline_line(b));
    }
    for line in lines {
        printed.note(line);
    }
}

/// `Against HEAD~1 (1a2b3c4d5e6f): 2 new, 5 unchanged, 1 fixed.`: the last line of a
/// scan with `--baseline`.
pub fn baseline_line(b: &crate::report::scan::Baseline) -> String {
    let short = b.commit.get(..12).unwrap_or(&b.commit);
    let rev = if b.rev == b.commit {
        short.to_string()
    } else {
        format!("{} ({short})", b.rev)
    };
    format!(
        "Against {rev}: {} new, {} unchanged, {} fixed.",
        b.new, b.unchanged, b.absent
    )
}

/// `2 errors, 1 warning`.
fn severity_counts(findings: &Tally) -> String {
    let mut parts = Vec::new();
    for sev in [
        Severity::Error,
        Severity::Warning,
        Severity::Info,
        Severity::Hint,
    ] {
        let n = findings.count(sev);
        if n > 0 {
            parts.push(if matches!(sev, Severity::Info | Severity::Hint) {
                format!("{n} {}", sev.as_str())
            } else {
                plural(n, sev.as_str())
            });
        }
    }
    parts.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::ScanRule;
    use crate::scan::FindingFix;

    fn rule(id: &str, severity: Severity) -> ScanRule {
        ScanRule {
            id: id.into(),
            language: "python".into(),
            severity,
            fixable: id == "fixme",
            source: "astedit.toml".into(),
            message: format!("{id}: \"quoted\"\nsecond line"),
            note: Some("a note".into()),
            url: Some("https://example.com/r".into()),
        }
    }

    fn row(path: &str, line: usize, rule: &str, severity: Severity, text: &str) -> FindingRow {
        FindingRow {
            rule: rule.into(),
            severity,
            message: format!("{rule} at {line}: \"q\"\tand\nmore"),
            note: None,
            url: None,
            path: format!("../{path}"),
            line,
            column: 3,
            end_line: line + 1,
            end_column: 5,
            text: text.into(),
            fixable: rule == "fixme",
            metadata: (rule == "fixme").then(|| serde_json::json!({"cwe": [1, 2]})),
            repo_path: path.into(),
            fix: (rule == "fixme").then(|| FindingFix {
                start_line: line,
                start_column: 3,
                end_line: line + 1,
                end_column: 5,
                inserted: "new\ntext".into(),
            }),
            comments: Vec::new(),
            baseline: None,
            frame: None,
            ast_grep: None,
        }
    }

    /// Three files' findings, in path order: repeated texts (fingerprint occurrences),
    /// fixes, every severity, a path that needs quoting.
    fn files() -> Vec<Vec<FindingRow>> {
        vec![
            vec![
                row("a.py", 1, "fixme", Severity::Error, "x  = 1"),
                row("a.py", 4, "fixme", Severity::Error, "x = 1"),
                row("a.py", 9, "style", Severity::Warning, "y"),
            ],
            vec![row("b é.py", 2, "info", Severity::Info, "z\n  w")],
            vec![
                row("c/d.py", 1, "style", Severity::Hint, "y"),
                row("c/d.py", 1, "fixme", Severity::Error, "y"),
            ],
        ]
    }

    fn report(findings: Vec<FindingRow>, notices: Vec<String>) -> ScanReport {
        ScanReport {
            schema_version: crate::report::Version,
            mode: ScanMode::Report,
            rules: vec![
                rule("fixme", Severity::Error),
                rule("style", Severity::Warning),
                rule("info", Severity::Info),
            ],
            error_count: findings
                .iter()
                .filter(|f| f.severity == Severity::Error)
                .count(),
            findings,
            files_searched: 7,
            baseline: None,
            absent: None,
            remaining: None,
            summary: None,
            fixes: None,
            files: None,
            diff: None,
            unconverged: None,
            id: None,
            applied: None,
            verified: None,
            diagnostics: crate::report::Diagnostics {
                warnings: vec!["a warning".into()],
                ..Default::default()
            },
            notices,
            written: 0,
            offered: None,
            other_shards: 2,
            apply_index: false,
            fix_command: "git astedit scan --apply".into(),
            workdir: "/tmp/the repo".into(),
            streamed: None,
        }
    }

    /// `printed` as (stdout, the stderr pieces).
    fn split(printed: &[Printed]) -> (String, Vec<crate::render::printer::Piece>) {
        let out = printed.iter().map(Printed::stdout).collect();
        let err = printed
            .iter()
            .flat_map(|p| p.pieces.iter())
            .filter(|p| !matches!(p, crate::render::printer::Piece::Out(_)))
            .cloned()
            .collect();
        (out, err)
    }

    /// Printed file by file, then finished, a scan gives the bytes the whole report
    /// gives (stdout and stderr), in every streamed format, with no finding too.
    #[test]
    fn streamed_scan_prints_the_bytes_of_the_whole_report() {
        let notices = vec!["rule notice".to_string()];
        for files in [files(), Vec::new()] {
            let all: Vec<FindingRow> = files.iter().flatten().cloned().collect();
            let held = report(all.clone(), notices.clone());
            let mut head = report(Vec::new(), notices.clone());
            head.error_count = 0;
            head.streamed = Some(Tally::default());
            let mut done = report(Vec::new(), notices.clone());
            done.error_count = held.error_count;
            done.streamed = Some(Tally::of(&all));
            for format in [
                ScanFormat::Text(ReportStyle::Short),
                ScanFormat::Text(ReportStyle::Medium),
                ScanFormat::Github,
                ScanFormat::Json,
                ScanFormat::Sarif,
            ] {
                let style = Style::default();
                let whole = format.print(&held, &style).unwrap();
                let mut printer = ScanStream::new(format, style).unwrap();
                let mut parts: Vec<Printed> = files
                    .iter()
                    .map(|rows| printer.file(&head, rows).unwrap())
                    .collect();
                parts.push(printer.finish(&done).unwrap());
                assert_eq!(split(&parts), split(&[whole]), "{format:?}");
            }
        }
        assert!(ScanStream::new(ScanFormat::JsonPretty, Style::default()).is_none());
    }

    /// `--max-results`' notice, known only at the end, follows the rules' notices.
    #[test]
    fn a_late_notice_keeps_its_place_on_stderr() {
        let files = files();
        let all: Vec<FindingRow> = files.iter().flatten().cloned().collect();
        let notices = vec!["rule notice".to_string(), "3 more findings".to_string()];
        let held = report(all.clone(), notices.clone());
        let head = report(Vec::new(), notices[..1].to_vec());
        let mut done = report(Vec::new(), notices);
        done.streamed = Some(Tally::of(&all));
        let mut printer = ScanStream::new(ScanFormat::Sarif, Style::default()).unwrap();
        let mut parts: Vec<Printed> = files
            .iter()
            .map(|rows| printer.file(&head, rows).unwrap())
            .collect();
        parts.push(printer.finish(&done).unwrap());
        let whole = ScanFormat::Sarif.print(&held, &Style::default()).unwrap();
        assert_eq!(split(&parts), split(&[whole]));
    }
}
