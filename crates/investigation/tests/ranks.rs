//! The investigation of synthetic rank directories (`test_support::synth_ranks`): the
//! value holds what was planted (every clock offset, the straggler, its first step and its
//! delay), draws the straggler for steps 3 to 6 and says why, and its heat map is hottest
//! on the straggler's late steps. Asserted on the typed value.

use test_support::synth_ranks::{COMPUTE_JITTER_NS, END_JITTER_NS, Job};

#[test]
fn a_rank_directory_gives_the_planted_straggler_and_draws_it() {
    for (ranks, mb, seed) in [(16, 0.05, 2), (32, 0.02, 7)] {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let job = Job::plan(ranks, mb, seed);
        job.write_into(dir.path());
        let inv = investigation::investigate(dir.path(), &Default::default())
            .expect("investigates")
            .investigation;
        let what = format!("{ranks} ranks, seed {seed}");
        assert_eq!(inv.captures.len(), ranks, "{what}");
        let across = inv.across_ranks.as_ref().expect("across ranks");
        let x = &across.cross;
        assert_eq!(x.ranks.len(), ranks, "{what}");
        for (r, row) in x.ranks.iter().enumerate() {
            assert_eq!(row.rank, Some(r as i64), "{what}");
            let got = row.clock_offset.expect("an offset").0;
            assert!(
                (got - job.offsets_ns[r]).abs() <= 5_000,
                "{what}: rank {r}: offset {got} ns, planted {} ns",
                job.offsets_ns[r]
            );
        }
        let straggler = x.stragglers.first().expect("a straggler");
        assert_eq!(straggler.rank, Some(job.straggler_rank as i64), "{what}");
        assert_eq!(straggler.first_step, job.straggler_step as i64, "{what}");
        assert!(
            (straggler.late_by.0 - job.straggler_delay_ns).abs()
                <= COMPUTE_JITTER_NS + END_JITTER_NS,
            "{what}: late by {:?}, planted {} ns",
            straggler.late_by,
            job.straggler_delay_ns
        );
        let drawn = inv.drawn.as_ref().expect("a rank drawn");
        assert_eq!(
            drawn.who,
            investigation::Who::Rank(job.straggler_rank as i64),
            "{what}"
        );
        assert!(drawn.straggler, "{what}: drawn as the straggler");
        let map = across.heat_map.as_ref().expect("a heat map");
        let (row, step, ratio) = map.hottest().expect("a hottest cell");
        assert_eq!(
            map.rows[row].rank,
            Some(job.straggler_rank as i64),
            "{what}"
        );
        assert!(map.steps[step] >= job.straggler_step as i64, "{what}");
        assert!(ratio > 1.0, "{what}: {ratio}");
        // The rank steps 3 to 6 describe is the one drawn: its lanes are the straggler's.
        let investigation::Swimlanes::Drawn { chart, .. } = &inv.swimlanes else {
            panic!("{what}: no swimlanes");
        };
        assert!(
            chart
                .lanes
                .iter()
                .all(|l| l.rank == Some(investigation::Who::Rank(job.straggler_rank as i64))),
            "{what}"
        );
    }
}
