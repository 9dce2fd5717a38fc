//! The pager, by git's rules (git's `pager.c` and `git.c`).
//!
//! `show`, `log` and `grep` page by default, as `git show`, `git log` and `git grep`
//! do; `pager.<command>` turns paging on or off for any command (a boolean) or names
//! the pager for it (a command line); `-p`/`--paginate` pages any command, and
//! `-P`/`--no-pager` none. Only when stdout is a terminal and the output is not
//! `--json`. The program is `GIT_PAGER`, else `pager.<command>`'s or `core.pager`,
//! else `PAGER`, else `less`; an empty one or `cat` means no pager. It runs through
//! `sh -c` with `LESS=FRX` and `LV=-c` unless they are set (less then quits at once on
//! a short output and shows colour), and `GIT_PAGER_IN_USE=true`, so that a git
//! command it runs keeps colour. The front end's one child process besides git.

use std::io::IsTerminal;
use std::process::Child;
use std::process::Command;
use std::process::Stdio;

use super::color::parse_bool;

/// The commands that page unless told otherwise (git's `USE_PAGER` commands).
const PAGED_BY_DEFAULT: &[&str] = &["show", "log", "grep"];

/// Commands whose stdout is a protocol, never a page.
const NEVER_PAGED: &[&str] = &["mcp"];

/// `-p` or `-P` on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flag {
    Paginate,
    NoPager,
}

/// The pager program to run for `command`, if any.
pub fn choose(
    command: &str,
    flag: Option<Flag>,
    json: bool,
    config: &mut dyn FnMut(&str) -> Option<Option<String>>,
) -> Option<String> {
    if json || NEVER_PAGED.contains(&command) || flag == Some(Flag::NoPager) {
        return None;
    }
    if !std::io::stdout().is_terminal() {
        return None;
    }
    // pager.<command>: a boolean, or the pager to use (which means yes). With -p it is
    // not consulted, as in git.
    let mut program = None;
    if flag != Some(Flag::Paginate) {
        let wanted = match config(&format!("pager.{command}")) {
            None => PAGED_BY_DEFAULT.contains(&command),
            Some(None) => true,
            Some(Some(v)) => match parse_bool(&v) {
                Some(on) => on,
                None => {
                    program = Some(v);
                    true
                }
            },
        };
        if !wanted {
            return None;
        }
    }
    let env = |name: &str| std::env::var(name).ok();
    let program = env("GIT_PAGER")
        .or(program)
        .or_else(|| config("core.pager").flatten())
        .or_else(|| env("PAGER"))
        .unwrap_or_else(|| "less".to_string());
    if program.trim().is_empty() || program == "cat" {
        return None;
    }
    Some(program)
}

/// A running pager reading our stdout.
pub struct Pager {
    child: Child,
}

impl Pager {
    /// Starts `program`; `None` when it cannot be started (as git, output then goes to
    /// the terminal directly).
    pub fn spawn(program: &str) -> Option<(Pager, std::process::ChildStdin)> {
        let mut cmd = Command::new("sh");
        cmd.arg("-c").arg(program).stdin(Stdio::piped());
        if std::env::var_os("LESS").is_none() {
            cmd.env("LESS", "FRX");
        }
        if std::env::var_os("LV").is_none() {
            cmd.env("LV", "-c");
        }
        cmd.env("GIT_PAGER_IN_USE", "true");
        let mut child = cmd.spawn().ok()?;
        let stdin = child.stdin.take()?;
        Some((Pager { child }, stdin))
    }

    /// Waits for the user to leave the pager (its input must be closed first).
    pub fn wait(mut self) {
        // Nothing is left to report to if the pager itself failed.
        let _ = self.child.wait();
    }
}
