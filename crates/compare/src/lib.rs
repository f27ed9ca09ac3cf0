//! Before/after comparison of two captures: did the change help, and as much as predicted?
//!
//! Compare takes two investigations (`investigation::Investigation`). Each side is any
//! input investigate reads, investigated once (`investigation::investigate_each`: the
//! value investigate computes, and while each capture is in memory the per-step tables the
//! value does not hold; a rank directory is read a rank at a time), or investigate's
//! `report.json` of one, read back into the value (its step figures and causes only).
//! Step figures and causes come from the value, the same fields both ways, and causes are
//! matched by their keys. Every figure is kept as a series with one sample per
//! steady-state step of every rank. Then, row by row (step time, each stream's budget
//! part, each kernel class, each kernel by normalised name, each CPU op):
//!
//! - **Noise rule**: a difference counts only when the difference of the medians exceeds
//!   the larger of the two sides' spreads, a side's spread being max(IQR over its
//!   samples, 1 % of its median) ([`SampleStat::spread`]); otherwise the row says "no change
//!   beyond noise".
//! - **Inconclusive**, with reasons, when the sides are not comparable: different GPU
//!   models (or vendors, where a side does not name its GPUs) or counts, different step definitions, fewer than [`Config::min_steps`]
//!   steady-state steps or no steps at all, or kernel sets that share less than
//!   [`Config::min_kernel_overlap`] of the time.
//! - **Kernels** are matched by [`normalise_kernel_name`]; a kernel present on one side
//!   only is paired, within its class, with one present on the other side only and of
//!   similar time per step ([`Config::rename_tolerance`]), or, time aside, when it is the
//!   only one of its class removed and the other the only one added: a rename.
//! - **Predicted against realized**: the before side's causes (the ones investigate ranks,
//!   keyed by [`CauseKey`], never by their sentence) each predict a step-time gain: by
//!   subtraction (their time per steady-state step) and by replaying the before capture's
//!   dependency graph without them (`investigation::RankedCause::replay`, with the
//!   replay's error). Each cause's realized change (its time per step before − after)
//!   stands beside the realized step gain (the difference of the median steps); a ratio
//!   is given only against the prediction for the change that happened and only for the
//!   cause the step's change can be credited to ([`CauseRow::realized_share`],
//!   [`OTHERS_STILL`]); [`Comparison::moved_most`] is the headline.
//! - **Not the same work** (inconclusive) also when the steady-state step counts differ
//!   by more than [`STEP_COUNT_FACTOR`].
//!
//! A capture compared with itself changes nothing:
//!
//! ```
//! let root = test_support::workspace_root();
//! let path = root.join("testdata/chrome/ok/tiny-train/rank0.pt.trace.json");
//! let c = compare::compare(&path, &path, &compare::Config::default())?;
//! assert!(c.step_time.change == compare::Change::None);
//! assert!(c.kernels.iter().all(|k| k.row.change == compare::Change::None));
//! # Ok::<(), compare::Error>(())
//! ```

#![warn(missing_docs)]

mod comparable;
mod error;
mod names;
mod no_replay;
mod report_side;
mod side;

use std::collections::BTreeMap;
use std::path::Path;

use trace_model::Nanos;

pub use analysis::CauseKey;
pub use comparable::{NotComparable, Which};
pub use error::Error;
pub use names::normalise_kernel_name;
pub use no_replay::NoReplay;
pub use report_side::of_investigation as side_of_investigation;
pub use side::{BUDGET_PARTS, KernelUse, OpKey, Side, StepLanes, StreamLane, Totals};

/// Options of a comparison.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    /// Fewest steady-state steps a side needs for a spread (default 3).
    pub min_steps: usize,
    /// The floor of a side's spread, as a share of its median (default 0.01: 1 %).
    pub median_floor: f64,
    /// Least share of kernel time (of each side) in kernels the other side has too
    /// (renames counted) for the sides to run the same work (default 0.5). Why a half:
    /// an optimisation replaces some kernels (fused elementwise, another GEMM tile,
    /// another attention kernel; renames within a class are paired), but when more than
    /// half of a side's GPU time is in kernels the other never runs, the model, its
    /// shapes or its framework changed, and a step-time difference says nothing about the
    /// change under test.
    pub min_kernel_overlap: f64,
    /// Two kernels on one side only are a rename when their medians per step differ by
    /// at most this share of the larger (default 0.25).
    pub rename_tolerance: f64,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            min_steps: 3,
            median_floor: 0.01,
            min_kernel_overlap: 0.5,
            rename_tolerance: 0.25,
        }
    }
}

/// Median and spread of one side's samples (all `measured`; not an XSpace stat).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SampleStat {
    /// Lower median.
    pub median: Nanos,
    /// Lower quartile (nearest rank).
    pub q1: Nanos,
    /// Upper quartile (nearest rank).
    pub q3: Nanos,
    /// Samples.
    pub samples: usize,
}

impl SampleStat {
    /// Median and quartiles of `values`; zero for an empty set.
    pub fn of(values: &[Nanos]) -> SampleStat {
        let mut v = values.to_vec();
        if v.is_empty() {
            return SampleStat::default();
        }
        v.sort_unstable();
        let n = v.len() - 1;
        SampleStat {
            median: v[n / 2],
            q1: v[n / 4],
            q3: v[(3 * n) / 4],
            samples: v.len(),
        }
    }

    /// The spread the noise rule uses: max(q3 − q1, `floor` × median).
    pub fn spread(&self, floor: f64) -> Nanos {
        let of_median = (self.median.0 as f64 * floor).round() as i64;
        Nanos((self.q3 - self.q1).0.max(of_median))
    }
}

/// Whether a row changed beyond noise.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    /// The median went down by more than the spread.
    Lower,
    /// The median went up by more than the spread.
    Higher,
    /// No change beyond noise.
    None,
}

impl Change {
    /// In words, as reports print it.
    pub fn describe(self) -> &'static str {
        match self {
            Change::Lower => "lower",
            Change::Higher => "higher",
            Change::None => "no change beyond noise",
        }
    }
}

/// One row: a figure on both sides, its delta and whether it counts.
#[derive(Debug, Clone, PartialEq)]
pub struct Row<K = String> {
    /// What the row is (a class word, a kernel or op name; a budget row's [`StreamPart`]).
    pub key: K,
    /// Before.
    pub before: SampleStat,
    /// After.
    pub after: SampleStat,
    /// after.median − before.median (`measured`: a difference of measured figures).
    pub delta: Nanos,
    /// The larger side's spread (see [`SampleStat::spread`]).
    pub noise: Nanos,
    /// Whether |delta| exceeds `noise`.
    pub change: Change,
}

/// A budget row's stream and part: the rank, the GPU's position among its capture's GPUs
/// with activity (by ordinal), the matched stream's number on each side, and the part.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StreamPart {
    /// The rank (`None` for one-capture sides).
    pub rank: Option<i64>,
    /// The GPU's position among its capture's GPUs with activity, by ordinal.
    pub gpu: usize,
    /// The stream's number before and after (`None` where that side has no stream at
    /// this place); streams are matched by their place on their GPU, busiest first.
    pub stream: [Option<i64>; 2],
    /// The budget part (one of [`BUDGET_PARTS`]).
    pub part: &'static str,
}

impl<K> Row<K> {
    fn new(key: K, before: &[Nanos], after: &[Nanos], config: &Config) -> Row<K> {
        Row::of_stats(key, SampleStat::of(before), SampleStat::of(after), config)
    }

    fn of_stats(key: K, b: SampleStat, a: SampleStat, config: &Config) -> Row<K> {
        let delta = a.median - b.median;
        let noise = b
            .spread(config.median_floor)
            .max(a.spread(config.median_floor));
        let change = if delta.0.abs() <= noise.0 {
            Change::None
        } else if delta.0 < 0 {
            Change::Lower
        } else {
            Change::Higher
        };
        Row {
            key,
            before: b,
            after: a,
            delta,
            noise,
            change,
        }
    }
}

/// Where a kernel or op is found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Presence {
    /// On both sides under one name.
    Both,
    /// Before only: removed.
    Removed,
    /// After only: added.
    Added,
    /// Before under the row's name, after under this one (same class, and similar time or
    /// the only one of the class removed and added).
    RenamedTo(String),
}

/// A kernel or op on both sides.
#[derive(Debug, Clone, PartialEq)]
pub struct NamedRow {
    /// Time per sample (steady-state step of a rank), with the noise rule.
    pub row: Row,
    /// The kernel's class word; empty for ops.
    pub class: &'static str,
    /// Instances before and after, over all samples (`measured`).
    pub count: [u64; 2],
    /// Total time before and after, over all samples (`measured`).
    pub total: [Nanos; 2],
    /// Where it is found.
    pub presence: Presence,
}

/// One cause: its predicted gain against the realized one.
#[derive(Debug, Clone, PartialEq)]
pub struct CauseRow {
    /// The cause.
    pub key: CauseKey,
    /// Its time per steady-state step before: the step-time gain predicted if it went
    /// away by subtraction (`inferred`: the rest of the step stays as it is).
    pub predicted_gain: Nanos,
    /// The before side's replay of its scenario: the unchanged replay's mean step minus
    /// the mean step without the cause (`inferred`, `investigation::REPLAY_ASSUMPTIONS`);
    /// `None` where there is no replay (`replay_note` says why).
    pub replayed_gain: Option<Nanos>,
    /// That replay's error on the unchanged before capture (median absolute step error).
    pub replay_error: Option<f64>,
    /// Why there is no replayed gain (no scenario, cannot replay, a report.json side).
    pub replay_note: Option<NoReplay>,
    /// Its time per steady-state step after (`inferred`, the same way); `None` when the
    /// after side has no analysed window.
    pub after: Option<Nanos>,
    /// Its realized change: time per step before minus after (`inferred`); `None` when
    /// the after side has no analysed window.
    pub cause_change: Option<Nanos>,
    /// The prediction for the change that happened: the replayed gain (else the
    /// subtraction) × the share of the cause's time that went away (`inferred`: the gain
    /// scales with the share removed; exact when the cause went away entirely).
    pub predicted_for_change: Option<Nanos>,
    /// realized step gain ÷ `predicted_for_change` (`inferred`). Only where the step's
    /// change can be credited to this cause: the sides are comparable, this cause went
    /// down, it moved most of all causes, and every other cause moved by at most
    /// [`OTHERS_STILL`] of its change. The step change is never divided by the
    /// prediction of a cause that did not make it.
    pub realized_share: Option<f64>,
}

/// The most another cause may move (as a share of the moving cause's change) for the
/// step's change to be credited to the one that moved: with two causes moving by
/// comparable amounts, the step's change is theirs together and no single prediction
/// can be checked against it. 10 %: the other causes' changes then account for at most
/// a tenth of the credited one, inside the 5 % to 10 % a replay prediction aims at once
/// its own error (a few %) is added.
pub const OTHERS_STILL: f64 = 0.1;

/// Two sides whose steady-state step counts differ by more than this factor are not the
/// same work: a profiler schedule records the same number of active steps on both sides
/// of a change to the model or its settings, so a factor of four (e.g. 4 steps against
/// 16 "steps" that are layers or micro-batches) means one side's steps are another unit.
pub const STEP_COUNT_FACTOR: f64 = 4.0;

/// The comparison's outcome on step time (`Comparison::verdict`; not `analysis::Verdict`,
/// what bounds one capture's step).
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// The median step went down by more than the noise.
    Faster,
    /// The median step went up by more than the noise.
    Slower,
    /// No change beyond noise.
    NoChange,
    /// The sides are not comparable; the reasons say why.
    Inconclusive(Vec<NotComparable>),
}

/// Everything a comparison finds.
#[derive(Debug, Clone)]
pub struct Comparison {
    /// The options used.
    pub config: Config,
    /// What was kept of the before side.
    pub before: Side,
    /// What was kept of the after side.
    pub after: Side,
    /// The verdict on step time.
    pub verdict: Outcome,
    /// Steady-state step time, per sample.
    pub step_time: Row,
    /// Per stream and budget part, keyed by its [`StreamPart`] (rank, the GPU's position
    /// in its capture, the matched stream's numbers, the part).
    pub budgets: Vec<Row<StreamPart>>,
    /// GPU time per kernel class, keyed by the class word.
    pub classes: Vec<Row>,
    /// Kernels by normalised name, most time (either side) first.
    pub kernels: Vec<NamedRow>,
    /// CPU ops by name, most time (either side) first.
    pub ops: Vec<NamedRow>,
    /// Python lines (`file.py(123): function`), when both sides recorded stacks.
    pub python_lines: Vec<NamedRow>,
    /// Ops (by name and shapes) on both sides whose kernels differ, with the kernels each
    /// side launched under them: kernel replacements with the op and shapes as evidence.
    pub op_kernels: Vec<OpKernelsRow>,
    /// Share of each side's kernel time in kernels matched on the other side (renames
    /// counted), before and after (`measured`).
    pub kernel_overlap: [f64; 2],
    /// The before side's causes with predicted and realized gains, most predicted first.
    pub causes: Vec<CauseRow>,
    /// The realized step-time gain: before median step − after median step (`measured`).
    pub realized_gain: Nanos,
    /// The cause (of either side) whose time per step moved most, with its time per step
    /// before and after (`inferred`; zero where a side does not rank it): the headline.
    pub moved_most: Option<(CauseKey, Nanos, Nanos)>,
    /// The cause with the most time per step after.
    pub leading_after: Option<(CauseKey, Nanos)>,
    /// Every event name of each side's first step (of its first capture), largest change
    /// of total time first; empty when a side has no steps in its capture.
    pub first_step_names: Vec<FirstStepRow>,
}

/// One event name in the first step of each side (`measured`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FirstStepRow {
    /// The event's name (operator, runtime call, annotation, kernel, copy).
    pub name: String,
    /// Events before and after.
    pub count: [u64; 2],
    /// Total time before and after, in whole microseconds (each event rounded inward).
    pub total_us: [i64; 2],
}

/// Investigates `before` and `after` (each loaded once), or reads an investigate
/// report.json in place of either, and compares the two investigations.
pub fn compare(before: &Path, after: &Path, config: &Config) -> Result<Comparison, Error> {
    // Each side is dropped down to its summary before the next is read.
    let b = side(before).map_err(|e| e.of_side("before"))?;
    let a = side(after).map_err(|e| e.of_side("after"))?;
    Ok(compare_sides(b, a, config))
}

/// One side: a report.json read back into its `Investigation`, else the capture at
/// `path` investigated.
pub fn side(path: &Path) -> Result<Side, Error> {
    if report_side::is_report(path) {
        return report_side::read(path).map_err(|message| Error::Report {
            side: "",
            path: path.to_path_buf(),
            message,
        });
    }
    side::investigate(path)
}

/// Compares two summarised sides.
pub fn compare_sides(before: Side, after: Side, config: &Config) -> Comparison {
    let step_time = Row::of_stats(
        "step time".to_owned(),
        before.step_stat(),
        after.step_stat(),
        config,
    );
    // A report side knows its step figures and causes only: the other tables need both
    // captures.
    let (before, after, report_side) = if before.from_report || after.from_report {
        let strip = |s: Side| Side {
            budgets: Default::default(),
            classes: Default::default(),
            kernels: Default::default(),
            ops: Default::default(),
            python_lines: Default::default(),
            op_kernels: Default::default(),
            first_step: None,
            ..s
        };
        (strip(before), strip(after), true)
    } else {
        (before, after, false)
    };
    let budgets = keyed_rows(&before.budgets, &after.budgets, config, |k| {
        let (rank, gpu, place, part) = *k;
        let ordinal = |s: &Side| s.stream_ordinals.get(&(rank, gpu, place)).copied();
        StreamPart {
            rank,
            gpu,
            stream: [ordinal(&before), ordinal(&after)],
            part,
        }
    });
    let classes = keyed_rows(&before.classes, &after.classes, config, |k| (*k).to_owned());
    let kernels = named_rows(&before.kernels, &after.kernels, config, true);
    // Ops by name and shapes when both sides recorded shapes, else by name.
    let shapes = before.ops_have_shapes && after.ops_have_shapes;
    let ops = named_rows(
        &op_totals(&before, shapes),
        &op_totals(&after, shapes),
        config,
        false,
    );
    let op_kernels = op_kernel_rows(&before, &after, shapes);
    // Lines only when both sides recorded stacks: otherwise every line is one side's.
    let python_lines = if before.python_lines.is_empty() || after.python_lines.is_empty() {
        Vec::new()
    } else {
        named_rows(&before.python_lines, &after.python_lines, config, false)
    };
    let kernel_overlap = overlap(&kernels);
    let realized_gain = before_minus_after(&step_time);
    let mut reasons = comparable::reasons(&before, &after, config);
    for (side, share) in [Which::Before, Which::After]
        .into_iter()
        .zip(kernel_overlap)
    {
        if share < config.min_kernel_overlap && !before.kernels.is_empty() && !report_side {
            reasons.push(NotComparable::KernelOverlap {
                side,
                share,
                needed: config.min_kernel_overlap,
            });
        }
    }
    let moved = moved(&before, &after);
    let moved_most = moved.first().copied();
    let causes = cause_rows(&before, &after, &moved, realized_gain, reasons.is_empty());
    let leading_after = after.causes.first().copied().filter(|c| c.1.0 > 0);
    let first_step_names = first_step_rows(&before, &after);
    let verdict = if !reasons.is_empty() {
        Outcome::Inconclusive(reasons)
    } else {
        match step_time.change {
            Change::Lower => Outcome::Faster,
            Change::Higher => Outcome::Slower,
            Change::None => Outcome::NoChange,
        }
    };
    Comparison {
        config: config.clone(),
        before,
        after,
        verdict,
        step_time,
        budgets,
        classes,
        kernels,
        ops,
        python_lines,
        op_kernels,
        kernel_overlap,
        causes,
        realized_gain,
        moved_most,
        leading_after,
        first_step_names,
    }
}

/// Every cause of either side with its time per step before and after (zero where a
/// side does not rank it), the largest change first (ties by key); empty when a side has
/// no analysed window.
fn moved(before: &Side, after: &Side) -> Vec<(CauseKey, Nanos, Nanos)> {
    if before.mean_step.is_none() || after.mean_step.is_none() {
        return Vec::new();
    }
    let b: BTreeMap<CauseKey, Nanos> = before.causes.iter().copied().collect();
    let a: BTreeMap<CauseKey, Nanos> = after.causes.iter().copied().collect();
    let mut keys: Vec<CauseKey> = b.keys().chain(a.keys()).copied().collect();
    keys.sort();
    keys.dedup();
    let mut out: Vec<(CauseKey, Nanos, Nanos)> = keys
        .into_iter()
        .map(|k| {
            let get = |m: &BTreeMap<CauseKey, Nanos>| m.get(&k).copied().unwrap_or(Nanos::ZERO);
            (k, get(&b), get(&a))
        })
        .collect();
    out.sort_by(|x, y| {
        let d = |r: &(CauseKey, Nanos, Nanos)| (r.1 - r.2).0.abs();
        d(y).cmp(&d(x)).then(x.0.cmp(&y.0))
    });
    out
}

/// The before side's causes, each with its predictions and its realized change.
fn cause_rows(
    before: &Side,
    after: &Side,
    moved: &[(CauseKey, Nanos, Nanos)],
    realized_gain: Nanos,
    comparable: bool,
) -> Vec<CauseRow> {
    let after_causes: BTreeMap<CauseKey, Nanos> = after.causes.iter().copied().collect();
    before
        .causes
        .iter()
        .map(|&(key, predicted_gain)| {
            let (replayed_gain, replay_error, replay_note) = match before.replays.get(&key) {
                Some(investigation::CauseReplay::Replayed(r)) => {
                    (Some(r.replayed_step - r.step_after), r.replay_error, None)
                }
                Some(investigation::CauseReplay::CannotReplay { reason }) => {
                    let reason = reason.clone();
                    (None, None, Some(NoReplay::CannotReplay { reason }))
                }
                Some(investigation::CauseReplay::NoScenario { reason }) => {
                    let reason = *reason;
                    (None, None, Some(NoReplay::NoScenario { reason }))
                }
                Some(investigation::CauseReplay::NotComputed) | None => {
                    let why = if before.from_report {
                        NoReplay::FromReport
                    } else {
                        NoReplay::NotReplayed
                    };
                    (None, None, Some(why))
                }
            };
            let after_time = after
                .mean_step
                .map(|_| after_causes.get(&key).copied().unwrap_or(Nanos::ZERO));
            let cause_change = after_time.map(|a| predicted_gain - a);
            let predicted_for_change = cause_change.and_then(|d| {
                (predicted_gain.0 > 0 && d.0 > 0).then(|| {
                    let removed = d.0 as f64 / predicted_gain.0 as f64;
                    let gain = replayed_gain.unwrap_or(predicted_gain);
                    Nanos((gain.0 as f64 * removed).round() as i64)
                })
            });
            let credited = moved.first().is_some_and(|m| m.0 == key)
                && cause_change.is_some_and(|d| {
                    moved[1..]
                        .iter()
                        .all(|o| ((o.1 - o.2).0.abs() as f64) <= OTHERS_STILL * d.0 as f64)
                });
            let realized_share = predicted_for_change
                .filter(|p| comparable && credited && p.0 > 0)
                .map(|p| realized_gain.0 as f64 / p.0 as f64);
            CauseRow {
                key,
                predicted_gain,
                replayed_gain,
                replay_error,
                replay_note,
                after: after_time,
                cause_change,
                predicted_for_change,
                realized_share,
            }
        })
        .collect()
}

fn first_step_rows(before: &Side, after: &Side) -> Vec<FirstStepRow> {
    let (Some((_, b)), Some((_, a))) = (&before.first_step, &after.first_step) else {
        return Vec::new();
    };
    let mut names: Vec<&String> = b.keys().chain(a.keys()).collect();
    names.sort();
    names.dedup();
    let get = |m: &BTreeMap<String, NameTotals>, n: &str| m.get(n).copied().unwrap_or_default();
    let mut rows: Vec<FirstStepRow> = names
        .into_iter()
        .map(|n| {
            let (x, y) = (get(b, n), get(a, n));
            FirstStepRow {
                name: n.clone(),
                count: [x.count, y.count],
                total_us: [x.total_us, y.total_us],
            }
        })
        .collect();
    rows.sort_by(|x, y| {
        let d = |r: &FirstStepRow| (r.total_us[1] - r.total_us[0]).abs();
        d(y).cmp(&d(x)).then(x.name.cmp(&y.name))
    });
    rows
}

fn before_minus_after(row: &Row) -> Nanos {
    row.before.median - row.after.median
}

fn keyed_rows<K: Ord + Clone, Key>(
    before: &BTreeMap<K, Vec<Nanos>>,
    after: &BTreeMap<K, Vec<Nanos>>,
    config: &Config,
    name: impl Fn(&K) -> Key,
) -> Vec<Row<Key>> {
    let mut keys: Vec<&K> = before.keys().chain(after.keys()).collect();
    keys.sort();
    keys.dedup();
    let zero = |v: Option<&Vec<Nanos>>| v.is_none_or(|v| v.iter().all(|n| n.0 == 0));
    keys.into_iter()
        // A part that is zero in every step on both sides (a stream's collective time
        // where none runs) says nothing.
        .filter(|k| !(zero(before.get(k)) && zero(after.get(k))))
        .map(|k| {
            Row::new(
                name(k),
                before.get(k).map_or(&[][..], Vec::as_slice),
                after.get(k).map_or(&[][..], Vec::as_slice),
                config,
            )
        })
        .collect()
}

/// Rows of kernels or ops; a missing side counts zero in each of its samples.
fn named_rows(
    before: &BTreeMap<String, Totals>,
    after: &BTreeMap<String, Totals>,
    config: &Config,
    find_renames: bool,
) -> Vec<NamedRow> {
    let samples = |m: &BTreeMap<String, Totals>| m.values().next().map_or(0, |t| t.time.len());
    let zeros = |n: usize| vec![Nanos::ZERO; n];
    let (nb, na) = (samples(before), samples(after));
    // Mean time per sample: a kernel that runs every other step still has one.
    let median =
        |t: &Totals| Nanos(t.time.iter().map(|n| n.0).sum::<i64>() / t.time.len().max(1) as i64);
    // Renames: within a class, a kernel before only paired with the after-only kernel of
    // the closest median time, when within the tolerance; larger kernels pair first.
    let mut renamed: BTreeMap<&str, &str> = BTreeMap::new();
    if find_renames {
        let mut gone: Vec<(&String, &Totals)> = before
            .iter()
            .filter(|(k, _)| !after.contains_key(*k))
            .collect();
        gone.sort_by(|a, b| median(b.1).cmp(&median(a.1)).then(a.0.cmp(b.0)));
        let mut new: Vec<(&String, &Totals)> = after
            .iter()
            .filter(|(k, _)| !before.contains_key(*k))
            .collect();
        for (name, t) in gone {
            let m = median(t).0;
            let best = new
                .iter()
                .enumerate()
                .filter(|(_, (_, u))| u.class == t.class)
                .map(|(i, (_, u))| (i, (median(u).0 - m).abs(), median(u).0.max(m)))
                .filter(|&(_, diff, larger)| {
                    larger > 0 && diff as f64 <= config.rename_tolerance * larger as f64
                })
                .min_by_key(|&(i, diff, _)| (diff, i));
            if let Some((i, _, _)) = best {
                renamed.insert(name.as_str(), new.remove(i).0.as_str());
            }
        }
        // Time aside: the only kernel of a class removed and the only one added (a
        // FlashAttention kernel replaced by another vendor's attention kernel).
        let mut classes: BTreeMap<&str, (Vec<&str>, Vec<&str>)> = BTreeMap::new();
        for (name, t) in before.iter().filter(|(k, _)| !after.contains_key(*k)) {
            if !renamed.contains_key(name.as_str()) {
                classes.entry(t.class).or_default().0.push(name);
            }
        }
        for (name, t) in &new {
            classes.entry(t.class).or_default().1.push(name);
        }
        for (gone, added) in classes.values() {
            if let ([g], [a]) = (gone.as_slice(), added.as_slice()) {
                renamed.insert(g, a);
            }
        }
    }
    let renamed_to: std::collections::BTreeSet<&str> = renamed.values().copied().collect();
    let mut rows = Vec::new();
    for (name, b) in before {
        let (after_totals, presence) = match (after.get(name), renamed.get(name.as_str())) {
            (Some(a), _) => (Some(a), Presence::Both),
            (None, Some(to)) => (after.get(*to), Presence::RenamedTo((*to).to_owned())),
            (None, None) => (None, Presence::Removed),
        };
        let a_time = after_totals.map_or_else(|| zeros(na), |a| a.time.clone());
        rows.push(NamedRow {
            row: Row::new(name.clone(), &b.time, &a_time, config),
            class: b.class,
            count: [b.count, after_totals.map_or(0, |a| a.count)],
            total: [total(b), after_totals.map_or(Nanos::ZERO, total)],
            presence,
        });
    }
    for (name, a) in after {
        if before.contains_key(name) || renamed_to.contains(name.as_str()) {
            continue;
        }
        rows.push(NamedRow {
            row: Row::new(name.clone(), &zeros(nb), &a.time, config),
            class: a.class,
            count: [0, a.count],
            total: [Nanos::ZERO, total(a)],
            presence: Presence::Added,
        });
    }
    rows.sort_by(|x, y| {
        let kx = x.total[0].max(x.total[1]);
        let ky = y.total[0].max(y.total[1]);
        ky.cmp(&kx).then(x.row.key.cmp(&y.row.key))
    });
    rows
}

fn total(t: &Totals) -> Nanos {
    t.time.iter().copied().sum()
}

/// Share of each side's kernel time in matched kernels.
fn overlap(kernels: &[NamedRow]) -> [f64; 2] {
    let mut matched = [0i64; 2];
    let mut all = [0i64; 2];
    for k in kernels {
        let t = [k.total[0].0, k.total[1].0];
        for side in 0..2 {
            all[side] += t[side];
            if matches!(k.presence, Presence::Both | Presence::RenamedTo(_)) {
                matched[side] += t[side];
            }
        }
    }
    [0, 1].map(|i| {
        if all[i] == 0 {
            1.0
        } else {
            matched[i] as f64 / all[i] as f64
        }
    })
}

/// An op on both sides whose kernels differ.
#[derive(Debug, Clone, PartialEq)]
pub struct OpKernelsRow {
    /// The op, with its shapes when both sides recorded them.
    pub op: String,
    /// Its instances before and after (over the steady-state steps).
    pub count: [u64; 2],
    /// The kernels launched under it (by normalised name) before and after, most time
    /// first.
    pub kernels: [Vec<(String, KernelUse)>; 2],
}

/// At most this many distinct kernels on a side for an op to get a row: an op that
/// launches more (a whole layer, a module) says nothing about which kernel replaced which.
const OP_KERNELS_MAX: usize = 4;

fn op_totals(side: &Side, shapes: bool) -> BTreeMap<String, Totals> {
    let mut out: BTreeMap<String, Totals> = BTreeMap::new();
    for (k, t) in &side.ops {
        let key = if shapes {
            k.to_string()
        } else {
            k.name.clone()
        };
        match out.entry(key) {
            std::collections::btree_map::Entry::Vacant(v) => {
                v.insert(t.clone());
            }
            std::collections::btree_map::Entry::Occupied(mut o) => {
                let sum = o.get_mut();
                for (x, y) in sum.time.iter_mut().zip(&t.time) {
                    *x += *y;
                }
                sum.count += t.count;
            }
        }
    }
    out
}

/// Each side's kernels under an op, by the key [`op_totals`] uses.
fn op_kernel_uses(side: &Side, shapes: bool) -> BTreeMap<String, BTreeMap<String, KernelUse>> {
    let mut out: BTreeMap<String, BTreeMap<String, KernelUse>> = BTreeMap::new();
    for (k, kernels) in &side.op_kernels {
        let key = if shapes {
            k.to_string()
        } else {
            k.name.clone()
        };
        let into = out.entry(key).or_default();
        for (name, used) in kernels {
            let sum = into.entry(name.clone()).or_default();
            sum.count += used.count;
            sum.time += used.time;
        }
    }
    out
}

/// Ops on both sides that launch at most [`OP_KERNELS_MAX`] kernels on each and not the
/// same ones; of ops with the very same kernel instances on both sides (an op and the op
/// inside it that launched them all), the one with the most CPU time (the outermost) only.
fn op_kernel_rows(before: &Side, after: &Side, shapes: bool) -> Vec<OpKernelsRow> {
    let (ops_b, ops_a) = (op_totals(before, shapes), op_totals(after, shapes));
    let (uses_b, uses_a) = (
        op_kernel_uses(before, shapes),
        op_kernel_uses(after, shapes),
    );
    let sorted = |m: &BTreeMap<String, KernelUse>| {
        let mut v: Vec<(String, KernelUse)> = m.iter().map(|(k, u)| (k.clone(), *u)).collect();
        v.sort_by(|x, y| y.1.time.cmp(&x.1.time).then(x.0.cmp(&y.0)));
        v
    };
    let mut rows: Vec<(Nanos, OpKernelsRow)> = Vec::new();
    for (op, b) in &uses_b {
        let (Some(a), Some(tb), Some(ta)) = (uses_a.get(op), ops_b.get(op), ops_a.get(op)) else {
            continue;
        };
        if b.len() > OP_KERNELS_MAX || a.len() > OP_KERNELS_MAX || b.keys().eq(a.keys()) {
            continue;
        }
        rows.push((
            total(tb).max(total(ta)),
            OpKernelsRow {
                op: op.clone(),
                count: [tb.count, ta.count],
                kernels: [sorted(b), sorted(a)],
            },
        ));
    }
    rows.sort_by(|x, y| y.0.cmp(&x.0).then(x.1.op.cmp(&y.1.op)));
    let mut seen = std::collections::BTreeSet::new();
    rows.into_iter()
        .filter(|(_, r)| {
            // An op and the op inside it that launched all its kernels: the same uses.
            seen.insert(r.kernels.clone())
        })
        .map(|(_, r)| r)
        .collect()
}

/// Instances and total duration of one event name in one step.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct NameTotals {
    /// Events of that name.
    pub count: u64,
    /// Σ durations, each rounded to whole microseconds inward (start up, end down).
    pub total_us: i64,
}

/// Every event of one step by name, host and GPU alike: host events (operators, runtime
/// calls, annotations, the step's own annotation) starting inside the step's range, GPU
/// activities launched from inside it (by their launch call's start), and GPU-side
/// annotations starting inside it. Durations are rounded inward to whole microseconds,
/// so that the totals are those of a tool that works in whole microseconds (`measured`).
///
/// `step` is the step's number (`ProfilerStep#N`); `None` when the capture has no such
/// step.
pub fn names_in_step(
    capture: &trace_model::Capture,
    step: i64,
) -> Option<BTreeMap<String, NameTotals>> {
    let s = capture.steps().iter().find(|s| s.number == step)?;
    let inside = |t: Nanos| t >= s.start && t < s.end;
    let whole_us = |start: Nanos, dur: Nanos| {
        let first = start.0.div_euclid(1000) + i64::from(start.0.rem_euclid(1000) != 0);
        let last = (start.0 + dur.0).div_euclid(1000);
        last - first
    };
    let mut out: BTreeMap<String, NameTotals> = BTreeMap::new();
    let mut add = |name: &str, start: Nanos, dur: Nanos| {
        let t = out.entry(name.to_owned()).or_default();
        t.count += 1;
        t.total_us += whole_us(start, dur);
    };
    for e in capture.host_events() {
        if inside(e.start) {
            add(capture.name(e.name), e.start, e.dur);
        }
    }
    for a in capture.activities() {
        if a.launch()
            .is_some_and(|l| inside(capture.host_event(l).start))
        {
            add(capture.name(a.name), a.start, a.dur);
        }
    }
    for a in capture.gpu_annotations() {
        if inside(a.start) {
            add(capture.name(a.name), a.start, a.dur);
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    /// Each side is decoded once: the comparison is two loads, not more. (The only test
    /// of this binary that loads, so the process-wide counter sees no other load.)
    #[test]
    fn each_side_is_read_once() {
        let root = test_support::workspace_root();
        let path = root.join("testdata/chrome/ok/tiny-train/rank0.pt.trace.json");
        let before = load::decodes();
        crate::compare(&path, &path, &crate::Config::default()).expect("compares");
        assert_eq!(load::decodes() - before, 2);
    }
}
