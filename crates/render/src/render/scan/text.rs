/*!
`scan` as text, in ast-grep's three report styles (`--report-style`), laid out as
ast-grep 0.51.1 lays them out:

* `short`: one line a finding, `path:line:col: severity[rule-id]: message`;
* `medium`: that line and the rule's note under it;
* `rich`: a code frame around each finding with the match underlined and its labels
  (drawn by the renderer ast-grep draws with), then the note; a finding of a rule with
  a fix shows the fix as a diff instead.

Severities are named as ast-grep names them in text: `error`, `warning`, `note` (info)
and `help` (hint). In the fix modes the diff of the fixes comes first, then the
findings they leave. A finding without its source at hand (read after the scan, see
[`Frame`]) is printed `medium` in a rich report.
*/

use std::fmt::Write;

use codespan_reporting::diagnostic::Diagnostic;
use codespan_reporting::diagnostic::Label;
use codespan_reporting::diagnostic::LabelStyle;
use codespan_reporting::files::Files;
use codespan_reporting::term;

use super::super::Printed;
use super::super::Style;
use super::note;
use crate::levels::Severity;
use crate::report::scan::Frame;
use crate::report::FindingRow;
use crate::report::ScanReport;

/// How findings are printed as text: ast-grep's `--report-style`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ReportStyle {
    /// A code frame around each finding, its labels, the note; a fix as a diff.
    Rich,
    /// One line a finding and the rule's note.
    Medium,
    /// One line a finding.
    #[default]
    Short,
}

/// The result text (stdout) of a scan.
pub fn body(report: &ScanReport, style: &Style, report_style: ReportStyle, printed: &mut Printed) {
    let mut text = String::new();
    if report.mode.fixing() {
        // After `-i` every accepted fix has been shown already.
        if !report.no_fixes() && report.offered.is_none() {
            text.push_str(report.diff.as_deref().unwrap_or_default());
            text.push('\n');
        }
    }
    text.push_str(&findings(report.open_findings(), style, report_style));
    printed.out(text);
}

/// The findings in `report_style`, their paths as the front end shows paths.
pub fn findings<'a>(
    findings: impl IntoIterator<Item = &'a FindingRow>,
    style: &Style,
    report_style: ReportStyle,
) -> String {
    let mut out = String::new();
    for f in findings {
        match (report_style, &f.frame) {
            (ReportStyle::Short, _) => short(&mut out, f, style),
            (ReportStyle::Rich, Some(frame)) => rich(&mut out, f, frame, style),
            // No source at hand (rich): the place alone.
            (ReportStyle::Medium | ReportStyle::Rich, _) => medium(&mut out, f, style),
        }
    }
    out
}

/// The name ast-grep's text gives a severity.
fn level(severity: Severity) -> &'static str {
    match severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Info => "note",
        Severity::Hint => "help",
    }
}

fn codespan_severity(severity: Severity) -> codespan_reporting::diagnostic::Severity {
    use codespan_reporting::diagnostic::Severity as S;
    match severity {
        Severity::Error => S::Error,
        Severity::Warning => S::Warning,
        Severity::Info => S::Note,
        Severity::Hint => S::Help,
    }
}

/// Where the one-line forms place a finding: where it starts, or for a rule without
/// a fix whose frame is at hand, at each of its primary labels (as ast-grep's, whose
/// rule `labels` may underline a part of the match; none: a line without a place).
fn loci(f: &FindingRow) -> Vec<(usize, usize)> {
    match &f.frame {
        Some(frame) if !f.fixable => frame
            .labels
            .iter()
            .filter(|l| l.primary)
            .map(|l| frame.position(l.range.start))
            .collect(),
        _ => vec![(f.line, f.column)],
    }
}

/// The one-line form: `path:line:col: severity[rule-id]: message` (a line a place).
fn one_line(out: &mut String, f: &FindingRow, message: &str, style: &Style) {
    let loci = loci(f);
    if loci.is_empty() {
        title(out, f, message, style);
    }
    for (line, column) in loci {
        let _ = write!(out, "{}:{line}:{column}: ", style.quoting.quote(&f.path));
        title(out, f, message, style);
    }
}

/// `severity[rule-id]: message` and a newline, coloured as ast-grep colours it.
fn title(out: &mut String, f: &FindingRow, message: &str, style: &Style) {
    let head = format!("{}[{}]:", level(f.severity), f.rule);
    paint(out, style.color, colours::title(f.severity), &head);
    out.push(' ');
    paint(out, style.color, colours::MESSAGE, message);
    out.push('\n');
}

fn short(out: &mut String, f: &FindingRow, style: &Style) {
    one_line(out, f, &crate::text::one_line(&f.message), style);
}

fn medium(out: &mut String, f: &FindingRow, style: &Style) {
    one_line(out, f, &f.message, style);
    let Some(text) = f.note.as_deref().map(note::plain) else {
        return;
    };
    if f.fixable {
        note_block(out, &text, style);
        return;
    }
    for (i, line) in text.lines().enumerate() {
        let bullet = if i == 0 { "=" } else { " " };
        out.push(' ');
        paint(out, style.color, colours::GUTTER, bullet);
        let _ = writeln!(out, " {line}");
    }
}

/// `Note:` and the note, after a fix's diff (and in `medium`, its title).
fn note_block(out: &mut String, text: &str, style: &Style) {
    paint(out, style.color, colours::NOTE, "Note:");
    out.push('\n');
    out.push_str(text);
    out.push('\n');
}

fn rich(out: &mut String, f: &FindingRow, frame: &Frame, style: &Style) {
    if let (true, Some(fix)) = (f.fixable, &frame.fix) {
        paint(
            out,
            style.color,
            colours::PATH,
            &style.quoting.quote(&f.path),
        );
        out.push('\n');
        title(out, f, &f.message, style);
        let mut after = frame.text.clone();
        after.replace_range(fix.0.clone(), &fix.1);
        diff(out, &frame.text, &after, frame.first_line, style.color);
        if let Some(note) = &f.note {
            note_block(out, &note::plain(note), style);
        }
        return;
    }
    let excerpt = Excerpt::new(style.quoting.quote(&f.path).into_owned(), frame);
    let labels = frame
        .labels
        .iter()
        .map(|l| {
            let style = match l.primary {
                true => LabelStyle::Primary,
                false => LabelStyle::Secondary,
            };
            let label = Label::new(style, (), l.range.clone());
            match &l.message {
                Some(m) => label.with_message(m),
                None => label,
            }
        })
        .collect();
    let diagnostic = Diagnostic::new(codespan_severity(f.severity))
        .with_code(&f.rule)
        .with_message(&f.message)
        .with_notes(f.note.iter().map(|n| note::plain(n)).collect())
        .with_labels(labels);
    // ast-grep's frame: no lines of context around a label.
    let config = term::Config {
        start_context_lines: 0,
        end_context_lines: 0,
        ..term::Config::default()
    };
    let mut painter = Painter {
        out: Vec::new(),
        color: style.color,
    };
    match term::emit_to_write_style(&mut painter, &config, &excerpt, &diagnostic) {
        Ok(()) => out.push_str(&String::from_utf8_lossy(&painter.out)),
        // A frame that does not hold its labels' lines (never made so).
        Err(_) => medium(out, f, style),
    }
}

/// The diff of one fix as ast-grep prints it: hunks of three lines of context under
/// `@@ -START,LEN +START,LEN @@` (0-based starts, as ast-grep writes them), each
/// line as `OLD NEW│±text` with the old and new line numbers.
fn diff(out: &mut String, before: &str, after: &str, first_line: usize, color: bool) {
    use similar::ChangeTag;
    let offset = first_line - 1;
    let lines = similar::TextDiff::from_lines(before, after);
    for group in lines.grouped_ops(3) {
        let (Some(first), Some(last)) = (group.first(), group.last()) else {
            continue;
        };
        let width = |end: usize| (end + offset).checked_ilog10().unwrap_or(0) as usize + 1;
        let old_width = width(last.old_range().end);
        let new_width = width(last.new_range().end);
        let (old_len, new_len) = group.iter().fold((0, 0), |(o, n), op| {
            (o + op.old_range().len(), n + op.new_range().len())
        });
        let header = format!(
            "@@ -{},{old_len} +{},{new_len} @@",
            first.old_range().start + offset,
            first.new_range().start + offset
        );
        paint(out, color, colours::HUNK, &header);
        out.push('\n');
        for op in &group {
            for change in lines.iter_inline_changes(op) {
                let (sign, text_style, number_style) = match change.tag() {
                    ChangeTag::Delete => ("-", colours::DELETE, colours::DELETE),
                    ChangeTag::Insert => ("+", colours::INSERT, colours::INSERT),
                    ChangeTag::Equal => (" ", anstyle::Style::new(), colours::LINE_NUMBER),
                };
                let number = |index: Option<usize>, width: usize| match index {
                    Some(i) => format!("{:<width$}", i + offset + 1),
                    None => " ".repeat(width),
                };
                paint(
                    out,
                    color,
                    number_style,
                    &number(change.old_index(), old_width),
                );
                out.push(' ');
                paint(
                    out,
                    color,
                    number_style,
                    &number(change.new_index(), new_width),
                );
                out.push('│');
                paint(out, color, text_style, sign);
                for (emphasized, value) in change.iter_strings_lossy() {
                    let s = match emphasized {
                        true => colours::emphasis(text_style),
                        false => text_style,
                    };
                    paint(out, color, s, &value);
                }
                if change.missing_newline() {
                    out.push('\n');
                }
            }
        }
    }
}

/// Appends `text` in `style` when `color` is on (line by line, see
/// [`crate::diff::paint`]).
fn paint(out: &mut String, color: bool, style: anstyle::Style, text: &str) {
    crate::diff::paint(out, color, style, text);
}

/// ast-grep's colours for what it prints itself (the code frame's are the
/// renderer's, in [`Painter`]).
mod colours {
    use anstyle::AnsiColor;
    use anstyle::Style;

    pub const MESSAGE: Style = Style::new().bold();
    pub const NOTE: Style = Style::new().italic();
    pub const PATH: Style = AnsiColor::Cyan.on_default().italic();
    pub const HUNK: Style = AnsiColor::Blue.on_default();
    pub const LINE_NUMBER: Style = Style::new().dimmed();
    pub const DELETE: Style =
        Style::new().fg_color(Some(anstyle::Color::Ansi256(anstyle::Ansi256Color(161))));
    pub const INSERT: Style =
        Style::new().fg_color(Some(anstyle::Color::Ansi256(anstyle::Ansi256Color(35))));
    /// Where the replacing code frame's gutter is drawn.
    pub const GUTTER: Style = AnsiColor::Cyan.on_default();

    pub fn title(severity: crate::levels::Severity) -> Style {
        use crate::levels::Severity as S;
        match severity {
            S::Error => AnsiColor::Red.on_default().bold(),
            S::Warning => AnsiColor::Yellow.on_default().bold(),
            S::Info => Style::new().bold(),
            S::Hint => Style::new().dimmed().bold(),
        }
    }

    /// The changed words of a changed line: on a light background, bold.
    pub fn emphasis(base: Style) -> Style {
        let background = match base == DELETE {
            true => 225,
            false => 158,
        };
        base.bg_color(Some(anstyle::Color::Ansi256(anstyle::Ansi256Color(
            background,
        ))))
        .bold()
    }
}

/// The renderer's output, coloured with the renderer's default colours.
struct Painter {
    out: Vec<u8>,
    color: bool,
}

impl Painter {
    fn set(&mut self, style: anstyle::Style) -> std::io::Result<()> {
        if self.color {
            std::io::Write::write_fmt(
                &mut self.out,
                format_args!("{}{}", anstyle::Reset.render(), style.render()),
            )?;
        }
        Ok(())
    }
}

impl std::io::Write for Painter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.out.extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl term::WriteStyle for Painter {
    fn set_header(
        &mut self,
        severity: codespan_reporting::diagnostic::Severity,
    ) -> std::io::Result<()> {
        use anstyle::AnsiColor as C;
        use codespan_reporting::diagnostic::Severity as S;
        let colour = match severity {
            S::Bug | S::Error => C::BrightRed,
            S::Warning => C::BrightYellow,
            S::Note => C::BrightGreen,
            S::Help => C::BrightCyan,
        };
        self.set(colour.on_default().bold())
    }
    fn set_header_message(&mut self) -> std::io::Result<()> {
        self.set(anstyle::Style::new().bold())
    }
    fn set_line_number(&mut self) -> std::io::Result<()> {
        self.set(colours::GUTTER)
    }
    fn set_note_bullet(&mut self) -> std::io::Result<()> {
        self.set(colours::GUTTER)
    }
    fn set_source_border(&mut self) -> std::io::Result<()> {
        self.set(colours::GUTTER)
    }
    fn set_label(
        &mut self,
        severity: codespan_reporting::diagnostic::Severity,
        label_style: LabelStyle,
    ) -> std::io::Result<()> {
        use anstyle::AnsiColor as C;
        use codespan_reporting::diagnostic::Severity as S;
        let colour = match (label_style, severity) {
            (LabelStyle::Secondary, _) => C::Cyan,
            (_, S::Bug | S::Error) => C::Red,
            (_, S::Warning) => C::Yellow,
            (_, S::Note) => C::Green,
            (_, S::Help) => C::Cyan,
        };
        self.set(colour.on_default())
    }
    fn reset(&mut self) -> std::io::Result<()> {
        if self.color {
            std::io::Write::write_fmt(&mut self.out, format_args!("{}", anstyle::Reset.render()))?;
        }
        Ok(())
    }
}

/// A frame's lines as the renderer's file: line numbers are the file's, from the
/// frame's first line.
struct Excerpt<'a> {
    name: String,
    text: &'a str,
    /// Where each line starts; the text's length ends the last.
    starts: Vec<usize>,
    first_line: usize,
}

impl<'a> Excerpt<'a> {
    fn new(name: String, frame: &'a Frame) -> Excerpt<'a> {
        let text = frame.text.as_str();
        let mut starts = vec![0];
        starts.extend(memchr::memchr_iter(b'\n', text.as_bytes()).map(|i| i + 1));
        Excerpt {
            name,
            text,
            starts,
            first_line: frame.first_line,
        }
    }

    fn start(&self, line_index: usize) -> Result<usize, codespan_reporting::files::Error> {
        use std::cmp::Ordering;
        match line_index.cmp(&self.starts.len()) {
            Ordering::Less => Ok(self.starts[line_index]),
            Ordering::Equal => Ok(self.text.len()),
            Ordering::Greater => Err(codespan_reporting::files::Error::LineTooLarge {
                given: line_index,
                max: self.starts.len() - 1,
            }),
        }
    }
}

impl<'a> Files<'a> for Excerpt<'_> {
    type FileId = ();
    type Name = &'a str;
    type Source = &'a str;

    fn name(&'a self, (): ()) -> Result<&'a str, codespan_reporting::files::Error> {
        Ok(&self.name)
    }
    fn source(&'a self, (): ()) -> Result<&'a str, codespan_reporting::files::Error> {
        Ok(self.text)
    }
    fn line_index(
        &'a self,
        (): (),
        byte: usize,
    ) -> Result<usize, codespan_reporting::files::Error> {
        Ok(self
            .starts
            .partition_point(|&s| s <= byte)
            .saturating_sub(1))
    }
    fn line_number(
        &'a self,
        (): (),
        line_index: usize,
    ) -> Result<usize, codespan_reporting::files::Error> {
        Ok(line_index + self.first_line)
    }
    fn line_range(
        &'a self,
        (): (),
        line_index: usize,
    ) -> Result<std::ops::Range<usize>, codespan_reporting::files::Error> {
        Ok(self.start(line_index)?..self.start(line_index + 1)?)
    }
}
