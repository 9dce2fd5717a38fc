/*!
An ordered parallel map: workers process items in any order, the caller's sink sees the
results in input order, as soon as each is next in line.

Collecting every result before printing holds all matches of a whole tree in memory at
once (hundreds of MB for a pattern without a literal on a large tree); streaming through
a small reorder buffer keeps memory proportional to the work in flight.
*/

use std::collections::BTreeMap;
use std::sync::atomic::AtomicBool;
use std::sync::atomic::AtomicUsize;
use std::sync::atomic::Ordering;
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
    let order: Vec<usize> = (0..items.len()).collect();
    ordered_map_by(items, &order, work, sink)
}

/// [`ordered_map`], working on the items in `order` (a permutation of their indices);
/// `sink` still sees them in input order.
pub fn ordered_map_by<T, R, W, S>(items: &[T], order: &[usize], work: W, mut sink: S)
where
    T: Sync,
    R: Send,
    W: Fn(&T) -> R + Sync,
    S: FnMut(usize, R) -> bool,
{
    release_freed_memory();
    let n = threads().min(items.len());
    if n <= 1 {
        // One worker: `order` only matters for memory, and input order needs no buffer.
        for (i, item) in items.iter().enumerate() {
            if !sink(i, work(item)) {
                return;
            }
        }
        return;
    }
    let next = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    std::thread::scope(|scope| {
        let (tx, rx) = mpsc::channel::<(usize, R)>();
        // The calling thread is one of the `n` workers: memory its allocator already
        // holds (the file walk's) is reused for parsing instead of sitting beside it.
        for _ in 1..n {
            let tx = tx.clone();
            let (next, stop, work) = (&next, &stop, &work);
            scope.spawn(move || loop {
                if stop.load(Ordering::Relaxed) {
                    break;
                }
                let k = next.fetch_add(1, Ordering::Relaxed);
                let Some((i, item)) = order.get(k).and_then(|&i| Some((i, items.get(i)?))) else {
                    break;
                };
                if tx.send((i, work(item))).is_err() {
                    break;
                }
            });
        }
        drop(tx);
        let mut reorder = Reorder {
            pending: BTreeMap::new(),
            expected: 0,
        };
        loop {
            while let Ok((i, r)) = rx.try_recv() {
                if !reorder.push(i, r, &mut sink) {
                    stop.store(true, Ordering::Relaxed);
                    return;
                }
            }
            let k = next.fetch_add(1, Ordering::Relaxed);
            let Some((i, item)) = order.get(k).and_then(|&i| Some((i, items.get(i)?))) else {
                break;
            };
            let r = work(item);
            if !reorder.push(i, r, &mut sink) {
                stop.store(true, Ordering::Relaxed);
                return;
            }
        }
        for (i, r) in rx {
            if !reorder.push(i, r, &mut sink) {
                stop.store(true, Ordering::Relaxed);
                return;
            }
        }
    });
}

/// Hands heap memory freed so far back to the OS. glibc keeps it otherwise, and the
/// peak would be the file walk's leftovers plus the largest parse tree.
pub fn release_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        extern "C" {
            fn malloc_trim(pad: usize) -> std::os::raw::c_int;
        }
        // SAFETY: malloc_trim only returns free pages to the OS; it has no preconditions.
        unsafe {
            malloc_trim(0);
        }
    }
}

/// Files at least this large are parsed alone (see [`SizeGate`]).
pub const LARGE_FILE: usize = 256 * 1024;

/// While a large file is parsed, at most this many bytes of other files are parsed
/// beside it (their trees then add a few MB to the peak, not another large tree).
pub const BESIDE_LARGE: usize = 64 * 1024;

/// Keeps the parse of a large file from overlapping other large parses.
///
/// A parse tree takes around 70 times its file's size in memory, so a process's peak
/// is the largest file's tree plus whatever is parsed beside it. Large files are parsed
/// one at a time, with only [`BESIDE_LARGE`] bytes of small files beside them, which
/// bounds the peak near the largest tree while the other cores keep working.
#[derive(Debug, Default)]
pub struct SizeGate {
    state: std::sync::Mutex<GateState>,
    changed: std::sync::Condvar,
}

#[derive(Debug, Default)]
struct GateState {
    /// A large file is being parsed, or waits for small ones to make room.
    large: bool,
    /// Bytes of small files being parsed.
    small_bytes: usize,
}

/// Held while parsing; releases the gate when dropped.
pub struct GateGuard<'a> {
    gate: &'a SizeGate,
    size: usize,
    large: bool,
}

impl Drop for GateGuard<'_> {
    fn drop(&mut self) {
        {
            let mut st = self.gate.lock();
            if self.large {
                st.large = false;
            } else {
                st.small_bytes = st.small_bytes.saturating_sub(self.size);
            }
        }
        self.gate.changed.notify_all();
        // The large tree is gone by now, but its thread's allocator arena would keep
        // the pages, and later results would pile up beside them in other arenas.
        if self.large {
            release_freed_memory();
        }
    }
}

impl SizeGate {
    fn lock(&self) -> std::sync::MutexGuard<'_, GateState> {
        // A poisoned lock only means another parse panicked; the counts stay valid.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn wait<'a>(
        &self,
        st: std::sync::MutexGuard<'a, GateState>,
    ) -> std::sync::MutexGuard<'a, GateState> {
        self.changed.wait(st).unwrap_or_else(|e| e.into_inner())
    }

    /// Waits until a file of `size` bytes may be parsed.
    pub fn enter(&self, size: usize) -> GateGuard<'_> {
        let mut st = self.lock();
        if size >= LARGE_FILE {
            while st.large {
                st = self.wait(st);
            }
            // Claim the slot first so that small files stop crowding in, then wait
            // for those in flight to shrink under the budget.
            st.large = true;
            while st.small_bytes > BESIDE_LARGE {
                st = self.wait(st);
            }
        } else {
            while st.large && st.small_bytes + size > BESIDE_LARGE {
                st = self.wait(st);
            }
            st.small_bytes += size;
        }
        GateGuard {
            gate: self,
            size,
            large: size >= LARGE_FILE,
        }
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

    #[test]
    fn work_order_does_not_change_delivery_order() {
        let items: Vec<u64> = (0..300).collect();
        let order: Vec<usize> = (0..300).rev().collect();
        let mut seen = Vec::new();
        ordered_map_by(
            &items,
            &order,
            |x| x + 1,
            |i, r| {
                seen.push((i, r));
                true
            },
        );
        assert_eq!(
            seen,
            (0..300).map(|i| (i, i as u64 + 1)).collect::<Vec<_>>()
        );
    }

    #[test]
    fn size_gate_bounds_what_is_parsed_beside_a_large_file() {
        use std::sync::atomic::AtomicUsize;
        let gate = SizeGate::default();
        let large_in = AtomicUsize::new(0);
        let small_beside = AtomicUsize::new(0);
        let worst = AtomicUsize::new(0);
        let sizes: Vec<usize> = (0..400)
            .map(|i| match i % 50 {
                0 => LARGE_FILE * 2,
                7 => LARGE_FILE / 2,
                9 => 30_000,
                _ => 10_000 + i,
            })
            .collect();
        ordered_map(
            &sizes,
            |&size| {
                let _g = gate.enter(size);
                if size >= LARGE_FILE {
                    assert_eq!(
                        large_in.fetch_add(1, Ordering::SeqCst),
                        0,
                        "two large at once"
                    );
                    worst.fetch_max(small_beside.load(Ordering::SeqCst), Ordering::SeqCst);
                    std::thread::sleep(std::time::Duration::from_millis(2));
                    large_in.fetch_sub(1, Ordering::SeqCst);
                } else {
                    let now = small_beside.fetch_add(size, Ordering::SeqCst) + size;
                    if large_in.load(Ordering::SeqCst) > 0 {
                        worst.fetch_max(now, Ordering::SeqCst);
                    }
                    std::thread::sleep(std::time::Duration::from_micros(200));
                    small_beside.fetch_sub(size, Ordering::SeqCst);
                }
                size
            },
            |_, _| true,
        );
        // Racy observation, so allow one small file of slack over the budget.
        assert!(worst.load(Ordering::SeqCst) <= BESIDE_LARGE + 20_000);
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
