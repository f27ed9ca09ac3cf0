//! Which reader a path goes to: by the file's name where the name says it, else by its
//! first bytes; a directory by the captures in it.

use std::io::Read;
use std::path::{Path, PathBuf};

use crate::Error;

/// The reader a file goes to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum FileKind {
    /// A Chrome trace (Kineto, JAX, or another producer's).
    Chrome,
    /// An XSpace protobuf (`.xplane.pb`).
    XSpace,
    /// An Nsight Systems SQLite export (or a `.nsys-rep`/`.qdrep` report, which the
    /// reader refuses with how to export it).
    Nsys,
    /// A ROCm profiler capture of the given kind.
    Rocprof(rocprof_reader::Kind),
}

impl FileKind {
    /// The format in words, as a user would name it.
    pub fn describe(self) -> &'static str {
        match self {
            FileKind::Chrome => "Chrome trace (Kineto, JAX)",
            FileKind::XSpace => trace_model::Format::XPlane.describe(),
            FileKind::Nsys => trace_model::Format::NsysSqlite.describe(),
            FileKind::Rocprof(kind) => kind.format().describe(),
        }
    }
}

/// What a path holds, as [`find`] sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Found {
    /// A directory of Chrome trace files, one per rank (loaded in parallel, by rank).
    ChromeDir(PathBuf),
    /// Files (or one rocprofv3 CSV directory), each with its reader, in load order.
    Files(Vec<(PathBuf, FileKind)>),
}

/// SQLite's file header.
const SQLITE: &[u8] = b"SQLite format 3\0";

/// The reader for the file `path`, or why there is none.
///
/// The name decides for `.xplane.pb`, `.nsys-rep`/`.qdrep`, `.json`/`.json.gz` and Perfetto
/// names (`.pftrace`, `.perfetto-trace`). Otherwise the content does: a SQLite database is
/// an Nsight Systems export, a rocpd or a rocprof v1 database by its tables; gzip data or
/// text beginning with `{` or `[` is a Chrome trace; a CSV file is a rocprof trace by its
/// header. Anything else is [`Error::UnknownFormat`].
pub fn detect(path: &Path) -> Result<FileKind, Error> {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    if name.ends_with(".xplane.pb") {
        return Ok(FileKind::XSpace);
    }
    if name.ends_with(".nsys-rep") || name.ends_with(".qdrep") {
        return Ok(FileKind::Nsys);
    }
    if name.ends_with(".json") || name.ends_with(".json.gz") {
        // rocprofv3's JSON output begins with its own key; every other JSON file is a
        // Chrome trace (or not one, which its reader says).
        if rocprof_reader::is_rocprofv3_json(path) {
            return Ok(FileKind::Rocprof(rocprof_reader::Kind::Json));
        }
        return Ok(FileKind::Chrome);
    }
    let unknown = |why: &str| Error::UnknownFormat {
        path: path.to_path_buf(),
        why: why.to_owned(),
    };
    if [".pftrace", ".perfetto-trace", ".perfetto"]
        .iter()
        .any(|e| name.ends_with(e))
    {
        return match rocprof_reader::detect(path) {
            Some(kind) => Ok(FileKind::Rocprof(kind)),
            None => Err(unknown(
                "named like a Perfetto trace, but it does not begin with a trace packet",
            )),
        };
    }
    let head = read_head(path)?;
    if head.starts_with(SQLITE) {
        if nsys_reader::is_nsys_export(path) {
            return Ok(FileKind::Nsys);
        }
        if let Some(kind) = rocprof_reader::detect(path) {
            return Ok(FileKind::Rocprof(kind));
        }
        // Neither reader recognised the tables. A database whose schema could be read is
        // of another kind; a damaged one (truncated, corrupt) goes to the Nsight Systems
        // reader, whose error says where the damage is.
        return match nsys_reader::load(path, &nsys_reader::Config::default()) {
            Err(nsys_reader::Error::NotAnExport { .. }) => Err(unknown(
                "a SQLite database, but neither an Nsight Systems export nor a rocpd or rocprof v1 database",
            )),
            _ => Ok(FileKind::Nsys),
        };
    }
    if crate::files::is_gzip(&head) {
        return Ok(FileKind::Chrome);
    }
    if matches!(
        head.iter().find(|b| !b.is_ascii_whitespace()),
        Some(b'{' | b'[')
    ) {
        return Ok(FileKind::Chrome);
    }
    if let Some(kind) = rocprof_reader::detect(path) {
        return Ok(FileKind::Rocprof(kind));
    }
    Err(unknown(if head.is_empty() {
        "the file is empty"
    } else if head
        .iter()
        .all(|b| b.is_ascii() && !b.is_ascii_control() || b.is_ascii_whitespace())
    {
        "text that is neither JSON nor a rocprof CSV header"
    } else {
        "binary data of no known format"
    }))
}

/// The first bytes of `path` (up to 64).
fn read_head(path: &Path) -> Result<Vec<u8>, Error> {
    let io = |source| Error::Io {
        path: path.to_path_buf(),
        source,
    };
    let file = std::fs::File::open(path).map_err(io)?;
    let mut head = Vec::with_capacity(64);
    file.take(64).read_to_end(&mut head).map_err(io)?;
    Ok(head)
}

/// What `path` holds: a file is one capture file (its reader from [`detect`]); in a
/// directory, the first of these that is there:
///
/// 1. XSpaces (`*.xplane.pb`, searched four levels deep, as JAX writes
///    `plugins/profile/<run>/`), each a host, by file name;
/// 2. a rocprofv3 CSV capture (`*_kernel_trace.csv` and its siblings), as one;
/// 3. a rocprof v1 run (`results.db`, else `results.csv`), as one;
/// 4. rocprofv3 JSON files (`--output-format json`), each a capture file;
/// 5. Chrome trace files (`*.json`, `*.json.gz`), one per rank;
/// 6. Nsight Systems exports and other ROCm captures (rocpd databases, `.pftrace`), each
///    file in name order.
///
/// Only regular files count: a FIFO or a device named like a trace is passed over. A
/// subdirectory or file that cannot be read is passed over here; [`find_each`] names it.
pub fn find(path: &Path) -> Result<Found, Error> {
    Ok(find_each(path)?.found)
}

/// What [`find_each`] found in a path.
#[derive(Debug)]
pub struct FoundEach {
    /// The captures' files, as [`find`] gives them.
    pub found: Found,
    /// The subdirectories that could not be searched and the files that could not be
    /// read while looking (each error names its path): what a tool warns about, with a
    /// partial result, since a capture may be among them.
    pub unread: Vec<Error>,
}

/// Like [`find`], with every entry of the directory that could not be searched or read.
/// A directory in which nothing was found but something could not be read is that
/// entry's error, rather than [`Error::NoCapture`].
pub fn find_each(path: &Path) -> Result<FoundEach, Error> {
    if !path.is_dir() {
        return Ok(FoundEach {
            found: Found::Files(vec![(path.to_path_buf(), detect(path)?)]),
            unread: Vec::new(),
        });
    }
    let mut unread = Vec::new();
    let found = find_in_dir(path, &mut unread)?;
    match found {
        Some(found) => Ok(FoundEach { found, unread }),
        None if unread.is_empty() => Err(Error::NoCapture {
            path: path.to_path_buf(),
        }),
        None => Err(unread.remove(0)),
    }
}

/// What the directory `path` holds (see [`find`]), `None` for nothing; what could not be
/// read goes to `unread`.
fn find_in_dir(path: &Path, unread: &mut Vec<Error>) -> Result<Option<Found>, Error> {
    let mut xplanes = Vec::new();
    find_xplanes(path, 0, &mut Vec::new(), &mut xplanes, unread)?;
    if !xplanes.is_empty() {
        xplanes.sort();
        return Ok(Some(Found::Files(
            xplanes.into_iter().map(|p| (p, FileKind::XSpace)).collect(),
        )));
    }
    if let Some(kind @ rocprof_reader::Kind::V3Csv) = rocprof_reader::detect(path) {
        return Ok(Some(Found::Files(vec![(
            path.to_path_buf(),
            FileKind::Rocprof(kind),
        )])));
    }
    let listing = crate::files::list_files(path, |_| true)?;
    unread.extend(listing.unread);
    let files = listing.files;
    for v1 in ["results.db", "results.csv"] {
        if let Some(file) = files
            .iter()
            .find(|f| f.file_name().is_some_and(|n| n == v1))
            && let Some(kind @ (rocprof_reader::Kind::V1Db | rocprof_reader::Kind::V1Csv)) =
                rocprof_reader::detect(file)
        {
            return Ok(Some(Found::Files(vec![(
                file.clone(),
                FileKind::Rocprof(kind),
            )])));
        }
    }
    // rocprofv3 JSON files (named like Chrome traces): each a capture file of its own.
    let rocprof_json: Vec<(PathBuf, FileKind)> = files
        .iter()
        .filter(|f| rocprof_reader::is_rocprofv3_json(f))
        .map(|f| (f.clone(), FileKind::Rocprof(rocprof_reader::Kind::Json)))
        .collect();
    if !rocprof_json.is_empty() {
        return Ok(Some(Found::Files(rocprof_json)));
    }
    if chrome_reader::trace_files(path).is_ok_and(|f| !f.is_empty()) {
        return Ok(Some(Found::ChromeDir(path.to_path_buf())));
    }
    let mut others = Vec::new();
    for f in files {
        match detect(&f) {
            Ok(kind @ (FileKind::Nsys | FileKind::Rocprof(_))) => others.push((f, kind)),
            // A file that cannot be opened may be a capture: named, not passed over.
            Err(e @ Error::Io { .. }) => unread.push(e),
            // Anything else (a README, a Chrome file of no rank directory) is not one.
            _ => {}
        }
    }
    Ok((!others.is_empty()).then_some(Found::Files(others)))
}

/// The `*.xplane.pb` files up to four directories below `dir`. Links are followed (JAX
/// users link runs together), but each directory is entered once, by its identity on disk
/// (`seen`), so links back to a parent (or many links to one directory) cost one visit, not
/// one per path that reaches it. `dir` itself must be listed; a subdirectory that cannot
/// be, or an entry whose kind cannot be told (other than a link to nothing), goes to
/// `unread`.
fn find_xplanes(
    dir: &Path,
    depth: usize,
    seen: &mut Vec<DirId>,
    out: &mut Vec<PathBuf>,
    unread: &mut Vec<Error>,
) -> Result<(), Error> {
    if depth > 4 {
        return Ok(());
    }
    if let Some(id) = dir_id(dir) {
        if seen.contains(&id) {
            return Ok(());
        }
        seen.push(id);
    }
    let io = |path: &Path, source| Error::Io {
        path: path.to_path_buf(),
        source,
    };
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if depth > 0 => {
            unread.push(io(dir, e));
            return Ok(());
        }
        Err(e) => return Err(io(dir, e)),
    };
    for entry in entries {
        let entry = match entry {
            Ok(entry) => entry,
            Err(e) => {
                unread.push(io(dir, e));
                continue;
            }
        };
        let p = entry.path();
        let meta = match std::fs::metadata(&p) {
            Ok(meta) => meta,
            // A dangling link, or a loop of links, points at nothing to search (a reader
            // names it if it is named like a trace).
            Err(_) if entry.file_type().is_ok_and(|t| t.is_symlink()) => continue,
            Err(e) => {
                unread.push(io(&p, e));
                continue;
            }
        };
        if meta.is_dir() {
            find_xplanes(&p, depth + 1, seen, out, unread)?;
        } else if meta.is_file()
            && p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.ends_with(".xplane.pb"))
        {
            out.push(p);
        }
    }
    Ok(())
}

/// A directory's identity on disk (device and inode), whatever path reaches it.
type DirId = (u64, u64);

#[cfg(unix)]
fn dir_id(dir: &Path) -> Option<DirId> {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(dir).ok().map(|m| (m.dev(), m.ino()))
}

#[cfg(not(unix))]
fn dir_id(_dir: &Path) -> Option<DirId> {
    None
}
