//! Output streams. stdout carries the result; stderr carries warnings and chatter.
//! Colour is decided once per run (see [`super::color`]); with a pager (see
//! [`super::pager`]) stdout is the pager's input, and so is stderr when it is a
//! terminal, as in git; a progress bar (see [`super::progress`]) is hidden while a line
//! is written.
//!
//! Every write to stdout is checked: a failed write is an [`OutputError`], and a closed
//! pipe ([`OutputError::Closed`], e.g. `git astedit grep … | head -1`) ends the run
//! quietly, the way ripgrep and git do. Writes to stderr are best effort: it is the
//! channel errors would be reported on, so there is nowhere left to report its own
//! failure (see [`Out::note`]).

use std::io::IsTerminal;
use std::io::Write;

use git_astedit::error::Classify;
use git_astedit::error::Exit;
use git_astedit::render::printer::Piece;
use git_astedit::render::Format;
use git_astedit::render::Printed;
use git_astedit::render::Style;
use git_astedit::render::TextReport;
use git_astedit::text::Quoting;
use serde::Serialize;

/// A write to standard output failed.
#[derive(Debug, thiserror::Error)]
pub enum OutputError {
    /// The reader went away (EPIPE): not a failure of ours, nothing to say.
    #[error("standard output was closed")]
    Closed,
    #[error("cannot write to standard output")]
    Write(#[source] std::io::Error),
    #[error("cannot encode the JSON result")]
    Encode(#[source] serde_json::Error),
}

impl From<std::io::Error> for OutputError {
    fn from(e: std::io::Error) -> Self {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            OutputError::Closed
        } else {
            OutputError::Write(e)
        }
    }
}

impl Classify for OutputError {
    fn code(&self) -> &'static str {
        match self {
            OutputError::Closed => "output-closed",
            OutputError::Write(_) | OutputError::Encode(_) => "output",
        }
    }
    fn exit(&self) -> Exit {
        match self {
            // As ripgrep does: the reader had what it wanted.
            OutputError::Closed => Exit::Ok,
            _ => Exit::Internal,
        }
    }
}

pub struct Out {
    stdout: std::io::BufWriter<Box<dyn Write>>,
    /// Notes go to the pager too (stderr was a terminal when it started).
    notes_to_stdout: bool,
    stderr: std::io::Stderr,
    color: bool,
    /// The printer, chosen once per run (`--json` or text).
    format: Format,
    /// How text quotes paths: the repository's `core.quotePath` once it is open.
    quoting: Quoting,
    pager: Option<super::pager::Pager>,
    progress: Option<super::progress::Bar>,
    /// `--json=pretty`: JSON documents indented.
    pretty: bool,
}

impl Out {
    /// Plain output: no colour, no pager (see [`Out::set_color`], [`Out::page`]).
    pub fn new() -> Out {
        Out {
            stdout: std::io::BufWriter::new(Box::new(std::io::stdout())),
            notes_to_stdout: false,
            stderr: std::io::stderr(),
            color: false,
            format: Format::Text,
            quoting: Quoting::default(),
            pager: None,
            progress: None,
            pretty: false,
        }
    }
    /// Whether stdout gets colour.
    pub fn color(&self) -> bool {
        self.color
    }
    pub fn set_color(&mut self, color: bool) {
        self.color = color;
    }
    /// Chooses the printer for the run.
    pub fn set_format(&mut self, format: Format) {
        self.format = format;
    }
    /// Indents JSON documents (`--json=pretty`).
    pub fn set_pretty(&mut self, pretty: bool) {
        self.pretty = pretty;
    }
    pub fn pretty(&self) -> bool {
        self.pretty
    }
    /// The printer chosen for the run (for a command that prints as it goes).
    pub fn format(&self) -> Format {
        self.format
    }
    /// How text quotes paths, once the repository is known.
    pub fn set_quoting(&mut self, quoting: Quoting) {
        self.quoting = quoting;
    }
    /// What text printers are given: colour and path quoting.
    pub fn style(&self) -> Style {
        Style {
            color: self.color,
            quoting: self.quoting,
        }
    }
    /// Prints `report` with the run's printer: one JSON document, or its text.
    pub fn emit<R: Serialize + TextReport>(&mut self, report: &R) -> Result<(), OutputError> {
        match self.format {
            Format::Json => self.json(report),
            Format::Text => {
                let printed = report.text(&self.style());
                self.printed(&printed)
            }
        }
    }
    /// Writes text made by a printer: result text on stdout, warnings and notes on
    /// stderr, in order.
    pub fn printed(&mut self, printed: &Printed) -> Result<(), OutputError> {
        for piece in &printed.pieces {
            match piece {
                Piece::Out(text) => self.print(text)?,
                Piece::Warn(line) => self.warn(line),
                Piece::Note(line) => self.note(line),
            }
        }
        Ok(())
    }
    /// Whether a person reads stdout: a terminal, or a pager (ours or git's).
    pub fn terminal(&self) -> bool {
        self.paging() || super::color::git_pager_in_use() || std::io::stdout().is_terminal()
    }
    /// Whether a pager reads stdout.
    pub fn paging(&self) -> bool {
        self.pager.is_some()
    }
    /// Sends stdout (and stderr, when it is a terminal, as git does) into `program`.
    /// Nothing changes when it cannot be started.
    pub fn page(&mut self, program: &str) {
        if let Some((pager, input)) = super::pager::Pager::spawn(program) {
            let _ = self.stdout.flush();
            self.stdout = std::io::BufWriter::new(Box::new(input));
            self.notes_to_stdout = std::io::stderr().is_terminal();
            self.pager = Some(pager);
        }
    }
    /// Ends the run's output: flushes it, closes the pager's input and waits for the
    /// user to leave the pager. Failures are past reporting (the reader is gone).
    pub fn finish(&mut self) {
        self.end_progress();
        let _ = self.stdout.flush();
        if let Some(pager) = self.pager.take() {
            // Dropping the pipe's end is what tells the pager the input ended.
            pager.input_closing();
            self.stdout = std::io::BufWriter::new(Box::new(std::io::sink()));
            pager.wait();
        }
    }
    /// Shows `bar` on stderr until the next [`Out::end_progress`]; lines written
    /// meanwhile hide it while they are written.
    pub fn start_progress(&mut self, bar: super::progress::Bar) {
        self.progress = Some(bar);
    }
    /// Clears the progress bar, if any.
    pub fn end_progress(&mut self) {
        if let Some(bar) = self.progress.take() {
            bar.clear();
        }
    }
    /// Writes result text to stdout.
    pub fn print(&mut self, text: &str) -> Result<(), OutputError> {
        if let Some(bar) = self.progress.as_ref().filter(|b| b.visible()) {
            // A line written under a drawn bar on the same terminal: clear the bar,
            // write the line out, draw the bar again below it.
            let stdout = &mut self.stdout;
            bar.suspend(|| {
                stdout
                    .write_all(text.as_bytes())
                    .and_then(|()| stdout.flush())
            })?;
            return Ok(());
        }
        self.stdout.write_all(text.as_bytes())?;
        Ok(())
    }
    /// Writes one JSON document (one line) to stdout.
    pub fn json(&mut self, value: &impl Serialize) -> Result<(), OutputError> {
        let written = if self.pretty {
            serde_json::to_writer_pretty(&mut self.stdout, value)
        } else {
            serde_json::to_writer(&mut self.stdout, value)
        };
        written.map_err(|e| match e.io_error_kind() {
            Some(_) => OutputError::from(std::io::Error::from(e)),
            None => OutputError::Encode(e),
        })?;
        self.stdout.write_all(b"\n")?;
        Ok(())
    }
    pub fn flush(&mut self) -> Result<(), OutputError> {
        self.stdout.flush()?;
        Ok(())
    }
    /// Prints a line on stderr (status, progress), after what stdout holds so far.
    pub fn note(&mut self, line: &str) {
        // The result stays in order with the notes on a shared terminal. Neither write
        // can be reported if it fails: a closed stdout surfaces at the next print, and
        // stderr is where a report would go.
        if self.notes_to_stdout {
            // Into the pager, in order with the result, as git sends its stderr there.
            let _ = writeln!(self.stdout, "{line}");
            return;
        }
        let _ = self.stdout.flush();
        let stderr = &mut self.stderr;
        let _ = match self.progress.as_ref() {
            Some(bar) => bar.suspend(|| writeln!(stderr, "{line}")),
            None => writeln!(stderr, "{line}"),
        };
    }
    /// Prints a warning line on stderr.
    pub fn warn(&mut self, msg: &str) {
        self.note(&format!("warning: {msg}"));
    }
}
