//! Per-rank work on plain threads, not on a rayon pool.
//!
//! A rank's read and write call polars, which runs on its own rayon pool. A worker of
//! another rayon pool that waits for polars does not sleep: it runs other queued jobs of
//! its own pool on the same stack, so with thousands of ranks each rank's job nests in the
//! one before and the stack overflows (issue 45, finding 4: `--export` of 2,000 ranks).
//! Plain threads that take the next item from a shared counter wait without nesting.

use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Stack of each worker: room for a rank's parse and polars' calls, which ran on rayon
/// workers' 2 MiB before and never nest here.
const STACK_BYTES: usize = 8 << 20;

/// `f(i, &items[i])` for every item on at most `workers` threads, results in item order.
/// A worker that cannot be started leaves its share to the others (and to the calling
/// thread, when none can be).
pub(crate) fn each<T: Sync, R: Send>(
    items: &[T],
    workers: usize,
    f: impl Fn(usize, &T) -> R + Sync,
) -> Vec<R> {
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<R>>> = Mutex::new((0..items.len()).map(|_| None).collect());
    let work = || {
        loop {
            let i = next.fetch_add(1, Ordering::Relaxed);
            let Some(item) = items.get(i) else {
                break;
            };
            let r = f(i, item);
            if let Ok(mut slots) = results.lock() {
                slots[i] = Some(r);
            }
        }
    };
    std::thread::scope(|scope| {
        for _ in 0..workers.clamp(1, items.len().max(1)) {
            let spawned = std::thread::Builder::new()
                .stack_size(STACK_BYTES)
                .spawn_scoped(scope, work);
            if spawned.is_err() {
                break;
            }
        }
        // The calling thread takes part too: items left when no worker could start.
        work();
    });
    results
        .into_inner()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .into_iter()
        .flatten()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_come_in_item_order_from_every_worker_count() {
        let items: Vec<u64> = (0..1000).collect();
        for workers in [0, 1, 3, 64] {
            let out = each(&items, workers, |i, x| (i as u64) * 10 + x);
            assert_eq!(out, items.iter().map(|x| x * 11).collect::<Vec<_>>());
        }
        assert!(each::<u8, u8>(&[], 4, |_, x| *x).is_empty());
    }
}
