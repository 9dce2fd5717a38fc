//! `grep` printed as it streams: [`GrepPrinter`] is chosen once per run (text or JSON,
//! as ripgrep's printers are) and fed one file's matches at a time by the search's
//! sink; [`TextReport`] for the report prints what follows the matches.

use std::fmt::Write as _;

use super::Format;
use super::Printed;
use super::Style;
use super::TextReport;
use crate::grep::context_groups;
use crate::grep::GrepFile;
use crate::grep::GroupLine;
use crate::grep::Lines;
use crate::report::ContextLine;
use crate::report::GrepMatch;
use crate::report::GrepReport;
use crate::report::MetaVariables;
use crate::report::SgCharCount;
use crate::report::SgMatch;
use crate::report::SgMetaVariables;
use crate::report::SgOffsets;
use crate::report::SgRange;
use crate::report::Span;
use crate::rewrite::MatchText;

/// The printer of a `grep` run.
pub enum GrepPrinter {
    /// Lines as each file's turn comes.
    Text(TextPrinter),
    /// The one JSON document, written as it goes: its head and each row as the rows
    /// come, the rest of the report at the end (so memory does not grow with the
    /// matches). `true` once the head is written.
    Json(bool),
    /// Rows kept (up to the cap) for one document printed at the end: `--json=pretty`,
    /// whose indentation only the whole report's printer knows.
    JsonKept(Vec<GrepMatch>),
    /// `--json=stream`: each match as ast-grep prints it, one object a line, at once.
    Stream,
    /// `--files-with-matches`: each matching file's path, once.
    Files(Style),
}

/// What a `grep` run prints (besides text or JSON, chosen by the run's format).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum GrepOutput {
    /// Matches (text lines, or rows of the one JSON report).
    #[default]
    Matches,
    /// ast-grep's `--json=stream`.
    Stream,
    /// Paths of the files with a match.
    Files,
    /// Matches as one JSON document printed whole at the end (`--json=pretty`).
    Document,
}

/// The JSON key the rows are written under (the report's field, in its order).
const MATCHES_KEY: &str = "\"matches\":[";

/// The text printer's state across files.
pub struct TextPrinter {
    style: Style,
    /// Each file's path on a line of its own above its matches (`--heading`), with an
    /// empty line after them, as ast-grep prints a heading; else on every line.
    heading: bool,
    /// `--` goes between groups, across files too (as ripgrep), so not before the first.
    any_group: bool,
}

impl GrepPrinter {
    pub fn new(format: Format, style: Style) -> GrepPrinter {
        GrepPrinter::with_output(format, style, GrepOutput::Matches)
    }

    /// The printer of `output` (`Stream` is JSON whatever `format` says).
    pub fn with_output(format: Format, style: Style, output: GrepOutput) -> GrepPrinter {
        match (output, format) {
            (GrepOutput::Stream, _) => GrepPrinter::Stream,
            (GrepOutput::Files, _) => GrepPrinter::Files(style),
            (GrepOutput::Matches | GrepOutput::Document, Format::Text) => {
                GrepPrinter::Text(TextPrinter {
                    style,
                    heading: false,
                    any_group: false,
                })
            }
            (GrepOutput::Matches, Format::Json) => GrepPrinter::Json(false),
            (GrepOutput::Document, Format::Json) => GrepPrinter::JsonKept(Vec::new()),
        }
    }

    /// The text printer with each file's path as a heading (`--heading`); other
    /// printers as they are.
    pub fn with_heading(mut self, heading: bool) -> GrepPrinter {
        if let GrepPrinter::Text(p) = &mut self {
            p.heading = heading;
        }
        self
    }

    /// What of each match this printer shows: the first line, or the whole text with
    /// the captures.
    pub fn match_text(&self) -> MatchText {
        match self {
            GrepPrinter::Text(_) | GrepPrinter::Files(_) => MatchText::FirstLine,
            GrepPrinter::Json(_) | GrepPrinter::JsonKept(_) | GrepPrinter::Stream => {
                MatchText::WithCaptures
            }
        }
    }

    /// How the search's workers encode each shown match for this printer, when it
    /// prints row by row (`--json`, `--json=stream`); then [`GrepPrinter::rows`]
    /// prints what they wrote.
    pub fn encoder(&self) -> Option<crate::ops::grep::EncodeRow> {
        match self {
            GrepPrinter::Json(_) => Some(json_row),
            GrepPrinter::Stream => Some(stream_line),
            _ => None,
        }
    }

    /// Writes one file's rows as [`GrepPrinter::encoder`] made them, with what goes
    /// between them (the JSON document's head before the first row), piece by piece
    /// to `write`: a file's rows are not copied into one more text.
    pub fn rows<E>(
        &mut self,
        rows: &[String],
        pattern: &str,
        mut write: impl FnMut(&str) -> Result<(), E>,
    ) -> Result<(), E> {
        for row in rows {
            match self {
                GrepPrinter::Json(started) if *started => write(",")?,
                GrepPrinter::Json(started) => {
                    *started = true;
                    write(&json_head(pattern))?;
                }
                _ => {}
            }
            write(row)?;
            if let GrepPrinter::Stream = self {
                write("\n")?;
            }
        }
        Ok(())
    }

    /// Whether files may be printed in completion order: JSON rows stay in path order
    /// (as the document lists them).
    pub fn streams(&self) -> bool {
        !matches!(self, GrepPrinter::Json(_) | GrepPrinter::JsonKept(_))
    }

    /// Whether the report follows the matches: not after ast-grep's stream (its
    /// readers take every line for a match).
    pub fn reports(&self) -> bool {
        !matches!(self, GrepPrinter::Stream)
    }

    /// One file's matches: the text to print now. For JSON, the document's head
    /// (`{"schema_version":…,"pattern":…,"matches":[`) before the first row, then the
    /// rows; `pattern` is the search's. Nothing for kept rows.
    pub fn file(&mut self, file: &GrepFile<'_>, pattern: &str) -> String {
        match self {
            GrepPrinter::Text(p) => p.file(file),
            GrepPrinter::Json(_) | GrepPrinter::Stream => {
                let rows: Vec<String> = match self.encoder() {
                    Some(encode) => file.matches.iter().map(|m| encode(file, m)).collect(),
                    None => Vec::new(),
                };
                let mut buf = String::new();
                let _ = self.rows(&rows, pattern, |s| {
                    buf.push_str(s);
                    Ok::<(), std::convert::Infallible>(())
                });
                buf
            }
            GrepPrinter::JsonKept(rows) => {
                rows.extend(rows_of(file));
                String::new()
            }
            GrepPrinter::Files(style) => format!("{}\n", style.quoting.quote(&file.path)),
        }
    }

    /// What to print at the end: for text, the report (its summary lines); for JSON
    /// whose rows were written already, the document's rest (`],"total":…}` and a
    /// newline); else the whole document, with the rows kept.
    pub fn finish(self, mut report: GrepReport) -> Finish {
        match self {
            GrepPrinter::Json(true) => {
                let whole = serde_json::to_string(&report).unwrap_or_default();
                match whole.find(MATCHES_KEY) {
                    // `"matches":[]` in the report: the rows went before it.
                    Some(at) => Finish::Rest(format!("{}\n", &whole[at + MATCHES_KEY.len()..])),
                    None => Finish::Report(report),
                }
            }
            GrepPrinter::JsonKept(rows) => {
                report.matches = rows;
                Finish::Report(report)
            }
            _ => Finish::Report(report),
        }
    }
}

/// What [`GrepPrinter::finish`] leaves to print.
pub enum Finish {
    /// The report, as any command's.
    Report(GrepReport),
    /// The rest of a JSON document whose head and rows are out.
    Rest(String),
}

/// `{"schema_version":…,"pattern":…,"matches":[`: the report's fields before the rows,
/// serialized as the whole report would be.
fn json_head(pattern: &str) -> String {
    let empty = GrepReport {
        schema_version: crate::report::Version,
        pattern: pattern.to_string(),
        matches: Vec::new(),
        total: 0,
        shown: 0,
        capped: false,
        files_searched: 0,
        files_matched: 0,
        diagnostics: Default::default(),
        max_count: 0,
    };
    let whole = serde_json::to_string(&empty).unwrap_or_default();
    match whole.find(MATCHES_KEY) {
        Some(at) => whole[..at + MATCHES_KEY.len()].to_string(),
        None => whole,
    }
}

/// One match as ast-grep's `--json=stream` prints it (the file's lines are kept).
pub fn sg_match(file: &GrepFile<'_>, m: &crate::rewrite::Match) -> SgMatch {
    let lines: Vec<&str> = (m.line..=m.end_line).map(|n| file.lines.get(n)).collect();
    let last = lines.last().copied().unwrap_or("");
    let span = crate::rewrite::Span {
        start_byte: m.start_byte,
        end_byte: m.end_byte,
        line: m.line,
        column: m.column,
        end_line: m.end_line,
        end_column: m.end_column,
        text: String::new(),
    };
    SgMatch {
        text: m.text.clone(),
        range: SgRange::of(&span),
        file: file.path.clone(),
        lines: lines.join("\n"),
        char_count: SgCharCount {
            leading: m.column.saturating_sub(1),
            trailing: last
                .chars()
                .count()
                .saturating_sub(m.end_column.saturating_sub(1)),
        },
        replacement: m.replacement.as_ref().map(|r| r.text.clone()),
        replacement_offsets: m.replacement.as_ref().map(|r| SgOffsets {
            start: r.start_byte,
            end: r.end_byte,
        }),
        language: file.lang.to_string(),
        meta_variables: SgMetaVariables::of(&m.captures),
    }
}

/// A file's matches as report rows, with their context lines when asked for.
pub fn rows_of<'a>(file: &'a GrepFile<'_>) -> impl Iterator<Item = GrepMatch> + 'a {
    file.matches.iter().map(move |m| row_of(file, m))
}

/// One match of a file as a report row.
fn row_of(file: &GrepFile<'_>, m: &crate::rewrite::Match) -> GrepMatch {
    let listed = |range: std::ops::RangeInclusive<usize>| {
        (!file.context.is_empty()).then(|| {
            range
                .map(|n| ContextLine {
                    line: n,
                    text: file.lines.get(n).to_string(),
                })
                .collect()
        })
    };
    let (before, after) = file.lines.around(m, file.context);
    GrepMatch {
        path: file.path.clone(),
        lang: file.lang.to_string(),
        span: Span::of(m, m.text.clone()),
        replaced: Span::replaced(m),
        meta_variables: MetaVariables::of(&m.captures),
        context_before: listed(before),
        context_after: listed(after),
    }
}

/// `--json`'s encoder: the report row.
fn json_row(file: &GrepFile<'_>, m: &crate::rewrite::Match) -> String {
    // A row of strings and numbers always serializes.
    serde_json::to_string(&row_of(file, m)).unwrap_or_default()
}

/// `--json=stream`'s encoder: ast-grep's object.
fn stream_line(file: &GrepFile<'_>, m: &crate::rewrite::Match) -> String {
    // Plain data with string keys: encoding cannot fail.
    serde_json::to_string(&sg_match(file, m)).unwrap_or_default()
}

impl TextPrinter {
    fn file(&mut self, file: &GrepFile<'_>) -> String {
        let color = self.style.color;
        let quoted = self.style.quoting.quote(&file.path);
        let mut buf = String::new();
        if self.heading {
            crate::diff::paint(&mut buf, color, crate::diff::style::FILENAME, &quoted);
            buf.push('\n');
            self.matches(file, "", &mut buf);
            buf.push('\n');
            // Headings part the files: `--` parts the groups of one file only.
            self.any_group = false;
        } else {
            self.matches(file, &quoted, &mut buf);
        }
        buf
    }

    /// The lines of `file`'s matches, each after `path` (none: after nothing).
    fn matches(&mut self, file: &GrepFile<'_>, path: &str, buf: &mut String) {
        let color = self.style.color;
        if !file.context.is_empty() {
            for group in context_groups(file.matches, &file.lines, file.context) {
                if self.any_group {
                    buf.push_str("--\n");
                }
                self.any_group = true;
                for l in group {
                    write_group_line(buf, path, &file.lines, l, color);
                }
            }
            return;
        }
        if !color && !path.is_empty() {
            // Plain `path:line:col: text` lines, written without the formatting
            // machinery: half a million matches made it a tenth of a no-literal
            // search's instructions above the parse.
            for m in file.matches {
                buf.push_str(path);
                buf.push(':');
                push_number(buf, m.line);
                buf.push(':');
                push_number(buf, m.column);
                buf.push_str(": ");
                buf.push_str(&m.text);
                if m.end_line > m.line {
                    buf.push('…');
                }
                buf.push('\n');
            }
            return;
        }
        for m in file.matches {
            // The text is written in place, with `…` when the match spans more lines.
            let more = if m.end_line > m.line { "…" } else { "" };
            write_located(
                buf,
                (path, ':', m.line, ":"),
                format_args!("{}: {}{more}", m.column, m.text),
                color,
            );
        }
    }
}

/// Appends `n` in decimal, as `{n}` writes it.
fn push_number(buf: &mut String, mut n: usize) {
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    loop {
        at -= 1;
        digits[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    // Only ASCII digits were written.
    buf.push_str(std::str::from_utf8(&digits[at..]).unwrap_or_default());
}

/// One line of a context group: `path:line:col: text` for a match (its first line),
/// `path:line: text` for a later line of a multi-line match, `path-line-text` around.
fn write_group_line(
    buf: &mut String,
    path: &str,
    lines: &Lines<'_>,
    l: GroupLine<'_>,
    color: bool,
) {
    match l {
        GroupLine::MatchStart(m) => write_located(
            buf,
            (path, ':', m.line, ":"),
            format_args!("{}: {}", m.column, m.text),
            color,
        ),
        GroupLine::MatchContinued(n) => write_located(
            buf,
            (path, ':', n, ":"),
            format_args!(" {}", lines.get(n)),
            color,
        ),
        GroupLine::Context(n) => write_located(
            buf,
            (path, '-', n, "-"),
            format_args!("{}", lines.get(n)),
            color,
        ),
    }
}

/// `path{sep}line{after}rest` and a newline, the path and line number coloured as
/// git's `color.grep.filename` and `color.grep.linenumber`; under a heading (no path)
/// `line{after}rest`.
fn write_located(
    buf: &mut String,
    (path, sep, line, after): (&str, char, usize, &str),
    rest: std::fmt::Arguments<'_>,
    color: bool,
) {
    if path.is_empty() {
        let num = crate::diff::style::LINE_NUMBER;
        let number = line.to_string();
        crate::diff::paint(buf, color, num, &number);
        let _ = writeln!(buf, "{after}{rest}");
        return;
    }
    // Writes to a String cannot fail.
    let _ = if color {
        let (file, num) = (
            crate::diff::style::FILENAME,
            crate::diff::style::LINE_NUMBER,
        );
        writeln!(
            buf,
            "{}{path}{}{sep}{}{line}{}{after}{rest}",
            file.render(),
            file.render_reset(),
            num.render(),
            num.render_reset()
        )
    } else {
        writeln!(buf, "{path}{sep}{line}{after}{rest}")
    };
}

/// What follows the streamed matches: where the list stopped, and the warnings.
impl TextReport for GrepReport {
    fn text(&self, _style: &Style) -> Printed {
        let mut printed = Printed::new();
        if self.capped {
            // On stderr: a pipe's reader counts lines, and this one is no match.
            printed.note(format!(
                "… stopped at {} of {} matches (--max-count {}); narrow the search or raise the limit\n",
                self.shown, self.total, self.max_count
            ));
        }
        printed.warn_all(&self.diagnostics.warnings);
        printed
    }
}
