//! Our definitions beside HTA's (`docs/differences.md`): the skip-stats analysis of
//! `crates/analysis` over the same input (read a second time, by the model builder):
//! per rank the analysed window and device budget (in-flight work left out), the idle
//! causes of the critical stream (host / queued / unattributed, no 30 µs threshold), and
//! the rank whose GPU work of the last step ended last.

use std::path::Path;

use serde::Serialize;

use crate::Error;

/// One rank by our definitions.
#[derive(Debug, Clone, Serialize)]
pub struct SkipStatsRank {
    /// The rank of the trace, when known.
    pub rank: Option<i64>,
    /// The analysed window, first start to last end of the GPU activities in steps, in µs.
    pub window_us: f64,
    /// Time with nothing running, over the devices' summed windows, in %.
    pub idle_pct: f64,
    /// Time with a non-collective kernel running, in % of the same total.
    pub compute_pct: f64,
    /// Time with a collective running and no compute kernel, in %.
    pub collective_pct: f64,
    /// Time with a memcpy or memset and no kernel running, in %.
    pub memcpy_memset_pct: f64,
    /// The stream with the most compute time.
    pub critical_stream: Option<i64>,
    /// Idle time of the critical stream before activities whose launch call started after
    /// the gap began (the GPU waited for the host), in µs.
    pub host_wait_us: f64,
    /// Idle time before activities already launched when the gap began (a dependency
    /// wait), in µs.
    pub queued_wait_us: f64,
    /// Idle time with no launch to judge by (launchless activities, the window's tail), in
    /// µs.
    pub unattributed_us: f64,
    /// Activities already in flight when the capture began (left out above).
    pub in_flight: usize,
}

/// Our numbers for every rank.
#[derive(Debug, Clone, Serialize)]
pub struct SkipStatsSummary {
    /// One entry per rank the analysis found.
    pub ranks: Vec<SkipStatsRank>,
    /// The rank whose GPU work of a step ended last, and by how much (µs).
    pub last_finisher: Option<(Option<i64>, f64)>,
    /// Ranks that arrive late at the steps' last collectives once each rank's clock offset
    /// (from matched collective ends) is corrected (`analysis::cross_rank`), latest first;
    /// empty for one rank.
    pub stragglers: Vec<LateRank>,
}

/// A rank the other ranks wait for (`inferred`: arrival compared after clock correction).
#[derive(Debug, Clone, Serialize)]
pub struct LateRank {
    /// The rank.
    pub rank: Option<i64>,
    /// The first step at whose last collective it arrived late.
    pub first_step: i64,
    /// Median over its late steps of how much later than the median rank it arrived, µs.
    pub late_by_us: f64,
    /// Steps it was late at, from `first_step` on.
    pub late_steps: usize,
    /// Steps compared from `first_step` on.
    pub steps_from_first: usize,
}

/// Runs `crates/analysis`' skip-stats (its report, without `rows.csv`) on `input` (a trace
/// file or directory) with its default settings. The files of a directory that cannot be
/// read are left out (the frames' load names them: [`crate::LoadedRanks::unread`]).
pub fn skip_stats_summary(input: &Path) -> Result<SkipStatsSummary, Error> {
    let a = load::load_each(input)
        .map_err(analysis::Error::from)
        .and_then(|mut each| {
            if each.loaded.is_empty() && !each.failed.is_empty() {
                return Err(each.failed.remove(0).into());
            }
            Ok(each)
        });
    match a {
        Ok(each) => skip_stats_summary_of_loaded(input, &each.loaded, true),
        Err(e) => from_analysis(input, Err(e)),
    }
}

fn timelines(loaded: &[load::Loaded]) -> Vec<analysis::RankTimeline> {
    loaded
        .iter()
        .map(|l| analysis::rank_timeline(&l.capture, &l.path.to_string_lossy(), l.rank))
        .collect()
}

/// [`skip_stats_summary`] of the captures of `input` already loaded (those that could be
/// read); `across_ranks`: with the stragglers across them (a single file's summary has
/// none).
pub(crate) fn skip_stats_summary_of_loaded(
    input: &Path,
    loaded: &[load::Loaded],
    across_ranks: bool,
) -> Result<SkipStatsSummary, Error> {
    let timelines = if across_ranks {
        timelines(loaded)
    } else {
        Vec::new()
    };
    let a =
        analysis::skip_stats_loaded_without_rows(input, loaded, &analysis::SkipConfig::default())
            .map(|a| (a, timelines));
    from_analysis(input, a)
}

/// The summary of an analysis and its ranks' timelines (for the late ranks).
pub(crate) fn from_analysis(
    input: &Path,
    a: Result<(analysis::InputAnalysis, Vec<analysis::RankTimeline>), analysis::Error>,
) -> Result<SkipStatsSummary, Error> {
    let (a, timelines) = a.map_err(|e| Error::Missing {
        path: input.to_path_buf(),
        what: format!("our analysis failed: {}", analysis::error_chain(&e)),
    })?;
    let ranks = a
        .reports
        .iter()
        .map(|r| {
            let (mut span, mut idle, mut comp, mut coll, mut mem) = (0i64, 0i64, 0i64, 0i64, 0i64);
            for d in &r.devices {
                span += d.budget.window.span().0;
                idle += d.budget.idle.0;
                comp += d.budget.compute.0;
                coll += d.budget.collective.0;
                mem += d.budget.memcpy.0 + d.budget.memset.0;
            }
            let pct = |v: i64| {
                if span > 0 {
                    100.0 * v as f64 / span as f64
                } else {
                    0.0
                }
            };
            let causes = r.idle_causes.unwrap_or_default();
            SkipStatsRank {
                rank: r.rank,
                window_us: r.window.map_or(0.0, |w| w.span().as_micros_f64()),
                idle_pct: pct(idle),
                compute_pct: pct(comp),
                collective_pct: pct(coll),
                memcpy_memset_pct: pct(mem),
                critical_stream: r.critical_stream().map(|s| s.stream),
                host_wait_us: causes.host_wait.as_micros_f64(),
                queued_wait_us: causes.queued_wait.as_micros_f64(),
                unattributed_us: causes.unattributed.as_micros_f64(),
                in_flight: r.in_flight.activities,
            }
        })
        .collect();
    Ok(SkipStatsSummary {
        ranks,
        last_finisher: a
            .last_finisher
            .map(|l| (l.rank, l.behind_earliest.as_micros_f64())),
        stragglers: analysis::cross_rank(
            &timelines,
            &analysis::CrossRankConfig {
                late_threshold: None,
            },
        )
        .map(|x| {
            x.stragglers
                .into_iter()
                .map(|s| LateRank {
                    rank: s.rank,
                    first_step: s.first_step,
                    late_by_us: s.late_by.as_micros_f64(),
                    late_steps: s.late_steps,
                    steps_from_first: s.steps_from_first,
                })
                .collect()
        })
        .unwrap_or_default(),
    })
}
