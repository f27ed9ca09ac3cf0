//! The one list of real captures the tests run on, with the counts they are checked
//! against, read from the trace set's own `MANIFEST.md` files (never copied into a test).
//!
//! The set under `$TRACEWISE_TRACES` holds `pytorch/MANIFEST.md` and `jax/MANIFEST.md`.
//! [`RealTraces::read`] parses the tables the tests use:
//! - `pytorch/MANIFEST.md`, "Files": one row per Kineto trace (path, ranks, events,
//!   kernels, NCCL kernels, graph launches, memcpy/memset, `ProfilerStep#` count), and
//!   "Event counts by `cat`": the events of each file by `cat` and by `ph`;
//! - `jax/MANIFEST.md`, "Per-file structure": one `#### folder/file.xplane.pb` section per
//!   XSpace capture (planes with their event and line counts, the streams of device planes,
//!   the embedded HLO programs), "Sources and licences" (which captures were made here)
//!   and "What is in each folder" (the JSON trace regenerated from each copied capture).
//!
//! It also checks the manifests against the folders: every listed file exists, and every
//! trace file in the folders is listed, so a test that walks this list runs on every
//! capture there is.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// One Kineto trace of `pytorch/MANIFEST.md`'s "Files" table.
#[derive(Debug, Clone)]
pub struct KinetoTrace {
    /// The absolute path.
    pub path: PathBuf,
    /// The path below `pytorch/`, `/`-separated, as the manifest writes it.
    pub rel: String,
    /// `distributedInfo.rank`, when the trace has one.
    pub rank: Option<u32>,
    /// `distributedInfo.world_size`, when the trace has one.
    pub world_size: Option<u32>,
    /// Every event of `traceEvents`.
    pub events: u64,
    /// Events with `cat: kernel`.
    pub kernels: u64,
    /// Kernels whose name contains `nccl`.
    pub nccl_kernels: u64,
    /// `cudaGraphLaunch` / `hipGraphLaunch` events.
    pub graph_launches: u64,
    /// Events with `cat: gpu_memcpy`.
    pub memcpys: u64,
    /// Events with `cat: gpu_memset`.
    pub memsets: u64,
    /// Distinct `ProfilerStep#N` numbers.
    pub profiler_steps: u64,
    /// Events by `cat` (`null` for events without one).
    pub by_cat: BTreeMap<String, u64>,
    /// Events by `ph`.
    pub by_ph: BTreeMap<String, u64>,
}

/// One plane of an XSpace capture, as the "Per-file structure" section lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plane {
    /// The plane's name (`/device:GPU:0`, `/host:CPU`, …).
    pub name: String,
    /// Events on all its lines.
    pub events: u64,
    /// Its line count.
    pub lines: usize,
    /// For device planes: each line (stream) with its events, in the manifest's order.
    pub streams: Vec<(String, u64)>,
}

/// One XSpace capture of `jax/MANIFEST.md`'s "Per-file structure".
#[derive(Debug, Clone)]
pub struct XSpaceCapture {
    /// The capture's folder name below `jax/`.
    pub folder: String,
    /// The absolute path of the `*.xplane.pb`.
    pub path: PathBuf,
    /// The planes that hold events or lines, in the manifest's order (device planes that
    /// hold only capabilities are [`XSpaceCapture::empty_device_planes`]).
    pub planes: Vec<Plane>,
    /// Device planes with capabilities only.
    pub empty_device_planes: usize,
    /// HLO modules embedded in `/host:metadata`.
    pub hlo_programs: usize,
    /// The Chrome-trace JSON of the same capture: regenerated from the XSpace for copied
    /// captures, the JAX-written one for a capture made here. For a capture MANIFEST.md
    /// lists without one (the TensorFlow XSpace, which has no HLO metadata to regenerate
    /// it with), the XSpace itself, which every tool reads too;
    /// [`RealTraces::jax_gpu_json`] leaves such captures out.
    pub json: PathBuf,
    /// Made by the trace set's own run ("generated here"), not copied from a repository.
    pub made_here: bool,
}

impl XSpaceCapture {
    /// Events on `/device:*` planes.
    pub fn gpu_events(&self) -> u64 {
        self.planes
            .iter()
            .filter(|p| p.name.starts_with("/device:"))
            .map(|p| p.events)
            .sum()
    }

    /// The capture's folder (a JAX capture directory, as the tools accept one).
    pub fn dir(&self) -> &Path {
        self.path.parent().expect("a capture lies in its folder")
    }
}

/// Every real capture of the trace set, as its manifests describe it.
#[derive(Debug, Clone)]
pub struct RealTraces {
    /// The trace set's root (`$TRACEWISE_TRACES`).
    pub root: PathBuf,
    /// The Kineto traces under `pytorch/`, sorted by path.
    pub kineto: Vec<KinetoTrace>,
    /// The XSpace captures under `jax/`, sorted by folder.
    pub xspaces: Vec<XSpaceCapture>,
}

impl RealTraces {
    /// Reads `root/pytorch/MANIFEST.md` and `root/jax/MANIFEST.md` and checks them against
    /// the folders. Panics, naming the manifest and the line, when a table cannot be read,
    /// a listed file is missing or a trace file is not listed.
    pub fn read(root: &Path) -> RealTraces {
        let kineto = read_pytorch(root);
        let xspaces = read_jax(root);
        RealTraces {
            root: root.to_path_buf(),
            kineto,
            xspaces,
        }
    }

    /// The Kineto trace at `rel` below `pytorch/`; panics when the manifest has none.
    pub fn kineto(&self, rel: &str) -> &KinetoTrace {
        self.kineto
            .iter()
            .find(|t| t.rel == rel)
            .unwrap_or_else(|| panic!("pytorch/MANIFEST.md lists no {rel}"))
    }

    /// The XSpace capture in `folder` below `jax/`; panics when the manifest has none.
    pub fn xspace(&self, folder: &str) -> &XSpaceCapture {
        self.xspaces
            .iter()
            .find(|x| x.folder == folder)
            .unwrap_or_else(|| panic!("jax/MANIFEST.md lists no {folder}"))
    }

    /// The folders under `pytorch/` that hold a complete set of rank traces (ranks 0 to
    /// world size − 1, one file each): inputs for the tools' directory mode.
    pub fn rank_dirs(&self) -> Vec<PathBuf> {
        let mut by_dir: BTreeMap<PathBuf, Vec<&KinetoTrace>> = BTreeMap::new();
        for t in &self.kineto {
            let dir = t.path.parent().expect("a trace lies in a folder");
            by_dir.entry(dir.to_path_buf()).or_default().push(t);
        }
        by_dir
            .into_iter()
            .filter(|(_, traces)| {
                let world = traces[0].world_size;
                let ranks: BTreeSet<Option<u32>> = traces.iter().map(|t| t.rank).collect();
                traces.len() > 1
                    && traces.iter().all(|t| t.world_size == world)
                    && world.is_some_and(|w| ranks == (0..w).map(Some).collect::<BTreeSet<_>>())
            })
            .map(|(dir, _)| dir)
            .collect()
    }

    /// The JSON traces of the GPU captures under `jax/` (regenerated from their XSpace).
    pub fn jax_gpu_json(&self) -> Vec<PathBuf> {
        self.xspaces
            .iter()
            .filter(|x| x.gpu_events() > 0 && x.json != x.path)
            .map(|x| x.json.clone())
            .collect()
    }

    /// The JSON traces of the captures under `jax/` without GPU events.
    pub fn jax_cpu_json(&self) -> Vec<PathBuf> {
        self.xspaces
            .iter()
            .filter(|x| x.gpu_events() == 0 && x.json != x.path)
            .map(|x| x.json.clone())
            .collect()
    }
}

/// The table of `text` that follows the heading that starts with `heading`: its rows'
/// cells (header and separator rows left out), each with its line number.
fn table<'a>(text: &'a str, heading: &str, manifest: &Path) -> Vec<(usize, Vec<&'a str>)> {
    let mut lines = text
        .lines()
        .enumerate()
        .skip_while(|(_, l)| !l.starts_with(heading));
    assert!(
        lines.next().is_some(),
        "{}: no section {heading:?}",
        manifest.display()
    );
    let rows: Vec<(usize, Vec<&str>)> = lines
        .skip_while(|(_, l)| !l.starts_with('|'))
        .take_while(|(_, l)| l.starts_with('|'))
        .map(|(n, l)| {
            let cells = l
                .trim()
                .trim_matches('|')
                .split('|')
                .map(str::trim)
                .collect();
            (n + 1, cells)
        })
        .collect();
    assert!(
        rows.len() > 2,
        "{}: the table under {heading:?} is empty",
        manifest.display()
    );
    rows.into_iter().skip(2).collect()
}

/// A count cell: its leading number; a note after it (`8772 (cat \`Kernel\`)`, where a
/// trace spells a category its own way) is the manifest's comment, not part of the count.
fn number(cell: &str, manifest: &Path, line: usize) -> u64 {
    cell.split_whitespace()
        .next()
        .unwrap_or(cell)
        .parse()
        .unwrap_or_else(|_| panic!("{}:{line}: {cell:?} is not a count", manifest.display()))
}

/// `rank 0/8 nccl`, `rank 0/None`, `no distributedInfo`.
fn ranks(cell: &str) -> (Option<u32>, Option<u32>) {
    let Some(rest) = cell.strip_prefix("rank ") else {
        return (None, None);
    };
    let pair = rest.split_whitespace().next().unwrap_or("");
    let (rank, world) = pair.split_once('/').unwrap_or((pair, ""));
    (rank.parse().ok(), world.parse().ok())
}

/// `cat:N, cat:N` (a name may itself contain `:`; the count is after the last one).
fn counts(list: &str, manifest: &Path, line: usize) -> BTreeMap<String, u64> {
    list.split(", ")
        .map(|kv| {
            let (k, v) = kv
                .trim()
                .rsplit_once(':')
                .unwrap_or_else(|| panic!("{}:{line}: {kv:?}", manifest.display()));
            (k.to_owned(), number(v.trim(), manifest, line))
        })
        .collect()
}

/// Events by `cat` or by `ph`.
type Counts = BTreeMap<String, u64>;

fn read_pytorch(root: &Path) -> Vec<KinetoTrace> {
    let dir = root.join("pytorch");
    let manifest = dir.join("MANIFEST.md");
    let text = std::fs::read_to_string(&manifest)
        .unwrap_or_else(|e| panic!("{}: {e}", manifest.display()));
    // "Event counts by `cat`": - `path` (sha256 …): cat:N, …. ph: X:N, …
    let mut by_file: BTreeMap<&str, (Counts, Counts)> = BTreeMap::new();
    for (n, line) in text.lines().enumerate() {
        let Some(rest) = line.strip_prefix("- `") else {
            continue;
        };
        let Some((file, rest)) = rest.split_once('`') else {
            continue;
        };
        let Some((_, rest)) = rest.split_once("): ") else {
            continue;
        };
        let Some((cats, phs)) = rest.split_once(". ph: ") else {
            continue;
        };
        by_file.insert(
            file,
            (
                counts(cats, &manifest, n + 1),
                counts(phs, &manifest, n + 1),
            ),
        );
    }
    let mut traces = Vec::new();
    for (line, cells) in table(&text, "## Files", &manifest) {
        assert!(
            cells.len() >= 10,
            "{}:{line}: a short row",
            manifest.display()
        );
        let rel = cells[0];
        let counts = cells[8].split_whitespace().next().unwrap_or(cells[8]);
        let (memcpys, memsets) = counts.split_once('/').unwrap_or_else(|| {
            panic!(
                "{}:{line}: memcpy/memset {:?}",
                manifest.display(),
                cells[8]
            )
        });
        let (by_cat, by_ph) = by_file.remove(rel).unwrap_or_else(|| {
            panic!(
                "{}:{line}: {rel} has no line under \"Event counts by `cat`\"",
                manifest.display()
            )
        });
        let (rank, world_size) = ranks(cells[3]);
        traces.push(KinetoTrace {
            path: dir.join(rel),
            rel: rel.to_owned(),
            rank,
            world_size,
            events: number(cells[4], &manifest, line),
            kernels: number(cells[5], &manifest, line),
            nccl_kernels: number(cells[6], &manifest, line),
            graph_launches: number(cells[7], &manifest, line),
            memcpys: number(memcpys, &manifest, line),
            memsets: number(memsets, &manifest, line),
            profiler_steps: number(cells[9], &manifest, line),
            by_cat,
            by_ph,
        });
    }
    assert!(
        by_file.is_empty(),
        "{}: event counts of files the Files table lacks: {:?}",
        manifest.display(),
        by_file.keys().collect::<Vec<_>>()
    );
    traces.sort_by(|a, b| a.rel.cmp(&b.rel));
    // The folders hold exactly these traces besides the "Non-trace files" and the
    // "Reference outputs".
    let listed: BTreeSet<&str> = traces.iter().map(|t| t.rel.as_str()).collect();
    let others: BTreeSet<&str> = table(&text, "## Non-trace files", &manifest)
        .into_iter()
        .map(|(_, cells)| cells[0])
        .collect();
    let mut on_disk = Vec::new();
    walk(&dir, &mut on_disk);
    let mut unlisted = Vec::new();
    for path in &on_disk {
        let rel = relative(path, &dir);
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        let is_trace = name.ends_with(".json") || name.ends_with(".json.gz");
        if is_trace
            && !rel.starts_with("reference-outputs/")
            && !listed.contains(rel.as_str())
            && !others.contains(rel.as_str())
        {
            unlisted.push(rel);
        }
    }
    assert!(
        unlisted.is_empty(),
        "{}: traces in the folder that the Files table does not list: {unlisted:?}",
        manifest.display()
    );
    for t in &traces {
        assert!(
            t.path.is_file(),
            "{}: lists {}, which is missing",
            manifest.display(),
            t.path.display()
        );
    }
    traces
}

fn read_jax(root: &Path) -> Vec<XSpaceCapture> {
    let dir = root.join("jax");
    let manifest = dir.join("MANIFEST.md");
    let text = std::fs::read_to_string(&manifest)
        .unwrap_or_else(|e| panic!("{}: {e}", manifest.display()));
    // "What is in each folder": the name of the JSON regenerated from a copied capture.
    let regenerated = text
        .lines()
        .filter_map(|l| l.trim_start().strip_prefix("- `regenerated-"))
        .find_map(|rest| Some(format!("regenerated-{}", rest.split_once('`')?.0)))
        .unwrap_or_else(|| {
            panic!(
                "{}: \"What is in each folder\" names no regenerated-*.trace.json.gz",
                manifest.display()
            )
        });
    // "Sources and licences": the folders made here.
    let made_here: BTreeSet<&str> = table(&text, "## Sources and licences", &manifest)
        .into_iter()
        .filter(|(_, cells)| cells.get(1).is_some_and(|c| c.contains("generated here")))
        .map(|(_, cells)| cells[0])
        .collect();
    let mut captures: Vec<XSpaceCapture> = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let at = || format!("{}:{}", manifest.display(), n + 1);
        if let Some(rel) = line.strip_prefix("#### ") {
            let rel = rel.trim();
            let (folder, _) = rel
                .split_once('/')
                .unwrap_or_else(|| panic!("{}: {rel:?} is not folder/file", at()));
            let json = if made_here.contains(folder) {
                // The JAX-written trace, named in the folder's own section.
                made_here_json(&text, folder, &dir, &manifest)
            } else {
                dir.join(folder).join(&regenerated)
            };
            // No regenerated JSON (the TensorFlow capture): the XSpace stands in.
            let json = if json.is_file() { json } else { dir.join(rel) };
            captures.push(XSpaceCapture {
                folder: folder.to_owned(),
                path: dir.join(rel),
                planes: Vec::new(),
                empty_device_planes: 0,
                hlo_programs: 0,
                json,
                made_here: made_here.contains(folder),
            });
            continue;
        }
        if line.starts_with('#') || line.starts_with("HLO source-attribution") {
            if line.starts_with("## ") || line.starts_with("HLO source-attribution") {
                // The section ends.
                if !captures.is_empty() {
                    break;
                }
            }
            continue;
        }
        let Some(capture) = captures.last_mut() else {
            continue;
        };
        if let Some(rest) = line.strip_prefix("- empty device planes (capabilities only): ") {
            capture.empty_device_planes = number(rest.trim(), &manifest, n + 1) as usize;
        } else if let Some(rest) = line.strip_prefix("- plane `") {
            let (name, rest) = rest
                .split_once("`: ")
                .unwrap_or_else(|| panic!("{}: plane line {line:?}", at()));
            let mut parts = rest.split("; ");
            let events = parts
                .next()
                .and_then(|p| p.strip_suffix(" events"))
                .unwrap_or_else(|| panic!("{}: no event count in {line:?}", at()));
            let mut plane = Plane {
                name: name.to_owned(),
                events: number(events, &manifest, n + 1),
                lines: 0,
                streams: Vec::new(),
            };
            let mut line_count = None;
            for part in parts {
                if let Some(lines) = part.strip_suffix(" lines") {
                    line_count = Some(number(lines, &manifest, n + 1) as usize);
                } else if let Some(stream) = part.strip_prefix('`') {
                    let (stream, events) = stream
                        .rsplit_once("`=")
                        .unwrap_or_else(|| panic!("{}: stream {part:?}", at()));
                    plane
                        .streams
                        .push((stream.to_owned(), number(events, &manifest, n + 1)));
                } else if let Some((programs, _)) = part.split_once(" HloProtos embedded") {
                    capture.hlo_programs = number(programs, &manifest, n + 1) as usize;
                }
            }
            // A device plane lists its lines (streams) instead of their count.
            plane.lines = line_count.unwrap_or(plane.streams.len());
            capture.planes.push(plane);
        }
    }
    assert!(
        !captures.is_empty(),
        "{}: no `#### folder/file.xplane.pb` sections",
        manifest.display()
    );
    captures.sort_by(|a, b| a.folder.cmp(&b.folder));
    let listed: BTreeSet<PathBuf> = captures.iter().map(|c| c.path.clone()).collect();
    let mut on_disk = Vec::new();
    walk(&dir, &mut on_disk);
    let unlisted: Vec<String> = on_disk
        .iter()
        .filter(|p| p.to_string_lossy().ends_with(".xplane.pb") && !listed.contains(*p))
        .map(|p| relative(p, &dir))
        .collect();
    assert!(
        unlisted.is_empty(),
        "{}: captures in the folder that \"Per-file structure\" does not list: {unlisted:?}",
        manifest.display()
    );
    // Every listed XSpace is there; its regenerated JSON only where one was made (not for
    // the TensorFlow capture, which has no HLO metadata to regenerate it with).
    for c in &captures {
        assert!(
            c.path.is_file(),
            "{}: lists {}, which is missing",
            manifest.display(),
            c.path.display()
        );
    }
    captures
}

/// The JAX-written `*.trace.json.gz` that the section `## folder …` names (not the
/// Perfetto copy).
fn made_here_json(text: &str, folder: &str, dir: &Path, manifest: &Path) -> PathBuf {
    let section = text
        .split("\n## ")
        .find(|s| s.starts_with(&format!("{folder} ")) || s.starts_with(&format!("{folder}\n")))
        .unwrap_or_else(|| panic!("{}: no section \"## {folder}\"", manifest.display()));
    section
        .split('`')
        .skip(1)
        .step_by(2)
        .find(|name| name.ends_with(".trace.json.gz") && !name.starts_with("perfetto"))
        .map(|name| dir.join(folder).join(name))
        .unwrap_or_else(|| {
            panic!(
                "{}: section \"## {folder}\" names no *.trace.json.gz",
                manifest.display()
            )
        })
}

/// Every file below `dir`, sorted.
pub(crate) fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("directory entries are readable").path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            walk(&path, out);
        } else {
            out.push(path);
        }
    }
}

/// `path` below `dir`, `/`-separated.
fn relative(path: &Path, dir: &Path) -> String {
    let rel = path.strip_prefix(dir).expect("below the folder");
    rel.components()
        .map(|c| c.as_os_str().to_string_lossy())
        .collect::<Vec<_>>()
        .join("/")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranks_cells() {
        assert_eq!(ranks("rank 0/8 nccl"), (Some(0), Some(8)));
        assert_eq!(ranks("rank 0/None"), (Some(0), None));
        assert_eq!(ranks("no distributedInfo"), (None, None));
    }

    #[test]
    fn count_lists_keep_colons_in_names() {
        let got = counts("cpu_op:70, a:b:3, null:62", Path::new("M"), 1);
        assert_eq!(got["cpu_op"], 70);
        assert_eq!(got["a:b"], 3);
        assert_eq!(got["null"], 62);
    }

    /// A miniature trace set, written to a temporary folder, read back.
    #[test]
    fn reads_a_miniature_trace_set() {
        let root = std::env::temp_dir().join(format!("tracewise-mini-set-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let files = [
            "pytorch/ddp/r0.json",
            "pytorch/ddp/r1.json",
            "pytorch/one/t.json.gz",
            "pytorch/one/details.json",
            "pytorch/reference-outputs/x/out.json",
            "jax/gpu/a.xplane.pb",
            "jax/gpu/regenerated-x.trace.json.gz",
            "jax/cpu/vm.xplane.pb",
            "jax/cpu/vm.trace.json.gz",
            "jax/cpu/perfetto_trace.json.gz",
        ];
        for f in files {
            let p = root.join(f);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(&p, b"").unwrap();
        }
        let pytorch = "\
# x

## Files

| path | size B | original path | ranks | events | kernels | NCCL k | graph launch | memcpy/memset | ProfilerStep# | baseTimeNs | GPU |
|---|---|---|---|---|---|---|---|---|---|---|---|
| ddp/r0.json | 1 | o | rank 0/2 nccl | 10 | 4 | 1 | 0 | 2/1 | 1 | no | g |
| ddp/r1.json | 1 | o | rank 1/2 nccl | 11 | 5 | 1 | 0 | 2/0 | 1 | no | g |
| one/t.json.gz | 1 | o | no distributedInfo | 3 | 1 | 0 | 2 | 0/0 | 0 | yes | g |

## Non-trace files

| path | size B | original path | what |
|---|---|---|---|
| one/details.json | 1 | o | metadata |

## Event counts by `cat` (per trace file)

- `ddp/r0.json` (sha256 …): kernel:4, cpu_op:6. ph: X:10
- `ddp/r1.json` (sha256 …): kernel:5, cpu_op:6. ph: X:11
- `one/t.json.gz` (sha256 …): kernel:1, null:2. ph: X:1, M:2
";
        let jax = "\
# y

- `regenerated-x.trace.json.gz` — derived.

## Sources and licences

| folder | source repo @ commit | path in repo | licence | what |
|---|---|---|---|---|
| gpu | someone @ abc | p | MIT | w |
| cpu | generated here | — | ours | see below |

## Per-file structure

#### cpu/vm.xplane.pb
- size 1 B
- plane `/host:metadata`: 0 events; 0 lines; 18 HloProtos embedded (names), plane stats: a
- plane `/host:CPU`: 758 events; 3 lines
#### gpu/a.xplane.pb
- plane `/host:metadata`: 0 events; 0 lines; 9 HloProtos embedded (names), plane stats: 
- plane `/device:GPU:0`: 53 events; `Stream #8(MemcpyOther)`=15; `Stream #1`=38
- empty device planes (capabilities only): 6

HLO source-attribution fields:

## cpu (generated on CPU)

- Files: `vm.xplane.pb`, `vm.trace.json.gz` and `perfetto_trace.json.gz`.
";
        std::fs::write(root.join("pytorch/MANIFEST.md"), pytorch).unwrap();
        std::fs::write(root.join("jax/MANIFEST.md"), jax).unwrap();
        let set = RealTraces::read(&root);
        let rels: Vec<&str> = set.kineto.iter().map(|t| t.rel.as_str()).collect();
        assert_eq!(rels, ["ddp/r0.json", "ddp/r1.json", "one/t.json.gz"]);
        let r1 = set.kineto("ddp/r1.json");
        assert_eq!((r1.rank, r1.world_size), (Some(1), Some(2)));
        assert_eq!(
            (r1.events, r1.kernels, r1.memcpys, r1.memsets),
            (11, 5, 2, 0)
        );
        assert_eq!(set.kineto("one/t.json.gz").by_ph["M"], 2);
        assert_eq!(set.kineto("one/t.json.gz").graph_launches, 2);
        assert_eq!(set.rank_dirs(), [root.join("pytorch/ddp")]);
        let gpu = set.xspace("gpu");
        assert_eq!(gpu.hlo_programs, 9);
        assert_eq!(gpu.empty_device_planes, 6);
        assert_eq!(gpu.gpu_events(), 53);
        assert_eq!(gpu.planes[1].lines, 2);
        assert_eq!(gpu.planes[1].streams[1], ("Stream #1".to_owned(), 38));
        assert!(!gpu.made_here);
        let cpu = set.xspace("cpu");
        assert!(cpu.made_here);
        assert_eq!(cpu.hlo_programs, 18);
        assert_eq!(cpu.planes[1].lines, 3);
        assert_eq!(
            set.jax_gpu_json(),
            [root.join("jax/gpu/regenerated-x.trace.json.gz")]
        );
        assert_eq!(set.jax_cpu_json(), [root.join("jax/cpu/vm.trace.json.gz")]);
        // A trace the manifest does not list is an error, not a file the tests skip.
        std::fs::write(root.join("pytorch/one/new.json"), b"").unwrap();
        let unlisted = std::panic::catch_unwind(|| RealTraces::read(&root));
        let _ = std::fs::remove_dir_all(&root);
        assert!(unlisted.is_err(), "an unlisted trace must be refused");
    }

    /// The real set (with `TRACEWISE_TRACES`): the manifests' tables agree with each other,
    /// so a count a test reads from one is the count the other states.
    #[test]
    fn real_manifests_agree_with_themselves() {
        let Some(set) = crate::real_traces("real_manifests_agree_with_themselves") else {
            return;
        };
        assert!(!set.kineto.is_empty() && !set.xspaces.is_empty());
        for t in &set.kineto {
            let cat = |c: &str| t.by_cat.get(c).copied().unwrap_or(0);
            assert_eq!(
                t.by_cat.values().sum::<u64>(),
                t.events,
                "{}: by cat",
                t.rel
            );
            assert_eq!(t.by_ph.values().sum::<u64>(), t.events, "{}: by ph", t.rel);
            // Kineto's spellings since 2022 and 2021's (`Kernel`, `Memcpy`, `Memset`).
            assert_eq!(
                cat("kernel") + cat("Kernel"),
                t.kernels,
                "{}: kernels",
                t.rel
            );
            assert_eq!(
                cat("gpu_memcpy") + cat("Memcpy"),
                t.memcpys,
                "{}: memcpys",
                t.rel
            );
            assert_eq!(
                cat("gpu_memset") + cat("Memset"),
                t.memsets,
                "{}: memsets",
                t.rel
            );
            assert!(t.nccl_kernels <= t.kernels, "{}", t.rel);
        }
        for x in &set.xspaces {
            // Every JAX capture stores its programs; TensorFlow's has no metadata plane.
            let has_metadata = x.planes.iter().any(|p| p.name == "/host:metadata");
            assert!(
                x.hlo_programs > 0 || !has_metadata,
                "{}: HLO programs",
                x.folder
            );
            assert!(
                x.planes.iter().any(|p| p.name == "/host:CPU"),
                "{}",
                x.folder
            );
            for p in &x.planes {
                if !p.streams.is_empty() {
                    let sum: u64 = p.streams.iter().map(|(_, n)| n).sum();
                    assert_eq!(sum, p.events, "{} {}: streams", x.folder, p.name);
                }
            }
        }
        // A folder of rank traces exists (the tools' directory mode runs on it).
        assert!(!set.rank_dirs().is_empty());
    }
}
