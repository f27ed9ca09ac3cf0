//! A rank directory's ranks replayed together (`replay::RanksPredictor`): the drawn
//! rank's replayed estimates and `--what-if` prediction come from one joint replay of
//! every rank, its collectives matched with its peers', so that a rank made faster waits
//! for the slower ones, as it did when measured. Each scenario changes every rank (a
//! change of the program runs on all of them); the drawn rank's steps are measured.
//!
//! Every rank is loaded again for this (the investigation reads a directory one rank at a
//! time and keeps only the drawn one): memory grows with the ranks' total size, so a
//! directory of more than [`MAX_JOINT_RANKS`] ranks keeps the drawn rank's replay alone,
//! as do directories where a rank cannot be reloaded or replayed. The estimates then
//! come from the single-rank replay, and each one says so and why ([`ReplayedAlone`] in
//! `Replayed::alone`; the `--what-if` text starts with the same).
//!
//! `TRACEWISE_REPLAY=0` turns off the causes' replays only (the benchmark's baseline): a
//! `--what-if` is asked for by name and is replayed as it is without the variable, on a
//! rank directory jointly, as a single capture's `--what-if` is replayed alone either way.

use std::path::PathBuf;

use analysis::CaptureAnalysis;
use load::Loaded;

use crate::WhatIfRun;
use crate::model::{Advice, CauseReplay, Investigation};
use crate::replayed::{Labels, replayed, steady_windows};

/// The ranks of a directory replayed together (`replay::RanksPredictor`): the drawn
/// rank's steps measured, the scenario on every rank.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct RanksReplayed {
    /// The ranks replayed together, by name (`0`, `1`, … or their file names).
    pub ranks: Vec<String>,
    /// Collectives matched across the ranks: `(kind, collectives per rank)`.
    pub matched: Vec<(trace_model::CollectiveKind, usize)>,
    /// Why collectives were not matched (each replayed on its own rank).
    pub not_matched: Vec<replay::NotMatched>,
}

/// Why a rank directory's drawn rank was replayed alone, not with the other ranks: its
/// estimates then keep each collective's measured wait for its peers (a rank made
/// faster is not shown waiting for slower ones).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "why", rename_all = "snake_case")]
pub enum ReplayedAlone {
    /// More ranks than are held in memory together ([`MAX_JOINT_RANKS`]).
    TooManyRanks {
        /// The directory's ranks.
        ranks: usize,
        /// The most replayed together.
        most: usize,
    },
    /// A rank's file no longer loads.
    NotReloaded {
        /// The rank (its number, else its file name).
        rank: String,
        /// The loader's error.
        error: String,
    },
    /// A rank's capture cannot be replayed (no correlation ids, a GPU-only trace).
    NotReplayable {
        /// The rank (its number, else its file name).
        rank: String,
        /// Why.
        reason: replay::CannotReplay,
    },
}

/// The most ranks replayed together (each held in memory at once).
pub const MAX_JOINT_RANKS: usize = 64;

/// The ranks of a directory as `investigate_ranks` holds them.
pub(crate) struct Ranks<'a> {
    /// Each rank's file and rank number, in the order of `reports`.
    pub(crate) paths: &'a [(PathBuf, Option<i64>)],
    /// Each rank's skip-stats analysis.
    pub(crate) reports: &'a [CaptureAnalysis],
    /// The drawn rank (an index into both).
    pub(crate) chosen: usize,
    /// The drawn rank's capture, still in memory.
    pub(crate) detail: &'a Loaded,
}

/// Replays `ranks` together, replacing the replayed estimate of every ranked cause of
/// `investigation` that has one with the joint replay's, and returns `what_if`'s joint
/// prediction of the drawn rank (none without one). `None` where the ranks are not replayed
/// together (a single rank, more than [`MAX_JOINT_RANKS`], a rank that no longer loads
/// or cannot be replayed, no steady-state steps on the drawn rank): nothing is changed
/// then.
pub(crate) fn replay_ranks(
    ranks: &Ranks<'_>,
    investigation: &mut Investigation,
    what_if: Option<&replay::WhatIf>,
) -> Option<Vec<WhatIfRun>> {
    let count = ranks.paths.len();
    if crate::replayed::replay_off() && what_if.is_none() {
        return None;
    }
    if count < 2 || ranks.reports.len() != count {
        return None;
    }
    if steady_windows(&ranks.reports[ranks.chosen]).is_empty() {
        return None;
    }
    let others = match reload(ranks) {
        Ok(others) => others,
        Err(why) => return Some(alone(ranks, investigation, what_if, &why)),
    };
    let captures: Vec<&trace_model::Capture> = others
        .iter()
        .map(|o| o.as_ref().map_or(&ranks.detail.capture, |l| &l.capture))
        .collect();
    let graphs = match build_graphs(ranks, &captures) {
        Ok(graphs) => graphs,
        Err(why) => return Some(alone(ranks, investigation, what_if, &why)),
    };
    let windows: Vec<Vec<replay::StepWindow>> = ranks
        .reports
        .iter()
        .zip(&captures)
        .map(|(r, c)| {
            let w = steady_windows(r);
            if w.is_empty() {
                replay::capture_windows(c)
            } else {
                w
            }
        })
        .collect();
    let labels: Vec<Labels> = captures.iter().map(|c| Labels::of(c)).collect();
    let inputs: Vec<replay::RankCapture<'_>> = (0..count)
        .map(|r| replay::RankCapture {
            capture: captures[r],
            graph: &graphs[r],
            windows: &windows[r],
        })
        .collect();
    let names = ranks
        .paths
        .iter()
        .map(|(path, rank)| rank.map_or_else(|| crate::file_name(path), |r| r.to_string()))
        .collect();
    let predictor = replay::RanksPredictor::new(&inputs)
        .with_labels(
            labels
                .iter()
                .map(|l| Some(l as &dyn replay::HostLabels))
                .collect(),
        )
        .with_names(names);
    if let Advice::Ranked(ranked) = &mut investigation.advice {
        for cause in &mut ranked.causes {
            if !matches!(cause.replay, CauseReplay::Replayed(_)) {
                continue;
            }
            let Some(scenario) = replay::cause_scenario(&cause.key) else {
                continue;
            };
            if let Some(p) = predictor.predict(&scenario, ranks.chosen) {
                cause.replay = CauseReplay::Replayed(Box::new(replayed(&p)));
            }
        }
    }
    let Some(what_if) = what_if else {
        return Some(Vec::new());
    };
    let run = predictor.predict(what_if, ranks.chosen).map(|p| WhatIfRun {
        path: ranks.detail.path.clone(),
        alone: None,
        prediction: Ok(p),
    });
    Some(run.into_iter().collect())
}

/// A rank's name in the notes: its number, else its file name.
fn rank_name(path: &std::path::Path, rank: Option<i64>) -> String {
    rank.map_or_else(|| crate::file_name(path), |r| r.to_string())
}

/// Every rank but the drawn one loaded again (`None` in the drawn one's place), or why
/// the drawn rank is replayed alone: too many ranks, or one that no longer loads.
fn reload(ranks: &Ranks<'_>) -> Result<Vec<Option<Loaded>>, ReplayedAlone> {
    let count = ranks.paths.len();
    if count > MAX_JOINT_RANKS {
        return Err(ReplayedAlone::TooManyRanks {
            ranks: count,
            most: MAX_JOINT_RANKS,
        });
    }
    let mut others: Vec<Option<Loaded>> = Vec::with_capacity(count);
    for (i, (path, rank)) in ranks.paths.iter().enumerate() {
        if i == ranks.chosen {
            others.push(None);
            continue;
        }
        match load::load_single(path) {
            Ok(l) => others.push(Some(l)),
            Err(e) => {
                return Err(ReplayedAlone::NotReloaded {
                    rank: rank_name(path, *rank),
                    error: e.to_string(),
                });
            }
        }
    }
    Ok(others)
}

/// Each rank's graph, or the first rank that cannot be replayed.
fn build_graphs(
    ranks: &Ranks<'_>,
    captures: &[&trace_model::Capture],
) -> Result<Vec<replay::Graph>, ReplayedAlone> {
    captures
        .iter()
        .zip(ranks.paths)
        .map(|(c, (path, rank))| {
            replay::Graph::build(c).map_err(|reason| ReplayedAlone::NotReplayable {
                rank: rank_name(path, *rank),
                reason,
            })
        })
        .collect()
}

/// The drawn rank replayed alone, because of `why`: every cause replayed on it alone says
/// so, and so does the `--what-if` prediction of the drawn rank alone.
fn alone(
    ranks: &Ranks<'_>,
    investigation: &mut Investigation,
    what_if: Option<&replay::WhatIf>,
    why: &ReplayedAlone,
) -> Vec<WhatIfRun> {
    if let Advice::Ranked(ranked) = &mut investigation.advice {
        for cause in &mut ranked.causes {
            if let CauseReplay::Replayed(r) = &mut cause.replay {
                r.alone = Some(Box::new(why.clone()));
            }
        }
    }
    let drawn = (&ranks.reports[ranks.chosen], ranks.detail);
    let mut runs = crate::what_if_runs(&[drawn], what_if);
    for run in &mut runs {
        run.alone = Some(why.clone());
    }
    runs
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A rank whose file is gone when the ranks are loaded again: the drawn rank is
    /// replayed alone, and the reason names that rank.
    #[test]
    fn a_rank_that_no_longer_loads_leaves_the_drawn_rank_alone() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let paths = vec![
            (dir.path().join("rank0.json"), Some(0)),
            (dir.path().join("gone.json"), None),
        ];
        let detail = Loaded {
            path: paths[0].0.clone(),
            rank: Some(0),
            capture: trace_model::CaptureBuilder::new(trace_model::Format::KinetoJson)
                .finish(&paths[0].0),
            programs: Vec::new(),
        };
        let ranks = Ranks {
            paths: &paths,
            reports: &[],
            chosen: 0,
            detail: &detail,
        };
        match reload(&ranks) {
            Err(ReplayedAlone::NotReloaded { rank, .. }) => assert_eq!(rank, "gone.json"),
            other => panic!("{:?}", other.map(|o| o.len())),
        }
        let many: Vec<_> = (0..=MAX_JOINT_RANKS as i64)
            .map(|r| (dir.path().join(format!("rank{r}.json")), Some(r)))
            .collect();
        let ranks = Ranks {
            paths: &many,
            ..ranks
        };
        assert_eq!(
            reload(&ranks).map(|o| o.len()),
            Err(ReplayedAlone::TooManyRanks {
                ranks: MAX_JOINT_RANKS + 1,
                most: MAX_JOINT_RANKS
            })
        );
    }
}
