//! A rank directory's `rows.csv` written once as the ranks come (`SkipRowsInRankOrder`):
//! whatever order the ranks are written in (straight from their report or appended later,
//! an append repeated), the file is the header and each rank's rows once, in the order
//! `finish` is given, byte for byte what the whole load writes.

use std::io::{Read, Seek, SeekFrom};

use analysis::{SkipConfig, SkipRankRows, SkipRowsInRankOrder};

/// Writes the ranks of the `tiny-train` fixture (rank 0, rank 1): first each rank of
/// `now` as its report is made (its turn come), then those of `appended` in that order (a
/// rank in neither is never written before `finish`), finishes in rank order, and returns
/// the file.
fn written(now: &[usize], appended: &[usize]) -> Vec<u8> {
    let dir = test_support::workspace_root().join("testdata/chrome/ok/tiny-train");
    let loaded = load::load(&dir).expect("the fixture loads");
    assert_eq!(
        loaded.iter().map(|l| l.rank).collect::<Vec<_>>(),
        [Some(0), Some(1)]
    );
    let config = SkipConfig::default();
    let scratch = output_file::ScratchDir::create("test-rows-in-rank-order").expect("a dir");
    let mut file = scratch.create_file("rows.csv").expect("a file");
    let rows = SkipRowsInRankOrder::new(&file).expect("the header");
    let mut ranks: Vec<Option<SkipRankRows>> = vec![None, None];
    for &i in now {
        ranks[i] = Some(rows.report(&loaded[i], &config, true).expect("a report").1);
    }
    for (i, l) in loaded.iter().enumerate() {
        if ranks[i].is_none() {
            ranks[i] = Some(rows.report(l, &config, false).expect("a report").1);
        }
    }
    let mut ranks: Vec<SkipRankRows> = ranks.into_iter().flatten().collect();
    for &i in appended {
        rows.append(&mut ranks[i]).expect("appended");
    }
    rows.finish(&ranks.iter().collect::<Vec<_>>())
        .expect("finished");
    let mut text = Vec::new();
    file.seek(SeekFrom::Start(0)).expect("seek");
    file.read_to_end(&mut text).expect("read back");
    text
}

#[test]
fn rows_are_in_rank_order_and_once_whatever_the_order_appended() {
    let dir = test_support::workspace_root().join("testdata/chrome/ok/tiny-train");
    let mut whole = Vec::new();
    analysis::skip_stats(&dir, &SkipConfig::default(), &mut whole).expect("the whole load");
    let lines = String::from_utf8(whole.clone()).expect("UTF-8");
    let ranks: Vec<&str> = lines
        .lines()
        .skip(1)
        .map(|l| l.split(',').next().expect("a rank column"))
        .collect();
    assert!(ranks.contains(&"0") && ranks.contains(&"1"), "{ranks:?}");
    let cases: [(&[usize], &[usize]); 9] = [
        (&[], &[0, 1]),
        (&[], &[1, 0]),
        (&[], &[1]),
        (&[], &[0]),
        (&[], &[]),
        (&[0], &[1]),
        (&[0], &[1, 1, 0]),
        (&[1], &[0]),
        (&[0, 1], &[]),
    ];
    for (now, appended) in cases {
        let got = written(now, appended);
        assert!(
            got == whole,
            "written {now:?} then appended {appended:?}:\n{}\nwanted:\n{lines}",
            String::from_utf8_lossy(&got)
        );
    }
}
