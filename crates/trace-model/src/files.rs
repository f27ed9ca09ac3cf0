//! The one listing of a directory's files by a name rule, and the one gzip sniff, below
//! every reader so that chrome-reader's rank files and the loader's listings are the same
//! code (`load::files` is the public path for the crates above the loader).
//!
//! Only regular files count (a FIFO, socket or device named like a trace is passed over,
//! since reading a FIFO would block forever); a name whose metadata cannot be read (a
//! dangling link, a symlink loop) is kept, so that reading it says what happened; and an
//! entry the directory cannot give is named in [`Listing::unread`], never dropped without
//! a word.

use std::path::{Path, PathBuf};

/// The first two bytes of every gzip stream (RFC 1952, section 2.3.1).
pub const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];

/// Whether `head`, the first bytes of a file, begin a gzip stream.
pub fn is_gzip(head: &[u8]) -> bool {
    head.starts_with(&GZIP_MAGIC)
}

/// An entry or directory that could not be read: the directory (the listing names no
/// entry it cannot read) and what the operating system said.
#[derive(Debug)]
pub struct ListError {
    /// The directory.
    pub path: PathBuf,
    /// What the operating system said.
    pub source: std::io::Error,
}

/// What [`list_files`] found in a directory.
#[derive(Debug)]
pub struct Listing<E = ListError> {
    /// The files whose names the rule wanted, sorted by path.
    pub files: Vec<PathBuf>,
    /// The entries that could not be read, each error naming its directory.
    pub unread: Vec<E>,
}

impl<E> Default for Listing<E> {
    fn default() -> Self {
        Listing {
            files: Vec::new(),
            unread: Vec::new(),
        }
    }
}

/// The files directly in `dir` whose names `wanted` accepts (names that are not UTF-8 are
/// given with their invalid bytes replaced), sorted by path: by file name, byte by byte,
/// which is also how Python sorts them. A directory that cannot be listed is an error
/// naming it.
pub fn list_files(dir: &Path, wanted: impl Fn(&str) -> bool) -> Result<Listing, ListError> {
    let io = |source| ListError {
        path: dir.to_path_buf(),
        source,
    };
    let mut listing = Listing::default();
    for entry in std::fs::read_dir(dir).map_err(io)? {
        let entry = match entry {
            Ok(entry) => entry,
            Err(e) => {
                listing.unread.push(io(e));
                continue;
            }
        };
        if !wanted(&entry.file_name().to_string_lossy()) {
            continue;
        }
        let path = entry.path();
        if std::fs::metadata(&path).map_or(true, |m| m.is_file()) {
            listing.files.push(path);
        }
    }
    listing.files.sort();
    Ok(listing)
}
