//! What an input's frames are made from: a Chrome trace input's own files, read by
//! chrome-reader's raw layer, or, for any other format the loader reads (Nsight Systems,
//! rocprof, XSpace), its loaded captures, whose rows are built straight from the capture
//! model ([`crate::capture_frame`]). Nothing is written out to be read again.

use std::path::{Path, PathBuf};

use crate::Error;
use crate::frame::{Columns, RankFrame};
use ::timeline::Timeline;

/// The sources of an input's frames, one frame each, in load order.
#[derive(Debug)]
pub struct FrameSources {
    inputs: Inputs,
    /// The files of a rank directory not read as ranks (compaction outputs), as notes.
    pub notes: Vec<load::Note>,
}

#[derive(Debug)]
enum Inputs {
    /// Chrome trace files.
    Chrome(Vec<PathBuf>),
    /// Captures of another format, as the loader gives them.
    Captures(Vec<load::Loaded>),
}

impl FrameSources {
    /// The Chrome trace files `paths`, one frame each.
    pub fn chrome(paths: Vec<PathBuf>) -> FrameSources {
        FrameSources {
            inputs: Inputs::Chrome(paths),
            notes: Vec::new(),
        }
    }

    /// How many frames the input has.
    pub fn len(&self) -> usize {
        match &self.inputs {
            Inputs::Chrome(p) => p.len(),
            Inputs::Captures(c) => c.len(),
        }
    }

    /// Whether the input has no frames.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether the frames are read from Chrome trace files (the only ones the Parquet
    /// cache keeps: a capture of another format is loaded again each run).
    pub fn is_chrome(&self) -> bool {
        matches!(self.inputs, Inputs::Chrome(_))
    }

    /// The file the `i`-th frame is of (a file of several captures, such as an Nsight
    /// Systems export of several processes, is the file of each).
    pub fn path(&self, i: usize) -> &Path {
        match &self.inputs {
            Inputs::Chrome(p) => &p[i],
            Inputs::Captures(c) => &c[i].path,
        }
    }

    /// Every frame's file, in order ([`FrameSources::path`]).
    pub fn paths(&self) -> Vec<&Path> {
        (0..self.len()).map(|i| self.path(i)).collect()
    }

    /// The `i`-th frame with `columns`, a Chrome file parsed on `threads` threads.
    pub(crate) fn read(
        &self,
        i: usize,
        threads: usize,
        columns: Columns,
    ) -> Result<RankFrame, Error> {
        match &self.inputs {
            Inputs::Chrome(p) => crate::frame::read_frame_columns(&p[i], threads, columns),
            Inputs::Captures(c) => crate::capture_rows::capture_frame_columns(&c[i], columns),
        }
    }

    /// [`FrameSources::read`] and the timeline of the same capture (before any HTA view:
    /// [`Timeline::from_capture`], with the frame's rank): a Chrome file's frame and
    /// capture come from one parse.
    pub(crate) fn read_with_timeline(
        &self,
        i: usize,
        threads: usize,
        columns: Columns,
    ) -> Result<(RankFrame, Timeline), Error> {
        match &self.inputs {
            Inputs::Chrome(p) => {
                let (frame, capture) =
                    crate::frame::read_frame_and_capture(&p[i], threads, columns, |f| f, |c| c)?;
                let mut t = Timeline::from_capture(&capture?, &p[i]);
                t.rank = frame.rank;
                Ok((frame, t))
            }
            Inputs::Captures(c) => Ok((
                crate::capture_rows::capture_frame_columns(&c[i], columns)?,
                crate::capture_timeline(&c[i]),
            )),
        }
    }
}

/// The sources of `input`'s frames (see the module docs).
pub fn frame_sources(input: &Path) -> Result<FrameSources, Error> {
    let chrome = match load::find(input)? {
        load::Found::ChromeDir(_) => true,
        load::Found::Files(files) => files.iter().all(|(_, k)| *k == load::FileKind::Chrome),
    };
    if chrome {
        return Ok(FrameSources {
            inputs: Inputs::Chrome(crate::trace_paths(input)?),
            notes: load::rank_notes(input, []),
        });
    }
    Ok(FrameSources {
        inputs: Inputs::Captures(load::load(input)?),
        notes: Vec::new(),
    })
}
