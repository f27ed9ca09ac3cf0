//! The progress bar: bytes read of each trace file's size, drawn on stderr once a
//! file has taken about a second, only when stderr is a terminal and not under CI. It
//! plugs into chrome-reader's progress hook, so the library crates know nothing of it.

use std::io::IsTerminal;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use chrome_reader::progress::{ReadProgress, set_progress_hook};
use indicatif::{MultiProgress, ProgressBar, ProgressStyle};

/// Reads shorter than this show no bar.
const DELAY: Duration = Duration::from_secs(1);

/// Whether a bar may be drawn: stderr is a terminal and no CI variable is set.
pub fn wanted() -> bool {
    std::io::stderr().is_terminal()
        && std::env::var_os("CI").is_none()
        && std::env::var_os("TF_BUILD").is_none()
        && std::env::var("TERM").map_or(true, |t| t != "dumb")
}

/// Installs the progress bar for this process's trace reads, if [`wanted`].
pub fn install() {
    if !wanted() {
        return;
    }
    let multi = MultiProgress::new();
    set_progress_hook(Some(Arc::new(move |path: &Path, total: u64| {
        Box::new(Bar {
            multi: multi.clone(),
            name: path.file_name().map_or_else(
                || path.display().to_string(),
                |n| n.to_string_lossy().into_owned(),
            ),
            total,
            start: Instant::now(),
            bar: None,
        }) as Box<dyn ReadProgress>
    })));
}

struct Bar {
    multi: MultiProgress,
    name: String,
    total: u64,
    start: Instant,
    bar: Option<ProgressBar>,
}

impl ReadProgress for Bar {
    fn advance(&mut self, bytes: u64) {
        if self.bar.is_none() {
            if self.start.elapsed() < DELAY || bytes >= self.total {
                return;
            }
            let style = ProgressStyle::with_template(
                "{msg} [{bar:30}] {bytes}/{total_bytes} ({bytes_per_sec}, {eta})",
            )
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> ");
            let bar = self.multi.add(ProgressBar::new(self.total));
            bar.set_style(style);
            bar.set_message(std::mem::take(&mut self.name));
            self.bar = Some(bar);
        }
        if let Some(bar) = &self.bar {
            bar.set_position(bytes.min(self.total));
        }
    }
}

impl Drop for Bar {
    fn drop(&mut self) {
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use indicatif::ProgressDrawTarget;

    fn bar(started: Duration) -> Bar {
        Bar {
            multi: MultiProgress::with_draw_target(ProgressDrawTarget::hidden()),
            name: "trace.json.gz".to_string(),
            total: 1000,
            start: Instant::now() - started,
            bar: None,
        }
    }

    #[test]
    fn no_bar_during_the_first_second_then_bytes_of_the_size() {
        let mut quick = bar(Duration::ZERO);
        quick.advance(500);
        assert!(quick.bar.is_none());
        let mut slow = bar(Duration::from_secs(2));
        slow.advance(500);
        let shown = slow.bar.as_ref().expect("a bar after a second");
        assert_eq!((shown.position(), shown.length()), (500, Some(1000)));
        // A file read to the end before a bar was shown never shows one.
        let mut done = bar(Duration::from_secs(2));
        done.advance(1000);
        assert!(done.bar.is_none());
    }
}
