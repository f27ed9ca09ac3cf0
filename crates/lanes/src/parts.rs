//! Work over consecutive parts of a trace's events on several threads (the compaction's
//! extraction, check and remap): how many threads, where the parts start, and running them.

/// Threads for extracting and checking the slices of a trace of `events` events: more
/// than one from 100k events, where the two passes take tens of milliseconds, the longest
/// stretch of the compaction on one thread otherwise. Since the first read parses on
/// every core, per-thread allocator arenas exist anyway: peak RSS on the seven shared
/// traces over 10 MB is the same within noise with 2 threads from 10k events as with 1
/// below 1M (3 runs each, 2026-12-01).
pub(crate) fn threads_for(events: usize) -> usize {
    if events < 100_000 {
        1
    } else {
        std::thread::available_parallelism().map_or(1, |n| n.get().min(4))
    }
}

/// Runs `f` over `threads` consecutive parts of `0..len`; results in order.
pub(crate) fn in_parallel<T: Send>(
    len: usize,
    threads: usize,
    f: impl Fn(std::ops::Range<usize>) -> T + Sync,
) -> Vec<T> {
    let threads = threads.max(1);
    let step = len.div_ceil(threads).max(1);
    let ranges: Vec<_> = (0..threads)
        .map(|k| (k * step).min(len)..((k + 1) * step).min(len))
        .collect();
    in_ranges(ranges, f)
}

/// At most `threads` consecutive parts of `0..items.len()` that cover it, each holding
/// about as many items that satisfy `counted` as the others.
pub(crate) fn ranges_by_count<T>(
    items: &[T],
    threads: usize,
    counted: impl Fn(&T) -> bool,
) -> Vec<std::ops::Range<usize>> {
    let threads = threads.max(1);
    let total = items.iter().filter(|&it| counted(it)).count();
    let per_part = total.div_ceil(threads).max(1);
    let mut ranges = Vec::with_capacity(threads);
    let (mut start, mut seen) = (0, 0);
    for (idx, it) in items.iter().enumerate() {
        if counted(it) {
            seen += 1;
            if seen == per_part && ranges.len() + 1 < threads {
                ranges.push(start..idx + 1);
                (start, seen) = (idx + 1, 0);
            }
        }
    }
    if start < items.len() || ranges.is_empty() {
        ranges.push(start..items.len());
    }
    ranges
}

/// Runs `f` over each of `ranges`, one thread each when there are several; results in
/// order.
pub(crate) fn in_ranges<T: Send>(
    ranges: Vec<std::ops::Range<usize>>,
    f: impl Fn(std::ops::Range<usize>) -> T + Sync,
) -> Vec<T> {
    if ranges.len() == 1 {
        return ranges.into_iter().map(f).collect();
    }
    std::thread::scope(|scope| {
        let f = &f;
        let handles: Vec<_> = ranges
            .into_iter()
            .map(|r| scope.spawn(move || f(r)))
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
            .collect()
    })
}
