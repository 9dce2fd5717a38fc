//! Output streams. stdout carries the result; stderr carries warnings and chatter.
//! Colour is on only for a terminal without `NO_COLOR` (or with `CLICOLOR_FORCE`).

use std::io::IsTerminal;
use std::io::Write;

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
    pub fn stdout(&mut self) -> &mut impl Write {
        &mut self.stdout
    }
    pub fn stderr(&mut self) -> &mut impl Write {
        let _ = self.stdout.flush();
        &mut self.stderr
    }
    pub fn flush(&mut self) -> std::io::Result<()> {
        self.stdout.flush()?;
        self.stderr.flush()
    }
    /// Prints a warning line on stderr.
    pub fn warn(&mut self, msg: &str) {
        let _ = self.stdout.flush();
        let _ = writeln!(self.stderr, "warning: {msg}");
    }
}
