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
//!
//! As in git, a signal that ends the run (Ctrl-C, a hangup) first closes the pager's
//! input and waits for the pager, so that the shell does not take the terminal back
//! while the pager still draws on it. (Unix only: Windows has no such signals, and the
//! pager just runs.)

use std::io::IsTerminal;
use std::process::Child;
use std::process::Command;
use std::process::Stdio;
use std::sync::atomic::AtomicI32;
use std::sync::atomic::Ordering;

use super::color::parse_bool;
use super::traits::Paging;

/// `-p` or `-P` on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flag {
    Paginate,
    NoPager,
}

/// The pager program to run for `command` (whose [traits](super::traits::Traits) say
/// how it pages), if any.
pub fn choose(
    command: &str,
    paging: Paging,
    flag: Option<Flag>,
    json: bool,
    config: &mut dyn FnMut(&str) -> Option<Option<String>>,
) -> Option<String> {
    if json || paging == Paging::Never || flag == Some(Flag::NoPager) {
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
            None => paging == Paging::ByDefault,
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
        #[cfg(unix)]
        {
            use std::os::fd::AsRawFd;
            PAGER_INPUT.store(stdin.as_raw_fd(), Ordering::SeqCst);
            // A process id always fits a pid_t; 0 (none) otherwise.
            PAGER_PID.store(i32::try_from(child.id()).unwrap_or(0), Ordering::SeqCst);
            let handler: extern "C" fn(libc::c_int) = wait_for_pager_then_die;
            for signal in [libc::SIGINT, libc::SIGHUP, libc::SIGTERM, libc::SIGQUIT] {
                // SAFETY: the handler only makes async-signal-safe calls (close, waitpid,
                // signal, raise) on values read from atomics.
                unsafe { libc::signal(signal, handler as *const () as libc::sighandler_t) };
            }
        }
        Some((Pager { child }, stdin))
    }

    /// Its input is about to be closed: a signal handler must not close it again.
    pub fn input_closing(&self) {
        PAGER_INPUT.store(-1, Ordering::SeqCst);
    }

    /// Waits for the user to leave the pager. Its input must be closed already.
    pub fn wait(mut self) {
        // Nothing is left to report to if the pager itself failed.
        let _ = self.child.wait();
        PAGER_PID.store(0, Ordering::SeqCst);
        // A signal whose handler runs on another thread may have waited beside us: the
        // run still dies of it, not with our exit code.
        let signal = SIGNALLED.load(Ordering::SeqCst);
        #[cfg(unix)]
        if signal != 0 {
            // SAFETY: restores the default action and raises the signal again.
            unsafe {
                libc::signal(signal, libc::SIG_DFL);
                libc::raise(signal);
            }
        }
        #[cfg(not(unix))]
        let _ = signal;
    }
}

/// The pager's process id while it runs (0: none), and the descriptor of its input
/// while we hold it open (-1: none), for [`wait_for_pager_then_die`].
static PAGER_PID: AtomicI32 = AtomicI32::new(0);
static PAGER_INPUT: AtomicI32 = AtomicI32::new(-1);
/// The signal that is ending the run (0: none).
static SIGNALLED: AtomicI32 = AtomicI32::new(0);

/// git's `wait_for_pager_signal`: end the pager's input, wait for the user to leave
/// it, then die of the signal as if no handler were there.
#[cfg(unix)]
extern "C" fn wait_for_pager_then_die(signal: libc::c_int) {
    SIGNALLED.store(signal, Ordering::SeqCst);
    let input = PAGER_INPUT.swap(-1, Ordering::SeqCst);
    let pid = PAGER_PID.swap(0, Ordering::SeqCst);
    // SAFETY: async-signal-safe calls only; the descriptor is ours and is not used
    // again (the process ends here).
    unsafe {
        if input >= 0 {
            libc::close(input);
        }
        if pid > 0 {
            libc::waitpid(pid, std::ptr::null_mut(), 0);
        }
        libc::signal(signal, libc::SIG_DFL);
        libc::raise(signal);
    }
}
