//! The `--what-if` replay of investigate, in words for the terminal: per capture, its
//! file, why a rank directory's drawn rank was replayed alone (if it was), then the
//! prediction (`replay::Prediction::text`) or why the capture cannot be replayed.

use investigation::{ReplayedAlone, WhatIfRun};

/// `runs` as investigate prints them after the report's paths (empty without a
/// scenario).
pub fn what_if_text(runs: &[WhatIfRun]) -> String {
    let mut text = String::new();
    for run in runs {
        text += &format!("{}:\n", run.path.display());
        if let Some(why) = &run.alone {
            text += &format!("  {}\n", alone_text(why));
        }
        match &run.prediction {
            Ok(p) => text += &p.text(),
            Err(reason) => text += &format!("  cannot replay: {reason}\n"),
        }
    }
    text
}

/// Why the drawn rank was replayed alone, in a line of the `--what-if` text.
fn alone_text(why: &ReplayedAlone) -> String {
    let reason = match why {
        ReplayedAlone::TooManyRanks { ranks, most } => {
            format!("{ranks} ranks, more than the {most} replayed together")
        }
        ReplayedAlone::NotReloaded { rank, error } => {
            format!("rank {rank} could not be loaded again ({error})")
        }
        ReplayedAlone::NotReplayable { rank, reason } => {
            format!("rank {rank} cannot be replayed ({reason})")
        }
    };
    format!(
        "replayed alone, not with the other ranks: {reason}; its collectives keep their \
         measured waits for their peers"
    )
}
