//! Cancelling a running operation from outside: the MCP server cancels a tool call
//! when its client sends `notifications/cancelled` or closes stdin.
//!
//! Work checks [`Cancel::check`] between files and before anything becomes visible:
//! a staging that is cancelled stops before its preview ref and journal entry are
//! written (its objects exist only in memory until then), so nothing is left half
//! made. An apply that has started is not interrupted: it is short, atomic and
//! recoverable, and stopping it midway would only hand the work to recovery.
//!
//! A command of the user's that runs in a place of ours (`verify`'s and `run`'s
//! worktree) leads a process group of its own, so a Ctrl-C at the terminal does not
//! reach it: [`StopSignals`] catches SIGINT, SIGTERM and SIGHUP meanwhile, so that the
//! run kills the command's group and removes the worktree, then dies of the signal.
//! [`end_with_parent`] makes such a child (and `git clone`) end with a run that is
//! killed outright.

use std::sync::Arc;

use crate::error::Classify;
use crate::error::Exit;

/// Test-only: milliseconds to wait before staging each changed file, so that a test
/// can cancel a staging while it runs. Not for users; unset, it costs nothing.
pub const TEST_STAGE_DELAY_ENV: &str = "GIT_ASTEDIT_TEST_STAGE_DELAY_MS";

/// Whether the caller still wants the result. Cheap to clone and to ask.
#[derive(Clone, Default)]
pub struct Cancel(Option<Arc<dyn Fn() -> bool + Send + Sync>>);

impl std::fmt::Debug for Cancel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("Cancel").field(&self.is_cancelled()).finish()
    }
}

impl Cancel {
    /// Never cancelled (the CLI: Ctrl-C ends the process instead).
    pub fn never() -> Cancel {
        Cancel(None)
    }

    /// Cancelled once `cancelled` says so.
    pub fn when(cancelled: impl Fn() -> bool + Send + Sync + 'static) -> Cancel {
        Cancel(Some(Arc::new(cancelled)))
    }

    pub fn is_cancelled(&self) -> bool {
        self.0.as_ref().is_some_and(|f| f())
    }

    /// `Err(Cancelled)` once cancelled.
    pub fn check(&self) -> Result<(), Cancelled> {
        if self.is_cancelled() {
            Err(Cancelled)
        } else {
            Ok(())
        }
    }

    /// This, or cancelled once a stop signal came while [`StopSignals`] are caught.
    pub fn or_stopped(&self) -> Cancel {
        let inner = self.clone();
        Cancel::when(move || inner.is_cancelled() || StopSignals::received())
    }

    /// The test-only delay of [`TEST_STAGE_DELAY_ENV`], in slices short enough that a
    /// cancellation is seen at once.
    pub fn test_delay(&self) -> Result<(), Cancelled> {
        // Read once per process: a staging asks for every file.
        static DELAY: std::sync::OnceLock<Option<u64>> = std::sync::OnceLock::new();
        let delay = DELAY.get_or_init(|| {
            std::env::var(TEST_STAGE_DELAY_ENV)
                .ok()
                .and_then(|v| v.parse::<u64>().ok())
        });
        let Some(ms) = *delay else {
            return self.check();
        };
        let until = std::time::Instant::now() + std::time::Duration::from_millis(ms);
        while std::time::Instant::now() < until {
            self.check()?;
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        self.check()
    }
}

/// SIGINT, SIGTERM and SIGHUP caught while held: a signal is noted
/// ([`StopSignals::received`]) instead of ending the process. When the last holder is
/// dropped, the handlers from before are put back and a noted signal is raised again,
/// so the process dies of it once its holders cleaned up. A signal that was ignored
/// (`nohup`) stays ignored.
pub struct StopSignals {
    _held: (),
}

impl StopSignals {
    pub fn catch() -> StopSignals {
        #[cfg(unix)]
        stop::catch();
        StopSignals { _held: () }
    }

    /// Whether a stop signal came while caught.
    pub fn received() -> bool {
        #[cfg(unix)]
        let came = stop::RECEIVED.load(std::sync::atomic::Ordering::SeqCst) != 0;
        #[cfg(not(unix))]
        let came = false;
        came
    }
}

impl Drop for StopSignals {
    fn drop(&mut self) {
        #[cfg(unix)]
        stop::release();
    }
}

#[cfg(unix)]
mod stop {
    use std::sync::atomic::AtomicI32;
    use std::sync::atomic::Ordering;
    use std::sync::Mutex;

    /// The stop signal that came (0: none).
    pub(super) static RECEIVED: AtomicI32 = AtomicI32::new(0);
    const SIGNALS: [libc::c_int; 3] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP];

    /// How many hold the handlers, and the actions they replaced.
    struct Saved {
        holders: usize,
        previous: Vec<libc::sigaction>,
    }

    static SAVED: Mutex<Saved> = Mutex::new(Saved {
        holders: 0,
        previous: Vec::new(),
    });

    extern "C" fn note(signal: libc::c_int) {
        RECEIVED.store(signal, Ordering::SeqCst);
    }

    pub(super) fn catch() {
        let mut saved = SAVED.lock().unwrap_or_else(|e| e.into_inner());
        if saved.holders == 0 {
            saved.previous.clear();
            let handler: extern "C" fn(libc::c_int) = note;
            for signal in SIGNALS {
                // SAFETY: sigaction with zeroed structs filled in here; the handler only
                // stores to an atomic, which is async-signal-safe.
                unsafe {
                    let mut action: libc::sigaction = std::mem::zeroed();
                    action.sa_sigaction = handler as libc::sighandler_t;
                    libc::sigemptyset(&mut action.sa_mask);
                    action.sa_flags = libc::SA_RESTART;
                    let mut old: libc::sigaction = std::mem::zeroed();
                    libc::sigaction(signal, &action, &mut old);
                    if old.sa_sigaction == libc::SIG_IGN {
                        libc::sigaction(signal, &old, std::ptr::null_mut());
                    }
                    saved.previous.push(old);
                }
            }
        }
        saved.holders += 1;
    }

    pub(super) fn release() {
        let mut saved = SAVED.lock().unwrap_or_else(|e| e.into_inner());
        saved.holders = saved.holders.saturating_sub(1);
        if saved.holders > 0 {
            return;
        }
        for (signal, old) in SIGNALS.iter().zip(&saved.previous) {
            // SAFETY: puts back the action sigaction returned when it was replaced.
            unsafe {
                libc::sigaction(*signal, old, std::ptr::null_mut());
            }
        }
        drop(saved);
        let signal = RECEIVED.swap(0, Ordering::SeqCst);
        if signal != 0 {
            // SAFETY: raise(3) delivers the signal to this thread, under the action
            // that was there before (the default: the process ends).
            unsafe {
                libc::raise(signal);
            }
        }
    }
}

/// The signal a child gets when the thread that started it ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParentDeath {
    /// SIGKILL: a user's command.
    Kill,
    /// SIGTERM: git, which then removes what it was making (a half-made clone).
    Term,
}

/// Makes the child `cmd` starts get `signal` when the thread starting it ends (Linux's
/// `PR_SET_PDEATHSIG`; elsewhere nothing), so that it does not outlive a run killed
/// outright. A child whose parent is already gone when it starts does not run.
pub fn end_with_parent(cmd: &mut std::process::Command, signal: ParentDeath) {
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::process::CommandExt as _;
        let signal = match signal {
            ParentDeath::Kill => libc::SIGKILL,
            ParentDeath::Term => libc::SIGTERM,
        };
        // SAFETY: getpid(2) has no preconditions.
        let parent = unsafe { libc::getpid() };
        // SAFETY: the hook runs in the forked child before exec and makes only
        // async-signal-safe calls (prctl, getppid).
        unsafe {
            cmd.pre_exec(move || {
                if libc::prctl(libc::PR_SET_PDEATHSIG, signal as libc::c_ulong, 0, 0, 0) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                if libc::getppid() != parent {
                    return Err(std::io::Error::from_raw_os_error(libc::ESRCH));
                }
                Ok(())
            });
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (cmd, signal);
}

/// The operation was cancelled; nothing of it was made visible.
#[derive(Debug, thiserror::Error)]
#[error("cancelled before it finished; nothing was staged or written")]
pub struct Cancelled;

impl Classify for Cancelled {
    fn code(&self) -> &'static str {
        "cancelled"
    }
    fn exit(&self) -> Exit {
        Exit::Internal
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicBool;
    use std::sync::atomic::Ordering;

    #[test]
    fn never_is_never_cancelled_and_when_follows_its_flag() {
        assert!(Cancel::never().check().is_ok());
        assert!(Cancel::default().check().is_ok());
        let flag = Arc::new(AtomicBool::new(false));
        let seen = flag.clone();
        let cancel = Cancel::when(move || seen.load(Ordering::SeqCst));
        let clone = cancel.clone();
        assert!(cancel.check().is_ok());
        flag.store(true, Ordering::SeqCst);
        assert!(cancel.is_cancelled() && clone.is_cancelled());
        let err = crate::Error::from(cancel.check().unwrap_err());
        assert_eq!(err.code(), "cancelled");
    }
}
