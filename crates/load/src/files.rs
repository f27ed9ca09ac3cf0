//! Finding a capture's files, once for every crate: the listing of a directory's files
//! whose names follow a rule (rank files, trace files), and the gzip sniff, with the
//! loader's errors (the code is `trace_model::files`, which chrome-reader uses too).
//!
//! Every tool lists a directory the same way: only regular files count (a FIFO, socket or
//! device named like a trace is passed over, since reading a FIFO would block forever); a
//! name whose metadata cannot be read (a dangling link, a symlink loop) is kept, so that
//! reading it says what happened; and an entry the directory cannot give is named in
//! `Listing::unread`, never dropped without a word.

use std::path::Path;

use crate::Error;

pub use trace_model::files::{GZIP_MAGIC, is_gzip};

/// What [`list_files`] found in a directory (`unread`: each error naming its directory).
pub type Listing = trace_model::files::Listing<Error>;

/// The files directly in `dir` whose names `wanted` accepts, sorted by path
/// (`trace_model::files::list_files`, below the readers, so chrome-reader's rank files are
/// listed by the same code), with the loader's errors. A directory that cannot be listed
/// is an error naming it.
pub fn list_files(dir: &Path, wanted: impl Fn(&str) -> bool) -> Result<Listing, Error> {
    let io = |e: trace_model::files::ListError| Error::Io {
        path: e.path,
        source: e.source,
    };
    let listing = trace_model::files::list_files(dir, wanted).map_err(io)?;
    Ok(Listing {
        files: listing.files,
        unread: listing.unread.into_iter().map(io).collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gzip_is_known_by_its_first_two_bytes() {
        assert!(is_gzip(&[0x1f, 0x8b, 8, 0]));
        assert!(!is_gzip(&[0x1f]));
        assert!(!is_gzip(b"{\"traceEvents\": []}"));
    }

    #[test]
    fn a_listing_keeps_the_wanted_regular_files_in_name_order() {
        let dir = tempfile::tempdir().unwrap();
        for name in ["rank1.json", "rank0.json", "notes.txt"] {
            std::fs::write(dir.path().join(name), b"{}").unwrap();
        }
        std::fs::create_dir(dir.path().join("rank2.json")).unwrap();
        let listing = list_files(dir.path(), |n| n.ends_with(".json")).unwrap();
        let names: Vec<_> = listing
            .files
            .iter()
            .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, ["rank0.json", "rank1.json"]);
        assert!(listing.unread.is_empty());
        let missing = dir.path().join("missing");
        assert!(matches!(
            list_files(&missing, |_| true),
            Err(Error::Io { path, .. }) if path == missing
        ));
    }

    #[cfg(unix)]
    #[test]
    fn a_dangling_link_is_kept_for_its_reader_to_name() {
        let dir = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(dir.path().join("gone"), dir.path().join("rank0.json")).unwrap();
        let listing = list_files(dir.path(), |_| true).unwrap();
        assert_eq!(listing.files, [dir.path().join("rank0.json")]);
    }
}
