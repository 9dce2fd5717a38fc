/*!
An ordered parallel map: workers process items in any order, the caller's sink sees the
results in input order, as soon as each is next in line.

Collecting every result before printing holds all matches of a whole tree in memory at
once (hundreds of MB for a pattern without a literal on a large tree); streaming through
a small reorder buffer keeps memory proportional to the work in flight.
*/

use std::collections::BTreeMap;
use std::sync::mpsc;

/// The number of worker threads: `RAYON_NUM_THREADS` / `-j` (through rayon's global
/// pool configuration), else the number of cores.
pub fn threads() -> usize {
    rayon::current_num_threads().max(1)
}

/// Calls `work` on every item from `threads()` threads and `sink` with each item's index
/// and result, in input order, on the calling thread. `sink` returning `false` stops
/// handing out work.
pub fn ordered_map<T, R, W, S>(items: &[T], work: W, sink: S)
where
    T: Sync,
    R: Send,
    W: Fn(&T) -> R + Sync,
    S: FnMut(usize, R) -> bool,
{
    map_sized(items, |_| 0, work, Delivery::InOrder, sink)
}

/// How [`map_sized`] hands results to its sink.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Delivery {
    /// In input order, through a reorder buffer.
    InOrder,
    /// As soon as each is ready, in no particular order: nothing waits in a reorder
    /// buffer, so a caller that only gathers (and sorts at the end) holds no finished
    /// results beside a large item's tree.
    AsReady,
}

/// [`ordered_map`] for items whose work takes memory in proportion to `size_of` (a
/// file's size: its parse tree is ~70 times that). Large items run one at a time and
/// first, so that the peak stays near the largest one's tree, while the other workers
/// go on with small items beside it (see [`Schedule`]).
pub fn map_sized<T, R, W, S>(
    items: &[T],
    size_of: impl Fn(&T) -> u64,
    work: W,
    delivery: Delivery,
    mut sink: S,
) where
    T: Sync,
    R: Send,
    W: Fn(&T) -> R + Sync,
    S: FnMut(usize, R) -> bool,
{
    release_freed_memory();
    let n = threads().min(items.len());
    if n <= 1 {
        // One worker: nothing runs beside anything, and input order needs no buffer.
        for (i, item) in items.iter().enumerate() {
            if !sink(i, work(item)) {
                return;
            }
        }
        return;
    }
    let schedule = Schedule::new(items.iter().map(size_of));
    std::thread::scope(|scope| {
        // Bounded: when the sink is the slower side (JSON written with every match's
        // captures), workers wait instead of piling finished results up unread, so
        // memory stays with the work in flight, not with the output's size (issue 26).
        let (tx, rx) = mpsc::sync_channel::<(usize, R)>(2 * n);
        // The calling thread only takes results in: were it a worker too, results
        // would queue up unread for as long as it parsed a large file.
        for _ in 0..n {
            let tx = tx.clone();
            let (schedule, work) = (&schedule, &work);
            scope.spawn(move || {
                while let Some(ticket) = schedule.next() {
                    let r = work(&items[ticket.index]);
                    schedule.done(ticket);
                    if tx.send((ticket.index, r)).is_err() {
                        break;
                    }
                }
            });
        }
        drop(tx);
        let mut reorder = Reorder {
            pending: BTreeMap::new(),
            expected: 0,
        };
        for (i, r) in rx {
            let go_on = match delivery {
                Delivery::InOrder => {
                    let go_on = reorder.push(i, r, &mut sink);
                    schedule.wait_for(reorder.expected);
                    go_on
                }
                Delivery::AsReady => sink(i, r),
            };
            if !go_on {
                schedule.stop();
                return;
            }
        }
    });
}

pub use crate::alloc::release_freed_memory;

/// Items at least this large run alone (see [`Schedule`]).
pub const LARGE_FILE: u64 = 256 * 1024;

/// Items below this size may run beside a large one: one per other worker, so their
/// trees add a few MB to the peak, not another large tree.
pub const BESIDE_LARGE: u64 = 32 * 1024;

/// Which item a worker takes next, by size class.
///
/// * large (≥ [`LARGE_FILE`]): first, largest first, one at a time, never beside a
///   medium one;
/// * medium: beside each other and small ones, not beside a large one;
/// * small (< [`BESIDE_LARGE`]): beside anything.
///
/// Apart from the large ones, items go in input order, so that in-order delivery
/// buffers few results. A worker that may not take the next medium item (a large one
/// runs or waits) sets it aside and takes a small one rather than wait; it waits only
/// when nothing it may take is left. Before, a second worker waited while the first
/// parsed a 2.5 MB file (0.5 s of one idle core in a 2 s search).
///
/// One medium item may run beside a large one after all: the one in-order delivery
/// waits for ([`Schedule::wait_for`]). Set aside, it held every later result in the
/// reorder buffer until the large ones were done: 244 files' results, 30 MB of JSON
/// rows in a search of sympy (`grep --json` peaked at 1.65× text mode, now 1.42×).
///
/// Large items first costs memory too, when delivery is in order: their results
/// wait for their turn (11 MB of JSON rows for one sympy test file). Starting each
/// large item just before the other workers reach it was tried (issue 26): its tree
/// then ran beside medium ones, and the peak was 10 % higher in text mode and 8 % in
/// JSON than with large items first.
pub struct Schedule {
    state: std::sync::Mutex<Queues>,
    changed: std::sync::Condvar,
}

#[derive(Debug, Default)]
struct Queues {
    large: std::collections::VecDeque<usize>,
    /// Medium and small items, in input order.
    rest: std::collections::VecDeque<(usize, SizeClass)>,
    /// Medium items set aside while a large one ran or waited, in input order.
    deferred: std::collections::VecDeque<usize>,
    large_running: bool,
    medium_running: usize,
    /// The item in-order delivery waits for (`usize::MAX`: none).
    head: usize,
    stopped: bool,
}

/// An item handed out by [`Schedule::next`]; give it back to [`Schedule::done`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ticket {
    pub index: usize,
    class: SizeClass,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SizeClass {
    Large,
    Medium,
    Small,
}

impl Schedule {
    /// A schedule for items of these sizes.
    pub fn new(sizes: impl Iterator<Item = u64>) -> Schedule {
        let mut queues = Queues {
            head: usize::MAX,
            ..Queues::default()
        };
        let mut large: Vec<(u64, usize)> = Vec::new();
        for (i, size) in sizes.enumerate() {
            if size >= LARGE_FILE {
                large.push((size, i));
            } else if size >= BESIDE_LARGE {
                queues.rest.push_back((i, SizeClass::Medium));
            } else {
                queues.rest.push_back((i, SizeClass::Small));
            }
        }
        // Largest first: the longest parses start early, not at the end alone.
        large.sort_by_key(|&(size, i)| (std::cmp::Reverse(size), i));
        queues.large = large.into_iter().map(|(_, i)| i).collect();
        Schedule {
            state: std::sync::Mutex::new(queues),
            changed: std::sync::Condvar::new(),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Queues> {
        // A poisoned lock only means a worker panicked; the queues stay valid.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The next item to work on; `None` when all are handed out (or after [`stop`]).
    ///
    /// [`stop`]: Schedule::stop
    pub fn next(&self) -> Option<Ticket> {
        let mut q = self.lock();
        loop {
            if q.stopped {
                return None;
            }
            if !q.large_running && q.medium_running == 0 {
                if let Some(index) = q.large.pop_front() {
                    q.large_running = true;
                    return Some(Ticket {
                        index,
                        class: SizeClass::Large,
                    });
                }
            }
            // No medium item while a large one runs, nor while one waits: it starts
            // as soon as the medium ones running now are done.
            let medium_ok = !q.large_running && q.large.is_empty();
            // The item delivery waits for, alone beside the large one.
            let head_ok = |q: &Queues, index: usize| index == q.head && q.medium_running == 0;
            if medium_ok || q.deferred.front().is_some_and(|&i| head_ok(&q, i)) {
                if let Some(index) = q.deferred.pop_front() {
                    q.medium_running += 1;
                    return Some(Ticket {
                        index,
                        class: SizeClass::Medium,
                    });
                }
            }
            while let Some((index, class)) = q.rest.pop_front() {
                match class {
                    SizeClass::Medium if !medium_ok && !head_ok(&q, index) => {
                        q.deferred.push_back(index)
                    }
                    SizeClass::Medium => {
                        q.medium_running += 1;
                        return Some(Ticket { index, class });
                    }
                    _ => return Some(Ticket { index, class }),
                }
            }
            if q.large.is_empty() && q.deferred.is_empty() {
                return None;
            }
            q = self.changed.wait(q).unwrap_or_else(|e| e.into_inner());
        }
    }

    /// Marks `ticket`'s item finished.
    pub fn done(&self, ticket: Ticket) {
        match ticket.class {
            SizeClass::Small => return,
            SizeClass::Large => self.lock().large_running = false,
            SizeClass::Medium => self.lock().medium_running -= 1,
        }
        self.changed.notify_all();
        // A large tree is gone by now, but its thread's allocator arena would keep the
        // pages, and later results would pile up beside them in other arenas.
        if ticket.class == SizeClass::Large {
            release_freed_memory();
        }
    }

    /// Tells the schedule which item in-order delivery waits for now (all before it
    /// are delivered).
    pub fn wait_for(&self, index: usize) {
        let mut q = self.lock();
        if q.head != index {
            q.head = index;
            drop(q);
            self.changed.notify_all();
        }
    }

    /// Hands out nothing more.
    pub fn stop(&self) {
        self.lock().stopped = true;
        self.changed.notify_all();
    }
}

/// Results waiting for their turn.
struct Reorder<R> {
    pending: BTreeMap<usize, R>,
    expected: usize,
}

impl<R> Reorder<R> {
    /// Adds a result and hands every result now in line to `sink`; false when the
    /// sink asked to stop.
    fn push(&mut self, i: usize, r: R, sink: &mut impl FnMut(usize, R) -> bool) -> bool {
        self.pending.insert(i, r);
        while let Some(r) = self.pending.remove(&self.expected) {
            self.expected += 1;
            if !sink(self.expected - 1, r) {
                return false;
            }
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::Ordering;

    #[test]
    fn results_arrive_in_input_order() {
        let items: Vec<u64> = (0..500).collect();
        let mut seen = Vec::new();
        ordered_map(
            &items,
            |x| {
                // Uneven work so that threads finish out of order.
                std::thread::sleep(std::time::Duration::from_micros((x % 7) * 50));
                x * 2
            },
            |_, r| {
                seen.push(r);
                true
            },
        );
        assert_eq!(seen, items.iter().map(|x| x * 2).collect::<Vec<_>>());
    }

    /// (index, result) pairs.
    type Seen = Vec<(usize, u64)>;

    /// Items of every size class mapped to `item + 1`: what the sink saw, and what it
    /// should have seen (in input order).
    fn deliver(delivery: Delivery) -> (Seen, Seen) {
        let items: Vec<u64> = (0..300)
            .map(|i| match i % 37 {
                0 => LARGE_FILE + i,
                5 => BESIDE_LARGE + i,
                _ => i,
            })
            .collect();
        let mut seen = Vec::new();
        map_sized(
            &items,
            |&x| x,
            |x| x + 1,
            delivery,
            |i, r| {
                seen.push((i, r));
                true
            },
        );
        let want = items.iter().enumerate().map(|(i, x)| (i, x + 1)).collect();
        (seen, want)
    }

    #[test]
    fn size_classes_do_not_change_delivery_order() {
        let (seen, want) = deliver(Delivery::InOrder);
        assert_eq!(seen, want);
    }

    #[test]
    fn unordered_delivery_sees_every_item_once() {
        let (mut seen, want) = deliver(Delivery::AsReady);
        seen.sort_unstable();
        assert_eq!(seen, want);
    }

    #[test]
    fn only_small_items_run_beside_a_large_one() {
        use std::sync::atomic::AtomicUsize;
        let large_in = AtomicUsize::new(0);
        let medium_in = AtomicUsize::new(0);
        let small_beside_large = AtomicUsize::new(0);
        let sizes: Vec<u64> = (0..400)
            .map(|i| match i % 50 {
                0 => LARGE_FILE * 2,
                7 | 8 => LARGE_FILE / 2,
                _ => 10_000 + i,
            })
            .collect();
        map_sized(
            &sizes,
            |&size| size,
            |&size| {
                if size >= LARGE_FILE {
                    assert_eq!(large_in.fetch_add(1, Ordering::SeqCst), 0, "two large");
                    assert_eq!(medium_in.load(Ordering::SeqCst), 0, "medium beside large");
                    std::thread::sleep(std::time::Duration::from_millis(5));
                    large_in.fetch_sub(1, Ordering::SeqCst);
                } else if size >= BESIDE_LARGE {
                    medium_in.fetch_add(1, Ordering::SeqCst);
                    assert_eq!(large_in.load(Ordering::SeqCst), 0, "medium beside large");
                    std::thread::sleep(std::time::Duration::from_micros(500));
                    medium_in.fetch_sub(1, Ordering::SeqCst);
                } else {
                    if large_in.load(Ordering::SeqCst) > 0 {
                        small_beside_large.fetch_add(1, Ordering::SeqCst);
                    }
                    std::thread::sleep(std::time::Duration::from_micros(200));
                }
                size
            },
            // In order, the medium item delivery waits for may run beside a large one.
            Delivery::AsReady,
            |_, _| true,
        );
        if threads() > 1 {
            // The other workers kept busy while the large items ran.
            assert!(small_beside_large.load(Ordering::SeqCst) > 0);
        }
    }

    #[test]
    fn large_items_go_first_largest_first() {
        let sizes = [10, LARGE_FILE, 20, LARGE_FILE * 3, BESIDE_LARGE, 30];
        let schedule = Schedule::new(sizes.iter().copied());
        let first = schedule.next().expect("an item");
        assert_eq!(first.index, 3);
        // The medium item waits for the large one; small ones do not.
        let second = schedule.next().expect("an item");
        assert_eq!(second.index, 0);
        schedule.done(first);
        schedule.done(second);
        assert_eq!(schedule.next().map(|t| t.index), Some(1));
    }

    #[test]
    fn the_medium_item_delivery_waits_for_runs_beside_a_large_one() {
        let sizes = [10, BESIDE_LARGE, BESIDE_LARGE + 1, LARGE_FILE * 2, 20];
        let schedule = Schedule::new(sizes.iter().copied());
        let large = schedule.next().expect("the large item");
        assert_eq!(large.index, 3);
        // Both medium items are set aside; the small one goes.
        let small = schedule.next().expect("a small item");
        assert_eq!(small.index, 0);
        schedule.done(small);
        // Item 0 is delivered: delivery waits for item 1, which may now run.
        schedule.wait_for(1);
        let head = schedule.next().expect("the item delivery waits for");
        assert_eq!(head.index, 1);
        // Not the next medium one beside it: the last small item goes.
        assert_eq!(schedule.next().map(|t| t.index), Some(4));
        schedule.done(head);
        schedule.wait_for(2);
        assert_eq!(schedule.next().map(|t| t.index), Some(2));
        schedule.done(large);
    }

    #[test]
    fn sink_can_stop_early() {
        let items: Vec<u64> = (0..100).collect();
        let mut seen = 0;
        ordered_map(
            &items,
            |x| *x,
            |_, _| {
                seen += 1;
                seen < 10
            },
        );
        assert_eq!(seen, 10);
    }
}
