//! Output streams. stdout carries the result; stderr carries warnings and chatter.
//! Colour is on only for a terminal without `NO_COLOR` (or with `CLICOLOR_FORCE`).
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
    stdout: std::io::BufWriter<std::io::Stdout>,
    stderr: std::io::Stderr,
    color: bool,
}

impl Out {
    pub fn new() -> Out {
        let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
        let force = std::env::var_os("CLICOLOR_FORCE").is_some_and(|v| !v.is_empty() && v != "0");
        let dumb = std::env::var_os("TERM").is_some_and(|t| t == "dumb");
        let color = !no_color && (force || (std::io::stdout().is_terminal() && !dumb));
        Out {
            stdout: std::io::BufWriter::new(std::io::stdout()),
            stderr: std::io::stderr(),
            color,
        }
    }
    /// Whether stdout gets colour.
    pub fn color(&self) -> bool {
        self.color
    }
    /// Writes result text to stdout.
    pub fn print(&mut self, text: &str) -> Result<(), OutputError> {
        self.stdout.write_all(text.as_bytes())?;
        Ok(())
    }
    /// Writes one JSON document (one line) to stdout.
    pub fn json(&mut self, value: &impl Serialize) -> Result<(), OutputError> {
        serde_json::to_writer(&mut self.stdout, value).map_err(|e| match e.io_error_kind() {
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
        let _ = self.stdout.flush();
        let _ = writeln!(self.stderr, "{line}");
    }
    /// Prints a warning line on stderr.
    pub fn warn(&mut self, msg: &str) {
        self.note(&format!("warning: {msg}"));
    }
}
