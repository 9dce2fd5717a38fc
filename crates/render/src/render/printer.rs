//! The printer a front end chooses once per run, and what a report's text is made of.
//!
//! A report is printed as JSON (one document, `serde`) or as text through
//! [`TextReport`]. Text is a sequence of [`Piece`]s in the order a person should read
//! them: result text for stdout, warnings and notes for stderr. Keeping the order in
//! one value lets a pager that shows both streams interleave them as they were meant.

use crate::text::Quoting;

/// How results are printed, decided once per run from the flags.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Format {
    /// Text for people: results on stdout, warnings and notes on stderr.
    #[default]
    Text,
    /// One JSON document on stdout.
    Json,
}

/// What text printers need to know of the run: colour, and how the repository quotes
/// paths (`core.quotePath`, a plain value).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Style {
    pub color: bool,
    pub quoting: Quoting,
}

/// One part of a printed report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Piece {
    /// Result text for stdout, written as is (it carries its own newlines).
    Out(String),
    /// A warning line for stderr (printed after `warning: `).
    Warn(String),
    /// A line of status for stderr, printed as is.
    Note(String),
}

/// A report's text, in reading order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Printed {
    pub pieces: Vec<Piece>,
}

impl Printed {
    pub fn new() -> Printed {
        Printed::default()
    }
    /// Appends result text (stdout).
    pub fn out(&mut self, text: impl Into<String>) -> &mut Self {
        let text = text.into();
        if !text.is_empty() {
            match self.pieces.last_mut() {
                // Adjacent result text is one write.
                Some(Piece::Out(prev)) => prev.push_str(&text),
                _ => self.pieces.push(Piece::Out(text)),
            }
        }
        self
    }
    /// Appends a warning (stderr).
    pub fn warn(&mut self, line: impl Into<String>) -> &mut Self {
        self.pieces.push(Piece::Warn(line.into()));
        self
    }
    /// Appends each of `lines` as a warning.
    pub fn warn_all<'a>(&mut self, lines: impl IntoIterator<Item = &'a String>) -> &mut Self {
        for line in lines {
            self.warn(line.clone());
        }
        self
    }
    /// Appends a status line (stderr).
    pub fn note(&mut self, line: impl Into<String>) -> &mut Self {
        self.pieces.push(Piece::Note(line.into()));
        self
    }
    /// The result text alone (stdout), for a caller that shows no stderr (tests, the
    /// server's text block).
    pub fn stdout(&self) -> String {
        self.pieces
            .iter()
            .filter_map(|p| match p {
                Piece::Out(t) => Some(t.as_str()),
                _ => None,
            })
            .collect()
    }
}

/// A report a person can read: its text under `style`.
pub trait TextReport {
    fn text(&self, style: &Style) -> Printed;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adjacent_result_text_is_one_piece_and_order_is_kept() {
        let mut p = Printed::new();
        p.out("a\n")
            .out("b\n")
            .warn("w")
            .out("")
            .note("n")
            .out("c\n");
        assert_eq!(
            p.pieces,
            vec![
                Piece::Out("a\nb\n".into()),
                Piece::Warn("w".into()),
                Piece::Note("n".into()),
                Piece::Out("c\n".into()),
            ]
        );
        assert_eq!(p.stdout(), "a\nb\nc\n");
    }
}
