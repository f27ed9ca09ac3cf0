//! The lanes crate's error type: every variant names the file and the place in it.

use std::path::PathBuf;

/// What went wrong while compacting or merging traces.
///
/// Event indices count the elements of `traceEvents` from zero, as in the input file.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The file could not be read as a Chrome trace (I/O, JSON, not a trace).
    #[error(transparent)]
    Read(#[from] chrome_reader::Error),
    /// A measured GPU slice lacks a field the packing needs.
    #[error(
        "{path}: GPU slice at event {index} lacks {field} (pid/tid/ts/dur/args.stream are required)"
    )]
    SliceField {
        /// The file.
        path: PathBuf,
        /// Event index in `traceEvents`, from zero.
        index: usize,
        /// The missing field.
        field: &'static str,
    },
    /// A measured GPU slice whose `tid` is not its `args.stream`.
    #[error("{path}: GPU slice at event {index} has tid {tid} != stream {stream}")]
    TidNotStream {
        /// The file.
        path: PathBuf,
        /// Event index in `traceEvents`, from zero.
        index: usize,
        /// The slice's `tid`, as written.
        tid: String,
        /// The slice's `args.stream`, as written.
        stream: String,
    },
    /// A measured GPU slice with a negative duration.
    #[error("{path}: GPU slice at event {index} has negative duration {dur}")]
    NegativeDuration {
        /// The file.
        path: PathBuf,
        /// Event index in `traceEvents`, from zero.
        index: usize,
        /// The duration, as written.
        dur: String,
    },
    /// The trace has no kernel, memcpy or memset slices.
    #[error("{path}: trace contains no GPU kernel/memcpy/memset slices")]
    NoGpuSlices {
        /// The file.
        path: PathBuf,
    },
    /// The self-check found a different number of measured slices in the output.
    #[error("{path}: self-check failed: measured GPU slice count changed ({before} -> {after})")]
    SliceCountChanged {
        /// The file.
        path: PathBuf,
        /// Measured slices in the input.
        before: usize,
        /// Measured slices in the output.
        after: usize,
    },
    /// The self-check found a measured slice whose fields changed.
    #[error("{path}: self-check failed: measured GPU slice {slice} (event {index}) changed")]
    SliceChanged {
        /// The file.
        path: PathBuf,
        /// The slice, in input order from zero.
        slice: usize,
        /// Event index in `traceEvents`, from zero.
        index: usize,
    },
    /// The self-check found two overlapping slices on one compacted lane.
    #[error(
        "{path}: self-check failed: compacted lane (pid {pid}, tid {tid}) contains overlapping slices"
    )]
    OverlappingLane {
        /// The file.
        path: PathBuf,
        /// The lane's process.
        pid: i64,
        /// The slice's `tid`, as written.
        tid: i64,
    },
    /// An event could not be rewritten (its JSON text is not an object we can edit).
    #[error("{path}: event {index}: cannot rewrite: {message}")]
    Rewrite {
        /// The file.
        path: PathBuf,
        /// Event index in `traceEvents`, from zero.
        index: usize,
        /// Why.
        message: String,
    },
    /// The trace is beyond the sizes the compaction's compact records can index.
    #[error("{path}: too large to compact: {what}")]
    TooLarge {
        /// The file.
        path: PathBuf,
        /// Which limit was exceeded.
        what: &'static str,
    },
    /// The input file changed between reading it and writing its compacted trace, which
    /// reads the texts it left there again.
    #[error("{path}: the file changed while it was being compacted ({what}); nothing was written")]
    InputChanged {
        /// The file.
        path: PathBuf,
        /// What differs.
        what: String,
    },
    /// A trace read by `Trace::read_file_for_compaction` was given to the merge, which
    /// rewrites every event and needs `Trace::read_file`.
    #[error("{path}: a merge needs every event's text (read it with Trace::read_file)")]
    TextsInFile {
        /// The file.
        path: PathBuf,
    },
    /// Merge mode found fewer than two `rank*_trace.json[.gz]` files.
    #[error("found fewer than two rank traces in {dir}")]
    FewerThanTwoRanks {
        /// The directory searched.
        dir: PathBuf,
    },
    /// A file matched `rank*_trace.json[.gz]` but its name is not `rank<N>_trace.json[.gz]`.
    #[error("invalid PP trace filename: {path}")]
    BadRankFileName {
        /// The file.
        path: PathBuf,
    },
    /// A rank trace without an integer `baseTimeNanoseconds`.
    #[error("{path}: all PP traces must contain integer baseTimeNanoseconds")]
    MissingBaseTime {
        /// The file.
        path: PathBuf,
    },
    /// A rank trace without a `distributedInfo` object.
    #[error("{path}: trace is missing distributedInfo")]
    MissingDistributedInfo {
        /// The file.
        path: PathBuf,
    },
    /// A rank trace whose `distributedInfo` has no integer `rank`.
    #[error("{path}: trace distributedInfo is missing an integer rank")]
    MissingRank {
        /// The file.
        path: PathBuf,
    },
    /// Two rank traces record the same global rank.
    #[error("PP traces contain duplicate distributed ranks: rank {rank} in {first} and {second}")]
    DuplicateRank {
        /// The duplicated rank.
        rank: i64,
        /// The first file with it.
        first: PathBuf,
        /// The second file with it.
        second: PathBuf,
    },
    /// An output path was refused, or the output could not be moved into place.
    #[error(transparent)]
    Output(#[from] output_file::Error),
    /// A directory could not be listed, or an output could not be written.
    #[error(transparent)]
    Io(#[from] output_file::FsError),
}

impl Error {
    /// The reader's error, when the input could not be read as a Chrome trace.
    pub fn read_error(&self) -> Option<&chrome_reader::Error> {
        match self {
            Error::Read(e) => Some(e),
            _ => None,
        }
    }
}
