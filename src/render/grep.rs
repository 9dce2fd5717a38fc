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
use crate::report::SgRange;
use crate::report::Span;
use crate::rewrite::MatchText;

/// The printer of a `grep` run.
pub enum GrepPrinter {
    /// Lines as each file's turn comes.
    Text(TextPrinter),
    /// Rows kept (up to the cap) for the one JSON document at the end.
    Json(Vec<GrepMatch>),
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
}

/// The text printer's state across files.
pub struct TextPrinter {
    style: Style,
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
            (GrepOutput::Matches, Format::Text) => GrepPrinter::Text(TextPrinter {
                style,
                any_group: false,
            }),
            (GrepOutput::Matches, Format::Json) => GrepPrinter::Json(Vec::new()),
        }
    }

    /// What of each match this printer shows: the first line, or the whole text with
    /// the captures.
    pub fn match_text(&self) -> MatchText {
        match self {
            GrepPrinter::Text(_) | GrepPrinter::Files(_) => MatchText::FirstLine,
            GrepPrinter::Json(_) | GrepPrinter::Stream => MatchText::WithCaptures,
        }
    }

    /// Whether files may be printed in completion order: JSON is one object at the
    /// end, so it has nothing to gain from it.
    pub fn streams(&self) -> bool {
        !matches!(self, GrepPrinter::Json(_))
    }

    /// Whether the report follows the matches: not after ast-grep's stream (its
    /// readers take every line for a match).
    pub fn reports(&self) -> bool {
        !matches!(self, GrepPrinter::Stream)
    }

    /// One file's matches: the text to print now (empty for JSON, which keeps rows).
    pub fn file(&mut self, file: &GrepFile<'_>) -> String {
        match self {
            GrepPrinter::Text(p) => p.file(file),
            GrepPrinter::Json(rows) => {
                rows.extend(rows_of(file));
                String::new()
            }
            GrepPrinter::Stream => {
                let mut buf = String::new();
                for m in file.matches {
                    // Plain data with string keys: encoding cannot fail.
                    if let Ok(line) = serde_json::to_string(&sg_match(file, m)) {
                        buf.push_str(&line);
                        buf.push('\n');
                    }
                }
                buf
            }
            GrepPrinter::Files(style) => format!("{}\n", style.quoting.quote(&file.path)),
        }
    }

    /// The report with the rows kept, to print at the end.
    pub fn finish(self, mut report: GrepReport) -> GrepReport {
        if let GrepPrinter::Json(rows) = self {
            report.matches = rows;
        }
        report
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
        language: file.lang.to_string(),
        meta_variables: SgMetaVariables::of(&m.captures),
    }
}

/// A file's matches as report rows, with their context lines when asked for.
pub fn rows_of<'a>(file: &'a GrepFile<'_>) -> impl Iterator<Item = GrepMatch> + 'a {
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
    file.matches.iter().map(move |m| {
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
    })
}

impl TextPrinter {
    fn file(&mut self, file: &GrepFile<'_>) -> String {
        let color = self.style.color;
        let path = self.style.quoting.quote(&file.path);
        let mut buf = String::new();
        if !file.context.is_empty() {
            for group in context_groups(file.matches, &file.lines, file.context) {
                if self.any_group {
                    buf.push_str("--\n");
                }
                self.any_group = true;
                for l in group {
                    write_group_line(&mut buf, &path, &file.lines, l, color);
                }
            }
            return buf;
        }
        for m in file.matches {
            // The text is written in place, with `…` when the match spans more lines.
            let more = if m.end_line > m.line { "…" } else { "" };
            write_located(
                &mut buf,
                (&path, ':', m.line, ":"),
                format_args!("{}: {}{more}", m.column, m.text),
                color,
            );
        }
        buf
    }
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
/// git's `color.grep.filename` and `color.grep.linenumber`.
fn write_located(
    buf: &mut String,
    (path, sep, line, after): (&str, char, usize, &str),
    rest: std::fmt::Arguments<'_>,
    color: bool,
) {
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
            printed.out(format!(
                "… stopped at {} of {} matches (--max-count {}); narrow the search or raise the limit\n",
                self.shown, self.total, self.max_count
            ));
        }
        printed.warn_all(&self.diagnostics.warnings);
        printed
    }
}
