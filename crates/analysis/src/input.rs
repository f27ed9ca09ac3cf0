//! Loading any capture a tool is pointed at: a Kineto or JAX Chrome trace (`.json`,
//! `.json.gz`), an XSpace (`.xplane.pb`), or a directory of either (one file per rank or
//! host; JAX's `plugins/profile/<run>/` layout is searched too).

use std::path::{Path, PathBuf};

use trace_model::Capture;

use crate::Error;

/// One loaded capture, with what only some formats carry.
#[derive(Debug)]
pub struct Loaded {
    /// The file the capture was read from.
    pub path: PathBuf,
    /// Rank from the trace's metadata, else from the file name.
    pub rank: Option<i64>,
    /// The capture itself.
    pub capture: Capture,
    /// The HLO programs of an XSpace (empty for JSON traces).
    pub programs: Vec<Program>,
}

/// One compiled XLA program embedded in an XSpace's `/host:metadata` plane.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Program {
    /// The program id that GPU activities refer to.
    pub id: i64,
    /// The HLO module's name.
    pub name: String,
    /// `None` when the HLO proto could not be decoded; `error` says why.
    pub instructions: Option<usize>,
    /// Instructions whose Python source line is known (directly or through stack frames).
    pub with_python_line: Option<usize>,
    /// Why the HLO proto could not be decoded, when it could not.
    pub error: Option<String>,
}

/// Whether a path names an XSpace file.
pub(crate) fn is_xplane(path: &Path) -> bool {
    path.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.ends_with(".xplane.pb"))
}

/// Sets how many threads parse each Chrome trace in every later load (a tool's
/// `--threads`; 0: `chrome_reader::default_threads`). The capture is the same for any
/// number: see `chrome_reader::LoadConfig`.
pub fn set_threads(threads: usize) {
    chrome_reader::set_default_threads(threads);
}

/// Loads the capture(s) at `path`, ordered by rank (JSON) or file name (XSpace).
pub fn load_any(path: &Path) -> Result<Vec<Loaded>, Error> {
    if path.is_dir() {
        let mut xplanes = Vec::new();
        find_xplanes(path, 0, &mut xplanes)?;
        if !xplanes.is_empty() {
            xplanes.sort();
            return xplanes.iter().map(|p| load_xplane(p)).collect();
        }
        let ranks = chrome_reader::load_dir(path)?;
        return Ok(ranks
            .into_iter()
            .map(|r| Loaded {
                path: r.path,
                rank: r.rank,
                capture: r.capture,
                programs: Vec::new(),
            })
            .collect());
    }
    if is_xplane(path) {
        return Ok(vec![load_xplane(path)?]);
    }
    let capture = chrome_reader::load(path)?;
    Ok(vec![Loaded::chrome_file(path, capture)])
}

/// The one Chrome trace file [`load_any`] reads for `input` when it reads exactly one: the
/// file itself, or the only trace file of a directory without XSpaces. Give its capture to
/// [`Loaded::chrome`] to get what `load_any` would have loaded.
pub fn single_chrome_file(input: &Path) -> Result<Option<PathBuf>, Error> {
    if !input.is_dir() {
        return Ok((!is_xplane(input)).then(|| input.to_path_buf()));
    }
    let mut xplanes = Vec::new();
    find_xplanes(input, 0, &mut xplanes)?;
    if !xplanes.is_empty() {
        return Ok(None);
    }
    let mut files = chrome_reader::trace_files(input)?;
    Ok(match files.len() {
        1 => files.pop(),
        _ => None,
    })
}

impl Loaded {
    /// What [`load_any`] loads for `input` when it reads only the Chrome trace `file` (see
    /// [`single_chrome_file`]), given the file's capture.
    pub fn chrome(input: &Path, file: &Path, capture: Capture) -> Loaded {
        if !input.is_dir() {
            return Loaded::chrome_file(file, capture);
        }
        // As a directory of ranks: the file name's rank whatever the metadata says of the
        // world size.
        let rank = capture
            .meta()
            .rank
            .or_else(|| chrome_reader::rank_from_file_name(file));
        Loaded {
            path: file.to_path_buf(),
            rank,
            capture,
            programs: Vec::new(),
        }
    }

    /// The capture of the single Chrome trace file `path`: its rank from the trace's
    /// metadata, else from the file name when the trace says it is one of several ranks.
    fn chrome_file(path: &Path, capture: Capture) -> Loaded {
        let rank = capture.meta().rank.or_else(|| {
            chrome_reader::rank_from_file_name(path).filter(|_| capture.meta().world_size.is_some())
        });
        Loaded {
            path: path.to_path_buf(),
            rank,
            capture,
            programs: Vec::new(),
        }
    }
}

/// What [`load_each`] read: every capture that loaded, and every file that did not, with
/// its error.
#[derive(Debug, Default)]
pub struct LoadedEach {
    /// Captures that loaded, in the order [`load_any`] gives.
    pub loaded: Vec<Loaded>,
    /// One error per file that could not be read (each names its file).
    pub failed: Vec<Error>,
}

/// Like [`load_any`], but a directory's files load each on their own: an unreadable rank
/// or host is listed in [`LoadedEach::failed`] and the others are still returned. A file
/// path, an unlistable directory or one without trace files is an error as with
/// [`load_any`].
pub fn load_each(path: &Path) -> Result<LoadedEach, Error> {
    if !path.is_dir() {
        return Ok(LoadedEach {
            loaded: load_any(path)?,
            failed: Vec::new(),
        });
    }
    let mut each = LoadedEach::default();
    let mut xplanes = Vec::new();
    find_xplanes(path, 0, &mut xplanes)?;
    if !xplanes.is_empty() {
        xplanes.sort();
        for p in &xplanes {
            match load_xplane(p) {
                Ok(l) => each.loaded.push(l),
                Err(e) => each.failed.push(e),
            }
        }
        return Ok(each);
    }
    for res in chrome_reader::load_dir_each(path)? {
        match res {
            Ok(r) => each.loaded.push(Loaded {
                path: r.path,
                rank: r.rank,
                capture: r.capture,
                programs: Vec::new(),
            }),
            Err(e) => each.failed.push(e.into()),
        }
    }
    Ok(each)
}

fn find_xplanes(dir: &Path, depth: usize, out: &mut Vec<PathBuf>) -> Result<(), Error> {
    if depth > 4 {
        return Ok(());
    }
    let entries = std::fs::read_dir(dir).map_err(|source| Error::Io {
        path: dir.to_path_buf(),
        source,
    })?;
    for entry in entries.flatten() {
        let p = entry.path();
        if p.is_dir() {
            find_xplanes(&p, depth + 1, out)?;
        } else if is_xplane(&p) {
            out.push(p);
        }
    }
    Ok(())
}

fn load_xplane(path: &Path) -> Result<Loaded, Error> {
    let (capture, space) = xplane_reader::load_capture(path)?;
    let programs = space
        .hlo_programs()
        .iter()
        .map(|p| match hlo_parser::module_from_hlo_proto(p.hlo_proto) {
            Ok(module) => {
                let mut instructions = 0;
                let mut with_line = 0;
                for (_, inst) in module.instructions() {
                    instructions += 1;
                    if module.source_line(inst).is_some() {
                        with_line += 1;
                    }
                }
                Program {
                    id: p.program_id,
                    name: p.module_name.to_string(),
                    instructions: Some(instructions),
                    with_python_line: Some(with_line),
                    error: None,
                }
            }
            Err(e) => Program {
                id: p.program_id,
                name: p.module_name.to_string(),
                instructions: None,
                with_python_line: None,
                error: Some(e.to_string()),
            },
        })
        .collect();
    Ok(Loaded {
        path: path.to_path_buf(),
        rank: None,
        capture,
        programs,
    })
}
