//! A rank directory's ranks replayed together (`replay::RanksPredictor`): the drawn
//! rank's replayed estimates and `--what-if` prediction come from one joint replay of
//! every rank, its collectives matched with its peers', so that a rank made faster waits
//! for the slower ones, as it did when measured. Each scenario changes every rank (a
//! change of the program runs on all of them); the drawn rank's steps are measured.
//!
//! Every rank is loaded again for this (the investigation reads a directory one rank at a
//! time and keeps only the drawn one): memory grows with the ranks' total size, so a
//! directory of more than [`MAX_JOINT_RANKS`] ranks keeps the drawn rank's replay alone,
//! as do directories where a rank cannot be reloaded or replayed (the estimates then
//! come from the single-rank replay, which the report shows without a ranks note).

use std::path::PathBuf;

use analysis::CaptureAnalysis;
use load::Loaded;

use crate::model::{Advice, CauseReplay, Investigation};
use crate::replayed::{Labels, replayed, steady_windows};

/// The ranks of a directory replayed together (`replay::RanksPredictor`): the drawn
/// rank's steps measured, the scenario on every rank.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct RanksReplayed {
    /// The ranks replayed together, by name (`0`, `1`, … or their file names).
    pub ranks: Vec<String>,
    /// Collectives matched across the ranks: `(kind, collectives per rank)`.
    pub matched: Vec<(String, usize)>,
    /// Why collectives were not matched (each replayed on its own rank).
    pub not_matched: Vec<String>,
}

/// The most ranks replayed together (each held in memory at once).
pub(crate) const MAX_JOINT_RANKS: usize = 64;

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
/// prediction as text (empty without one). `None` where the ranks are not replayed
/// together (a single rank, more than [`MAX_JOINT_RANKS`], a rank that no longer loads
/// or cannot be replayed, no steady-state steps on the drawn rank): nothing is changed
/// then.
pub(crate) fn replay_ranks(
    ranks: &Ranks<'_>,
    investigation: &mut Investigation,
    what_if: Option<&replay::WhatIf>,
) -> Option<String> {
    let count = ranks.paths.len();
    if crate::replayed::replay_off() && what_if.is_none() {
        return None;
    }
    if !(2..=MAX_JOINT_RANKS).contains(&count) || ranks.reports.len() != count {
        return None;
    }
    if steady_windows(&ranks.reports[ranks.chosen]).is_empty() {
        return None;
    }
    let mut others: Vec<Option<Loaded>> = Vec::with_capacity(count);
    for (i, (path, _)) in ranks.paths.iter().enumerate() {
        others.push(if i == ranks.chosen {
            None
        } else {
            Some(load::load_single(path).ok()?)
        });
    }
    let captures: Vec<&trace_model::Capture> = others
        .iter()
        .map(|o| o.as_ref().map_or(&ranks.detail.capture, |l| &l.capture))
        .collect();
    let graphs: Vec<replay::Graph> = captures
        .iter()
        .map(|c| replay::Graph::build(c).ok())
        .collect::<Option<_>>()?;
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
                cause.replay = CauseReplay::Replayed(replayed(&p));
            }
        }
    }
    let Some(what_if) = what_if else {
        return Some(String::new());
    };
    let mut text = format!("{}:\n", ranks.detail.path.display());
    if let Some(p) = predictor.predict(what_if, ranks.chosen) {
        text += &p.text();
    }
    Some(text)
}
