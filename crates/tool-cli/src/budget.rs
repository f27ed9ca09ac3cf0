//! A memory budget for one stage of a run whose size the input decides (a user's SQL
//! query): a watchdog thread reads the process's resident memory and, past the budget,
//! removes what the run staged and ends it with exit code 2, naming the budget and how to
//! raise it. The engine doing the work (polars) cannot be stopped from outside; ending
//! the process is what bounds it.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

use crate::Tool;

/// How often the watchdog reads the resident memory: allocations at a few GB/s overshoot
/// the budget by at most a few tens of MB.
const POLL: Duration = Duration::from_millis(10);

/// A running budget; dropping it stops the watchdog.
#[derive(Debug)]
pub struct MemoryBudget {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
    /// The budget in force, in bytes of resident memory above what the process held when
    /// it started.
    pub bytes: u64,
}

impl MemoryBudget {
    /// Starts the watchdog for `what` (as the error names it, e.g. "the SQL query"):
    /// `bytes` of resident memory above the process's at this call, or what the
    /// environment variable `env` says (a number of bytes, with an optional K, M or G
    /// suffix). Where resident memory cannot be read (no `/proc`), nothing is watched.
    pub fn start(tool: Tool, what: &'static str, env: &'static str, bytes: u64) -> MemoryBudget {
        let bytes = std::env::var(env)
            .ok()
            .and_then(|v| parse_bytes(&v))
            .unwrap_or(bytes);
        let stop = Arc::new(AtomicBool::new(false));
        let thread = resident_bytes().and_then(|start| {
            let stop = Arc::clone(&stop);
            std::thread::Builder::new()
                .name("memory-budget".into())
                .spawn(move || {
                    while !stop.load(Ordering::SeqCst) {
                        if let Some(now) = resident_bytes()
                            && now.saturating_sub(start) > bytes
                        {
                            eprintln!(
                                "{}: error: {what} took more than its memory budget of {} \
                                 (resident memory above the {} the run held before it); \
                                 nothing was written. Raise the budget with {env}=BYTES \
                                 (e.g. {env}=16G), or narrow the work",
                                tool.0,
                                shown(bytes),
                                shown(start)
                            );
                            output_file::abandon_and_exit(2);
                        }
                        std::thread::sleep(POLL);
                    }
                })
                .ok()
        });
        MemoryBudget {
            stop,
            thread,
            bytes,
        }
    }
}

impl Drop for MemoryBudget {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// The process's resident memory (`VmRSS` of `/proc/self/status`), in bytes.
fn resident_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    let kb: u64 = line
        .trim_start_matches("VmRSS:")
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()?;
    Some(kb * 1024)
}

/// `4096`, `512K`, `256M`, `16G` (powers of 1024) as bytes; `None` for anything else or 0.
fn parse_bytes(text: &str) -> Option<u64> {
    let t = text.trim();
    let (digits, shift) = match t.char_indices().last()? {
        (i, 'k' | 'K') => (&t[..i], 10),
        (i, 'm' | 'M') => (&t[..i], 20),
        (i, 'g' | 'G') => (&t[..i], 30),
        _ => (t, 0),
    };
    let n: u64 = digits.trim().parse().ok()?;
    n.checked_mul(1 << shift).filter(|&b| b > 0)
}

/// Bytes for a message: MiB or GiB with one decimal.
fn shown(bytes: u64) -> String {
    if bytes >= 1 << 30 {
        format!("{:.1} GiB", bytes as f64 / (1u64 << 30) as f64)
    } else {
        format!("{:.1} MiB", bytes as f64 / (1u64 << 20) as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_with_their_suffixes() {
        assert_eq!(parse_bytes("4096"), Some(4096));
        assert_eq!(parse_bytes("512K"), Some(512 << 10));
        assert_eq!(parse_bytes("256m"), Some(256 << 20));
        assert_eq!(parse_bytes(" 16G "), Some(16 << 30));
        for bad in ["", "0", "G", "-1G", "1T", "1.5G", "99999999999999999999G"] {
            assert_eq!(parse_bytes(bad), None, "{bad}");
        }
    }

    #[test]
    fn the_resident_memory_is_read_where_proc_exists() {
        if std::path::Path::new("/proc/self/status").exists() {
            let rss = resident_bytes().expect("VmRSS is readable");
            assert!(rss > 0);
        }
    }

    #[test]
    fn a_budget_not_exceeded_stops_with_its_guard() {
        let budget = MemoryBudget::start(
            Tool("test"),
            "a test",
            "TRACEWISE_TEST_NO_SUCH_VAR",
            1 << 40,
        );
        assert_eq!(budget.bytes, 1 << 40);
        drop(budget);
    }
}
