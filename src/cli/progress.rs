//! The progress bar on stderr: what the library's engines report
//! ([`git_astedit::progress`]), drawn with indicatif.
//!
//! Only on a terminal, never under `--json` or a pager (the caller decides), and only
//! for runs still going after [`DELAY`]: a fast run draws nothing.
//! `GIT_ASTEDIT_PROGRESS_DELAY_MS` sets that delay (for tests: 0 draws at once).

use std::sync::atomic::AtomicBool;
use std::sync::atomic::AtomicUsize;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::sync::Mutex;
use std::time::Duration;

use git_astedit::progress::Observer;
use git_astedit::progress::Phase;
use indicatif::ProgressBar;
use indicatif::ProgressDrawTarget;
use indicatif::ProgressStyle;

/// How long a run goes before its bar shows.
pub const DELAY: Duration = Duration::from_millis(400);

/// A progress bar for one run; clones share it.
#[derive(Clone)]
pub struct Bar {
    inner: Arc<Inner>,
}

struct Inner {
    /// The bar of the phase under way.
    current: Mutex<Option<ProgressBar>>,
    /// The delay has passed: bars draw from now on.
    shown: AtomicBool,
    /// The current phase counts matches (a search).
    counts_matches: AtomicBool,
    matches: AtomicUsize,
}

impl Bar {
    /// A bar that starts drawing once the delay has passed.
    pub fn new() -> Bar {
        let bar = Bar {
            inner: Arc::new(Inner {
                current: Mutex::new(None),
                shown: AtomicBool::new(false),
                counts_matches: AtomicBool::new(false),
                matches: AtomicUsize::new(0),
            }),
        };
        let delay = std::env::var("GIT_ASTEDIT_PROGRESS_DELAY_MS")
            .ok()
            .and_then(|v| v.parse().ok())
            .map_or(DELAY, Duration::from_millis);
        if delay.is_zero() {
            bar.inner.shown.store(true, Ordering::Relaxed);
        } else {
            // A timer, so that a phase stuck on one large file still shows up. It ends
            // with the process if the run ends first.
            let weak = Arc::downgrade(&bar.inner);
            let _ = std::thread::Builder::new()
                .name("progress-delay".into())
                .spawn(move || {
                    std::thread::sleep(delay);
                    if let Some(inner) = weak.upgrade() {
                        inner.reveal();
                    }
                });
        }
        bar
    }

    /// Whether a bar is on the terminal now.
    pub fn visible(&self) -> bool {
        self.inner.shown.load(Ordering::Relaxed) && self.inner.lock().is_some()
    }

    /// Runs `f` with the bar taken off the terminal (for a line written under it).
    pub fn suspend<R>(&self, f: impl FnOnce() -> R) -> R {
        let current = self.inner.lock().clone();
        match current {
            Some(pb) => pb.suspend(f),
            None => f(),
        }
    }

    /// Takes the bar off the terminal for good.
    pub fn clear(&self) {
        if let Some(pb) = self.inner.lock().take() {
            pb.finish_and_clear();
        }
    }
}

impl Inner {
    fn lock(&self) -> std::sync::MutexGuard<'_, Option<ProgressBar>> {
        self.current.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The delay has passed: draw the current bar, and later ones at once.
    fn reveal(&self) {
        self.shown.store(true, Ordering::Relaxed);
        if let Some(pb) = self.lock().as_ref() {
            draw_on_stderr(pb);
        }
    }
}

fn draw_on_stderr(pb: &ProgressBar) {
    pb.set_draw_target(ProgressDrawTarget::stderr());
    pb.enable_steady_tick(Duration::from_millis(120));
    pb.force_draw();
}

impl Observer for Bar {
    fn start(&self, phase: Phase, total: usize) {
        let style = ProgressStyle::with_template("{prefix:>9} [{bar:30}] {pos}/{len} files{msg}")
            .map(|s| s.progress_chars("=> "))
            .unwrap_or_else(|_| ProgressStyle::default_bar());
        let pb = ProgressBar::with_draw_target(Some(total as u64), ProgressDrawTarget::hidden())
            .with_style(style)
            .with_prefix(phase.verb());
        self.inner
            .counts_matches
            .store(phase == Phase::Search, Ordering::Relaxed);
        self.inner.matches.store(0, Ordering::Relaxed);
        if self.inner.shown.load(Ordering::Relaxed) {
            draw_on_stderr(&pb);
        }
        if let Some(old) = self.inner.lock().replace(pb) {
            old.finish_and_clear();
        }
    }

    fn advance(&self, items: usize, matches: usize) {
        let current = self.inner.lock().clone();
        let Some(pb) = current else {
            return;
        };
        if matches > 0 && self.inner.counts_matches.load(Ordering::Relaxed) {
            let n = self.inner.matches.fetch_add(matches, Ordering::Relaxed) + matches;
            let word = if n == 1 { "match" } else { "matches" };
            pb.set_message(format!(", {n} {word}"));
        }
        pb.inc(items as u64);
    }

    fn finish(&self) {
        self.clear();
    }
}
