/*!
An ordered parallel map: workers process items in any order, the caller's sink sees the
results in input order, as soon as each is next in line.

Collecting every result before printing holds all matches of a whole tree in memory at
once (hundreds of MB for a pattern without a literal on a large tree); streaming through
a small reorder buffer keeps memory proportional to the work in flight.
*/

use std::collections::BTreeMap;
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
pub fn ordered_map<T, R, W, S>(items: &[T], work: W, mut sink: S)
where
    T: Sync,
    R: Send,
    W: Fn(&T) -> R + Sync,
    S: FnMut(usize, R) -> bool,
{
    let n = threads().min(items.len());
    if n <= 1 {
        for (i, item) in items.iter().enumerate() {
            if !sink(i, work(item)) {
                return;
            }
        }
        return;
    }
    let next = AtomicUsize::new(0);
    let stop = std::sync::atomic::AtomicBool::new(false);
    std::thread::scope(|scope| {
        let (tx, rx) = mpsc::channel::<(usize, R)>();
        for _ in 0..n {
            let tx = tx.clone();
            let (next, stop, work) = (&next, &stop, &work);
            scope.spawn(move || loop {
                if stop.load(Ordering::Relaxed) {
                    break;
                }
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(item) = items.get(i) else { break };
                if tx.send((i, work(item))).is_err() {
                    break;
                }
            });
        }
        drop(tx);
        let mut pending: BTreeMap<usize, R> = BTreeMap::new();
        let mut expected = 0usize;
        for (i, result) in rx {
            pending.insert(i, result);
            while let Some(r) = pending.remove(&expected) {
                expected += 1;
                if !sink(expected - 1, r) {
                    stop.store(true, Ordering::Relaxed);
                    return;
                }
            }
        }
    });
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
