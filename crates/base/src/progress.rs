/*!
Progress of a long run, for a front end to show (the CLI draws a bar on a terminal).

The engines (`grep`, `edit`, `scan`) and `txn`'s apply and undo report what they do
here: a phase starts over a number of items, items finish (with the matches found in
them), the phase ends. Whoever installed an [`Observer`] hears about it; with none
installed (the MCP server, the library's tests) every report is a relaxed atomic load.

The observer is installed for the process, not passed down: reports come from the
worker threads of the pipeline and of rayon as well as from the caller's, and the
engines' signatures stay those of what they compute. Only one observer is heard at a
time; a front end that runs requests concurrently installs none.
*/

use std::sync::atomic::AtomicBool;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::sync::RwLock;

/// What a run is doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// Reading and matching files (`grep`, `edit`, `scan`).
    Search,
    /// Checking that the files to write still hold what the preview expects.
    Check,
    /// Writing the new contents (apply, undo).
    Write,
}

impl Phase {
    pub fn verb(self) -> &'static str {
        match self {
            Phase::Search => "searching",
            Phase::Check => "checking",
            Phase::Write => "writing",
        }
    }
}

/// Hears a run's progress. Called from any thread, possibly at once.
pub trait Observer: Send + Sync {
    /// A phase starts over `total` items.
    fn start(&self, phase: Phase, total: usize);
    /// `items` more items are done, with `matches` more matches in them.
    fn advance(&self, items: usize, matches: usize);
    /// The phase ended (finished or stopped).
    fn finish(&self);
}

static INSTALLED: AtomicBool = AtomicBool::new(false);
static OBSERVER: RwLock<Option<Arc<dyn Observer>>> = RwLock::new(None);

/// Sends progress to `observer` until the returned guard is dropped.
#[must_use = "progress goes to the observer only while the guard lives"]
pub fn install(observer: Arc<dyn Observer>) -> Installed {
    *OBSERVER.write().unwrap_or_else(|e| e.into_inner()) = Some(observer);
    INSTALLED.store(true, Ordering::Release);
    Installed(())
}

/// Keeps an observer installed (see [`install`]).
pub struct Installed(());

impl Drop for Installed {
    fn drop(&mut self) {
        INSTALLED.store(false, Ordering::Release);
        *OBSERVER.write().unwrap_or_else(|e| e.into_inner()) = None;
    }
}

fn with(f: impl FnOnce(&dyn Observer)) {
    if !INSTALLED.load(Ordering::Relaxed) {
        return;
    }
    if let Some(o) = OBSERVER
        .read()
        .unwrap_or_else(|e| e.into_inner())
        .as_deref()
    {
        f(o);
    }
}

/// A phase starts over `total` items.
pub fn start(phase: Phase, total: usize) {
    with(|o| o.start(phase, total));
}

/// `items` more items are done, with `matches` more matches in them.
pub fn advance(items: usize, matches: usize) {
    with(|o| o.advance(items, matches));
}

/// The phase ended.
pub fn finish() {
    with(|o| o.finish());
}

/// Ends the phase when dropped, so that an early return or an error ends it too.
pub struct PhaseGuard(());

/// Starts a phase that ends when the returned guard is dropped.
pub fn phase(phase: Phase, total: usize) -> PhaseGuard {
    start(phase, total);
    PhaseGuard(())
}

impl Drop for PhaseGuard {
    fn drop(&mut self) {
        finish();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    #[derive(Default)]
    struct Log(Mutex<Vec<String>>);

    impl Observer for Log {
        fn start(&self, phase: Phase, total: usize) {
            self.0
                .lock()
                .unwrap()
                .push(format!("{} {total}", phase.verb()));
        }
        fn advance(&self, items: usize, matches: usize) {
            self.0.lock().unwrap().push(format!("+{items} {matches}"));
        }
        fn finish(&self) {
            self.0.lock().unwrap().push("end".into());
        }
    }

    #[test]
    fn reports_reach_the_installed_observer_only_while_it_is_installed() {
        let log = Arc::new(Log::default());
        {
            let _installed = install(log.clone());
            let _phase = phase(Phase::Search, 2);
            advance(1, 3);
            advance(1, 0);
        }
        advance(5, 7);
        // Other tests may report at the same time (the observer is the process's).
        let log = log.0.lock().unwrap();
        assert!(log.iter().any(|l| l == "+1 3"), "{log:?}");
        assert!(log.iter().all(|l| l != "+5 7"), "{log:?}");
    }
}
