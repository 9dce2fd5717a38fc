//! Working on several repositories at once (`at_once`) while the state is written as a
//! sequential run writes it: the work of each repository runs on a worker thread, and
//! its result is handed back on the calling thread in the repositories' order, so the
//! chain of state commits (and the report) is the same whatever the number of workers.

use std::collections::BTreeMap;
use std::sync::mpsc;
use std::sync::Mutex;

use crate::Error;

/// How many repositories a campaign command works on at once unless the spec
/// (`at_once`) or `--at-once` says otherwise: mostly `git` children and file I/O.
pub const DEFAULT_AT_ONCE: usize = 4;

/// Runs `work` on each item, up to `at_once` at a time, and hands each result to
/// `done` on this thread in the items' order (as soon as every earlier one was
/// handed over). With a `budget`, an item starts only while the successes so far
/// (`counts`) plus those still running stay under it, and one that can no longer
/// start is handed over as `None`: the same items run as in a one-at-a-time run,
/// where a failure leaves its place to the next one. An error from `done` stops the
/// dispatch; the items already running finish, unrecorded, and the error is returned.
pub(super) fn in_order<T, R>(
    items: &[T],
    at_once: usize,
    budget: Option<usize>,
    work: impl Fn(&T) -> R + Sync,
    counts: impl Fn(&R) -> bool,
    done: impl FnMut(&T, Option<R>) -> Result<(), Error>,
) -> Result<(), Error>
where
    T: Sync,
    R: Send,
{
    in_order_apart(items, at_once, budget, |_| None::<()>, work, counts, done)
}

/// [`in_order`], where two items with the same `place` (a local checkout named by two
/// spec entries) never run at the same time: the later one starts when the earlier is
/// done, and nothing after it starts before it (the order of starts stays that of a
/// one-at-a-time run). Side by side they would meet on the checkout's locks.
pub(super) fn in_order_apart<T, R, P: PartialEq>(
    items: &[T],
    at_once: usize,
    budget: Option<usize>,
    place: impl Fn(&T) -> Option<P>,
    work: impl Fn(&T) -> R + Sync,
    counts: impl Fn(&R) -> bool,
    mut done: impl FnMut(&T, Option<R>) -> Result<(), Error>,
) -> Result<(), Error>
where
    T: Sync,
    R: Send,
{
    let at_once = at_once.max(1);
    if items.is_empty() {
        return Ok(());
    }
    let (job_tx, job_rx) = mpsc::channel::<usize>();
    let job_rx = Mutex::new(job_rx);
    std::thread::scope(|scope| {
        let (result_tx, result_rx) = mpsc::channel::<(usize, std::thread::Result<R>)>();
        for _ in 0..at_once.min(items.len()) {
            let (job_rx, result_tx, work) = (&job_rx, result_tx.clone(), &work);
            scope.spawn(move || loop {
                let next = job_rx.lock().unwrap_or_else(|e| e.into_inner()).recv();
                let Ok(i) = next else { break };
                // A panic is handed over too: the dispatcher must not wait for it.
                let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| work(&items[i])));
                if result_tx.send((i, r)).is_err() {
                    break;
                }
            });
        }
        drop(result_tx);
        let mut ready: BTreeMap<usize, Option<R>> = BTreeMap::new();
        // The places of the items running now.
        let mut busy: Vec<(usize, P)> = Vec::new();
        let (mut started, mut handed, mut running, mut succeeded) = (0, 0, 0, 0);
        let result = loop {
            // Hand over, in order, what is complete.
            let mut failed = None;
            while let Some(r) = ready.remove(&handed) {
                if let Err(e) = done(&items[handed], r) {
                    failed = Some(e);
                    break;
                }
                handed += 1;
            }
            if let Some(e) = failed {
                break Err(e);
            }
            if handed == items.len() {
                break Ok(());
            }
            // Start what may start.
            while started < items.len() && running < at_once {
                match budget {
                    Some(b) if succeeded >= b => {
                        ready.insert(started, None);
                        started += 1;
                    }
                    // One running may still fail and leave its place to this one.
                    Some(b) if succeeded + running >= b => break,
                    _ => {
                        let at = place(&items[started]);
                        if at
                            .as_ref()
                            .is_some_and(|p| busy.iter().any(|(_, q)| q == p))
                        {
                            // Its place is taken: wait for the item holding it.
                            break;
                        }
                        if job_tx.send(started).is_err() {
                            break;
                        }
                        if let Some(p) = at {
                            busy.push((started, p));
                        }
                        started += 1;
                        running += 1;
                    }
                }
            }
            if running == 0 {
                // Nothing runs: what was left over budget is ready to hand over.
                continue;
            }
            match result_rx.recv() {
                Ok((i, Ok(r))) => {
                    running -= 1;
                    busy.retain(|(j, _)| *j != i);
                    if counts(&r) {
                        succeeded += 1;
                    }
                    ready.insert(i, Some(r));
                }
                Ok((_, Err(panic))) => {
                    drop(job_tx);
                    std::panic::resume_unwind(panic);
                }
                Err(_) => {
                    break Err(super::CampaignError::Git(
                        "work on the repositories: every worker stopped".into(),
                    )
                    .into())
                }
            }
        };
        // The workers finish what they hold and stop.
        drop(job_tx);
        result
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Items 0..n, each "succeeding" unless in `fails`; what `done` saw, in order.
    fn run(
        n: usize,
        at_once: usize,
        budget: Option<usize>,
        fails: &[usize],
    ) -> Vec<(usize, Option<bool>)> {
        let items: Vec<usize> = (0..n).collect();
        let mut seen = Vec::new();
        in_order(
            &items,
            at_once,
            budget,
            |i| {
                // Later items finish first: the order must come from the hand-over.
                std::thread::sleep(std::time::Duration::from_millis(((n - i) * 3) as u64));
                !fails.contains(i)
            },
            |ok| *ok,
            |i, r| {
                seen.push((*i, r));
                Ok(())
            },
        )
        .expect("runs");
        seen
    }

    #[test]
    fn results_come_back_in_order_whatever_the_number_of_workers() {
        let one = run(12, 1, None, &[3]);
        for at_once in [2, 4, 12, 40] {
            assert_eq!(run(12, at_once, None, &[3]), one);
        }
        assert_eq!(one.len(), 12);
    }

    #[test]
    fn a_budget_starts_the_same_items_as_a_sequential_run() {
        // Budget 3 with items 1 and 2 failing: 0, 3 and 4 succeed; 1 and 2 ran and
        // failed; 5.. never start.
        let one = run(8, 1, Some(3), &[1, 2]);
        assert_eq!(
            one,
            [
                (0, Some(true)),
                (1, Some(false)),
                (2, Some(false)),
                (3, Some(true)),
                (4, Some(true)),
                (5, None),
                (6, None),
                (7, None)
            ]
        );
        for at_once in [2, 3, 8] {
            assert_eq!(run(8, at_once, Some(3), &[1, 2]), one, "at once {at_once}");
        }
        assert!(run(3, 4, Some(0), &[]).iter().all(|(_, r)| r.is_none()));
    }

    #[test]
    fn items_at_one_place_never_run_side_by_side() {
        use std::sync::atomic::AtomicUsize;
        use std::sync::atomic::Ordering;
        // Items 0..24 at places i % 3 (and item 7 at none): at most one runs at each
        // place, and all run.
        let items: Vec<usize> = (0..24).collect();
        let inside: Vec<AtomicUsize> = (0..3).map(|_| AtomicUsize::new(0)).collect();
        let overlaps = AtomicUsize::new(0);
        let mut seen = Vec::new();
        in_order_apart(
            &items,
            8,
            None,
            |i| (*i != 7).then_some(*i % 3),
            |i| {
                let at = &inside[*i % 3];
                if *i != 7 && at.fetch_add(1, Ordering::SeqCst) > 0 {
                    overlaps.fetch_add(1, Ordering::SeqCst);
                }
                std::thread::sleep(std::time::Duration::from_millis(2));
                if *i != 7 {
                    at.fetch_sub(1, Ordering::SeqCst);
                }
                *i
            },
            |_| true,
            |i, r| {
                seen.push((*i, r));
                Ok(())
            },
        )
        .expect("runs");
        assert_eq!(overlaps.load(Ordering::SeqCst), 0);
        let want: Vec<(usize, Option<usize>)> = items.iter().map(|&i| (i, Some(i))).collect();
        assert_eq!(seen, want);
    }

    #[test]
    fn an_error_while_handing_over_stops_the_rest() {
        let items: Vec<usize> = (0..10).collect();
        let mut handed = 0;
        let r = in_order(
            &items,
            3,
            None,
            |i| *i,
            |_| true,
            |i, _| {
                handed += 1;
                if *i == 4 {
                    Err(super::super::CampaignError::Concurrent("moved".into()).into())
                } else {
                    Ok(())
                }
            },
        );
        assert!(r.is_err());
        assert_eq!(handed, 5);
    }

    #[test]
    fn the_pace_spaces_every_slot_across_threads() {
        let interval = std::time::Duration::from_millis(20);
        let pace = std::sync::Arc::new(crate::ops::pr::Pace::new(interval));
        let mut slots: Vec<std::time::Instant> = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..4)
                .map(|_| {
                    let pace = pace.clone();
                    scope.spawn(move || (0..3).map(|_| pace.wait()).collect::<Vec<_>>())
                })
                .collect();
            handles
                .into_iter()
                .flat_map(|h| h.join().expect("thread"))
                .collect()
        });
        slots.sort();
        assert_eq!(slots.len(), 12);
        for w in slots.windows(2) {
            assert!(w[1] - w[0] >= interval, "{:?}", w[1] - w[0]);
        }
    }
}
