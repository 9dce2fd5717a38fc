//! Cancelling a running operation from outside: the MCP server cancels a tool call
//! when its client sends `notifications/cancelled` or closes stdin.
//!
//! Work checks [`Cancel::check`] between files and before anything becomes visible:
//! a staging that is cancelled stops before its preview ref and journal entry are
//! written (its objects exist only in memory until then), so nothing is left half
//! made. An apply that has started is not interrupted: it is short, atomic and
//! recoverable, and stopping it midway would only hand the work to recovery.

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

    /// The test-only delay of [`TEST_STAGE_DELAY_ENV`], in slices short enough that a
    /// cancellation is seen at once.
    pub(crate) fn test_delay(&self) -> Result<(), Cancelled> {
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
