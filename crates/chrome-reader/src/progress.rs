//! Progress of reading trace files: a process-wide hook, which a tool sets to draw a
//! progress bar, told how many bytes of each file have been read. Library crates pass
//! nothing down: every file opened through [`crate::open`] (and [`track`]) reports to it.

use std::io::Read;
use std::path::Path;
use std::sync::{Arc, RwLock};

/// One file's progress, as the hook hands it out; dropping it means the file is read
/// (or reading stopped).
pub trait ReadProgress: Send {
    /// `bytes` of the file's `total` (see [`ProgressHook`]) have been read so far.
    fn advance(&mut self, bytes: u64);
}

/// Called once for each file opened, with its path and size in bytes.
pub type ProgressHook = dyn Fn(&Path, u64) -> Box<dyn ReadProgress> + Send + Sync;

static HOOK: RwLock<Option<Arc<ProgressHook>>> = RwLock::new(None);

/// Sets (or, with `None`, removes) the process-wide progress hook.
pub fn set_progress_hook(hook: Option<Arc<ProgressHook>>) {
    *HOOK.write().unwrap_or_else(|e| e.into_inner()) = hook;
}

/// About this many bytes are read between two reports.
const STEP: u64 = 1 << 20;

/// `inner` (the file at `path`, `total` bytes long), reporting the bytes read from it to
/// the progress hook if one is set.
pub fn track<R: Read>(path: &Path, total: u64, inner: R) -> Tracked<R> {
    Tracked {
        inner,
        read: 0,
        reported: 0,
        progress: report(path, total),
    }
}

/// The hook's report for the file at `path` (`total` bytes long), if a hook is set: for a
/// file that is not read through a [`Tracked`] reader (a mapped one, see `input.rs`).
pub(crate) fn report(path: &Path, total: u64) -> Option<Box<dyn ReadProgress>> {
    let hook = HOOK.read().unwrap_or_else(|e| e.into_inner()).clone();
    hook.map(|hook| hook(path, total))
}

/// A reader that reports its progress (see [`track`]).
pub struct Tracked<R> {
    inner: R,
    read: u64,
    reported: u64,
    progress: Option<Box<dyn ReadProgress>>,
}

impl<R: Read> Read for Tracked<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.read += n as u64;
        if let Some(progress) = self.progress.as_mut()
            && (self.read - self.reported >= STEP || n == 0)
        {
            self.reported = self.read;
            progress.advance(self.read);
        }
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    /// Each file opened: its path, its size, the last bytes-read report.
    type Entries = Arc<Mutex<Vec<(String, u64, Option<u64>)>>>;

    struct Log(Entries, usize);

    impl ReadProgress for Log {
        fn advance(&mut self, bytes: u64) {
            self.0.lock().expect("not poisoned")[self.1].2 = Some(bytes);
        }
    }

    #[test]
    fn the_hook_hears_every_opened_file_read_to_its_size() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/chrome");
        let mut files: Vec<_> = ["ok", "odd"]
            .iter()
            .flat_map(|dir| std::fs::read_dir(root.join(dir)).expect("fixtures"))
            .map(|e| e.expect("entry").path())
            .filter(|p| p.to_string_lossy().ends_with(".json"))
            .collect();
        files.sort();
        assert!(files.len() >= 5, "{} fixtures", files.len());
        // And one gzip file, whose compressed bytes are what is counted.
        let gz = std::env::temp_dir().join(format!("progress-{}.json.gz", std::process::id()));
        let mut enc = flate2::write::GzEncoder::new(
            std::fs::File::create(&gz).expect("temp file"),
            flate2::Compression::default(),
        );
        std::io::Write::write_all(&mut enc, &std::fs::read(&files[0]).expect("fixture"))
            .expect("writes");
        enc.finish().expect("writes");
        files.push(gz.clone());
        let log = Arc::new(Mutex::new(Vec::new()));
        let hook_log = Arc::clone(&log);
        set_progress_hook(Some(Arc::new(move |path: &Path, total: u64| {
            let mut l = hook_log.lock().expect("not poisoned");
            l.push((path.display().to_string(), total, None));
            Box::new(Log(Arc::clone(&hook_log), l.len() - 1)) as Box<dyn ReadProgress>
        })));
        // Read, and loaded (a plain file mapped, whose progress is how far it is cut).
        for file in &files {
            let mut text = Vec::new();
            crate::open(file)
                .expect("opens")
                .read_to_end(&mut text)
                .expect("reads");
            crate::load_with(file, &crate::LoadConfig::with_threads(2)).expect("loads");
        }
        set_progress_hook(None);
        let log = log.lock().expect("not poisoned");
        for file in &files {
            let size = std::fs::metadata(file).expect("metadata").len();
            let name = file.display().to_string();
            let entries: Vec<_> = log
                .iter()
                .filter(|e| e.0 == name)
                .map(|e| (e.1, e.2))
                .collect();
            assert_eq!(entries, [(size, Some(size)); 2], "{name}");
        }
        std::fs::remove_file(&gz).expect("removes its temp file");
    }
}
