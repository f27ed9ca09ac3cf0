//! The Chrome trace files frames are read from: a Chrome trace input's own files, or, for
//! any other format the loader reads (Nsight Systems, ROCm), each capture written as
//! Chrome trace JSON into a private temporary directory first, so that frames, SQL and
//! the HTA-style analyses see every format through one event layout. The directory is an
//! `output_file::ScratchDir`: removed when done, and on SIGINT, SIGTERM or SIGHUP.

use output_file::FsError;
use std::path::{Path, PathBuf};

use crate::Error;

/// Chrome trace files standing for an input; the converted ones are removed when this is
/// dropped.
#[derive(Debug)]
pub struct ChromeSources {
    /// The Chrome trace files, in load order.
    pub paths: Vec<PathBuf>,
    /// For each of `paths`, the file the user gave (differs only for converted captures).
    pub originals: Vec<PathBuf>,
    /// The files of a rank directory not read as ranks (compaction outputs), as notes.
    pub notes: Vec<load::Note>,
    /// The temporary directory of converted captures.
    _converted: Option<output_file::ScratchDir>,
}

impl ChromeSources {
    /// Whether the files are converted captures (not the user's own files).
    pub fn is_converted(&self) -> bool {
        self._converted.is_some()
    }

    /// The file the user gave for `path`, one of [`ChromeSources::paths`].
    pub fn original(&self, path: &Path) -> PathBuf {
        self.paths
            .iter()
            .position(|p| p == path)
            .map_or_else(|| path.to_path_buf(), |i| self.originals[i].clone())
    }
}

/// The Chrome trace files for `input` (see the module docs).
pub fn chrome_sources(input: &Path) -> Result<ChromeSources, Error> {
    let chrome = match load::find(input)? {
        load::Found::ChromeDir(_) => true,
        load::Found::Files(files) => files.iter().all(|(_, k)| *k == load::Kind::Chrome),
    };
    if chrome {
        let paths = crate::trace_paths(input)?;
        return Ok(ChromeSources {
            originals: paths.clone(),
            paths,
            notes: load::rank_notes(input, []),
            _converted: None,
        });
    }
    let loaded = load::load(input)?;
    let dir = output_file::ScratchDir::create("tracewise-frames-").map_err(|source| {
        Error::Io(FsError {
            path: std::env::temp_dir(),
            action: "cannot create a temporary directory for the converted captures",
            source,
        })
    })?;
    let mut paths = Vec::new();
    let mut originals = Vec::new();
    for (i, l) in loaded.iter().enumerate() {
        // The frame takes its rank from the file name's first number: `rank<N>` carries
        // the capture's rank, and a letter-only name none.
        let name = match l.rank {
            Some(rank) => format!("rank{rank}.json"),
            None => format!("capture-{}.json", letters(i)),
        };
        let path = dir.path().join(name);
        let io = |source| {
            Error::Io(FsError {
                path: path.clone(),
                action: "cannot write the converted capture",
                source,
            })
        };
        let file = std::fs::File::create_new(&path).map_err(io)?;
        load::chrome::write_chrome_trace(&l.capture, file).map_err(io)?;
        paths.push(path.clone());
        originals.push(l.path.clone());
    }
    Ok(ChromeSources {
        paths,
        originals,
        notes: Vec::new(),
        _converted: Some(dir),
    })
}

/// `i` as letters (0 → a, 25 → z, 26 → ba): a name without digits.
fn letters(mut i: usize) -> String {
    let mut s = Vec::new();
    loop {
        s.push(b'a' + (i % 26) as u8);
        i /= 26;
        if i == 0 {
            break;
        }
    }
    s.reverse();
    String::from_utf8(s).unwrap_or_default()
}
