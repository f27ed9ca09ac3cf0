//! trace-frame's integration tests: the frame, SQL counts against MANIFEST.md, the
//! Parquet cache and export, HTA parity on param-dlrm-8rank against HTA 0.5.0's CSVs,
//! and the rule that no other crate depends on polars.

mod args;
mod captures;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use polars::prelude::*;
use trace_frame::{AnalysisName, hta};

fn fixture(rel: &str) -> PathBuf {
    test_support::workspace_root().join("testdata").join(rel)
}

fn count(df: &DataFrame, sql: &str) -> i64 {
    let out = trace_frame::run_sql(df, sql).unwrap();
    out.column(out.get_column_names()[0].as_str())
        .unwrap()
        .cast(&DataType::Int64)
        .unwrap()
        .i64()
        .unwrap()
        .get(0)
        .unwrap_or(0)
}

#[test]
fn frame_has_the_spec_columns_and_args_types() {
    let f = trace_frame::read_frame(&fixture("chrome/ok/tiny-train/rank0.pt.trace.json")).unwrap();
    let names: Vec<String> =
        f.df.get_column_names()
            .iter()
            .map(|c| c.to_string())
            .collect();
    for c in [
        "name", "cat", "ph", "ts", "dur", "pid", "tid", "id", "ts_ns", "dur_ns", "rank",
    ] {
        assert!(names.contains(&c.to_string()), "{c} missing from {names:?}");
    }
    assert_eq!(f.df.column("ts").unwrap().dtype(), &DataType::Float64);
    assert_eq!(
        f.df.column("args_correlation").unwrap().dtype(),
        &DataType::Int64
    );
    assert!(names.iter().any(|c| c == "args_stream"));
    assert_eq!(f.rank, Some(0));
    // Every event is a row, metadata included.
    let all = count(&f.df, "SELECT COUNT(*) FROM events");
    assert_eq!(all as usize, f.df.height());
    assert!(count(&f.df, "SELECT COUNT(*) FROM kernels") > 0);
}

#[test]
fn large_integers_keep_their_text() {
    let f = trace_frame::read_frame(&fixture("chrome/ok/large_integers.json")).unwrap();
    let strings =
        f.df.columns()
            .iter()
            .filter(|c| c.name().starts_with("args_") && c.dtype() == &DataType::String)
            .count();
    assert!(strings > 0, "{:?}", f.df.schema());
}

#[test]
fn malformed_input_names_the_file_and_place() {
    let bad = fixture("chrome/err/truncated_json.json");
    let e = trace_frame::read_frame(&bad).unwrap_err().to_string();
    assert!(e.contains("truncated_json.json"), "{e}");
    assert!(e.contains("byte"), "{e}");
    // A `ts` or `dur` that is text but no number fails the file, as in the model's reader
    // (before, the frame kept the event with a null there).
    for (name, field) in [
        ("bad_ts.json", "\"ts\": \"soon\""),
        ("dur_text.json", "\"dur\": \"long\""),
        ("ts_infinity_string.json", "\"ts\": \"inf\""),
    ] {
        let e = trace_frame::read_frame(&fixture(&format!("chrome/err/{name}")))
            .unwrap_err()
            .to_string();
        assert!(e.contains(name) && e.contains("event 0 (byte 20)"), "{e}");
        assert!(e.contains(field), "{e}");
    }
}

#[test]
fn cache_is_used_only_when_fresh_and_a_failed_write_carries_on() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("rank0.pt.trace.json");
    std::fs::copy(fixture("chrome/ok/tiny-train/rank0.pt.trace.json"), &trace).unwrap();
    let cache = dir.path().join("cache");
    let (f1, u1) = trace_frame::read_frame_cached(&trace, &cache).unwrap();
    assert!(matches!(u1, trace_frame::CacheUse::Written(_)), "{u1:?}");
    let (f2, u2) = trace_frame::read_frame_cached(&trace, &cache).unwrap();
    assert!(matches!(u2, trace_frame::CacheUse::Hit(_)), "{u2:?}");
    assert!(f1.df.equals_missing(&f2.df));
    assert_eq!(f2.rank, Some(0));
    // The trace changes after the cache was written: the cache is stale.
    let later = std::time::SystemTime::now() + std::time::Duration::from_secs(5);
    std::fs::File::options()
        .write(true)
        .open(&trace)
        .unwrap()
        .set_modified(later)
        .unwrap();
    assert!(!trace_frame::is_fresh(
        &trace_frame::cache_path(&trace, &cache),
        &trace
    ));
    let (_, u3) = trace_frame::read_frame_cached(&trace, &cache).unwrap();
    assert!(matches!(u3, trace_frame::CacheUse::Written(_)), "{u3:?}");
    // A cache "directory" that is a file: the write fails, the frame is still there.
    let blocked = dir.path().join("blocked");
    std::fs::write(&blocked, b"x").unwrap();
    let (f4, u4) = trace_frame::read_frame_cached(&trace, &blocked).unwrap();
    assert!(
        matches!(u4, trace_frame::CacheUse::WriteFailed(..)),
        "{u4:?}"
    );
    assert_eq!(f4.df.height(), f1.df.height());
}

#[test]
fn export_reads_back_with_ranks_and_row_counts() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("export");
    let paths = trace_frame::trace_paths(&fixture("chrome/ok/tiny-train")).unwrap();
    let ex = trace_frame::export_hive(&paths, &out, 2).unwrap();
    assert_eq!(ex.files.len(), 2);
    assert!(out.join("rank=0/events.parquet").is_file());
    assert!(out.join("rank=1/events.parquet").is_file());
    // `_summary` is not a rank: reading the export back leaves it out (the total below).
    let back = trace_frame::read_export(&out).unwrap();
    let frames: Vec<_> = paths
        .iter()
        .map(|p| trace_frame::read_frame(p).unwrap())
        .collect();
    let total: usize = frames.iter().map(|f| f.event_count()).sum();
    assert_eq!(back.height(), total);
    for f in &frames {
        let rank = f.rank.unwrap();
        let n = count(
            &back,
            &format!("SELECT COUNT(*) FROM events WHERE rank = {rank}"),
        );
        assert_eq!(n as usize, f.event_count(), "rank {rank}");
        // The rank's `_summary` row: its events, and the busy time of HTA's temporal
        // breakdown as profile-model computes it.
        let file =
            std::fs::File::open(out.join(format!("_summary/rank={rank}/summary.parquet"))).unwrap();
        let summary = ParquetReader::new(file).finish().unwrap();
        let names: Vec<&str> = summary
            .get_column_names()
            .into_iter()
            .map(|n| n.as_str())
            .collect();
        let want: Vec<&str> = trace_frame::SUMMARY_COLUMNS.iter().map(|c| c.0).collect();
        assert_eq!(names, want);
        assert_eq!(summary.height(), 1);
        let events = summary.column("events").unwrap().i64().unwrap().get(0);
        assert_eq!(events, Some(f.event_count() as i64));
        let loaded = load::load(&f.path).unwrap();
        let timeline =
            trace_frame::Timeline::from_capture(&loaded[0].capture, &f.path).into_hta_view();
        let t = trace_frame::hta::temporal(&timeline).unwrap();
        let busy = summary
            .column("busy_time_us")
            .unwrap()
            .f64()
            .unwrap()
            .get(0);
        assert_eq!(busy, Some(t.kernel_time_us - t.idle_us), "rank {rank}");
        assert!(
            t.kernel_time_us - t.idle_us > 0.0,
            "rank {rank} has GPU work"
        );
    }
    // A second export into the same, now non-empty, directory is refused and changes nothing.
    assert!(trace_frame::export_hive(&paths, &out, 2).is_err());
    assert!(out.join("rank=0/events.parquet").is_file());
}

/// A column that one rank types as numbers and another as strings has one type in every
/// exported file (String), and a column of numbers in both stays numeric.
#[test]
fn export_gives_every_rank_one_type_per_column() {
    let dir = tempfile::tempdir().unwrap();
    let rank = |r: i64, x: &str| {
        let path = dir.path().join(format!("rank{r}.json"));
        let trace = format!(
            r#"{{"distributedInfo": {{"rank": {r}}}, "traceEvents": [
              {{"ph": "X", "cat": "cpu_op", "name": "a", "pid": 1, "tid": 1, "ts": 1, "dur": 2,
                "args": {{"x": {x}, "n": {r}}}}},
              {{"ph": "X", "cat": "cpu_op", "name": "b", "pid": 1, "tid": 1, "ts": 4, "dur": 2,
                "args": {{"x": {x}, "n": 7}}}}]}}"#
        );
        std::fs::write(&path, trace).unwrap();
        path
    };
    let paths = vec![rank(0, "5"), rank(1, r#""five""#)];
    let out = dir.path().join("export");
    trace_frame::export_hive(&paths, &out, 2).unwrap();
    for r in 0..2 {
        let file = std::fs::File::open(out.join(format!("rank={r}/events.parquet"))).unwrap();
        let df = ParquetReader::new(file).finish().unwrap();
        assert_eq!(
            df.column("args_x").unwrap().dtype(),
            &DataType::String,
            "rank {r}"
        );
        assert!(
            df.column("args_n").unwrap().dtype().is_integer(),
            "rank {r}"
        );
    }
    let back = trace_frame::read_export(&out).unwrap();
    assert_eq!(back.height(), 4);
}

#[test]
fn no_other_crate_depends_on_polars() {
    let meta: serde_json::Value =
        serde_json::from_slice(&test_support::cargo_metadata(&[])).unwrap();
    let name_of = |id: &str| -> String {
        meta["packages"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["id"] == id)
            .map(|p| p["name"].as_str().unwrap().to_owned())
            .unwrap_or_default()
    };
    let mut deps: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for n in meta["resolve"]["nodes"].as_array().unwrap() {
        let ds = n["deps"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d["pkg"].as_str().unwrap().to_owned())
            .collect();
        deps.insert(n["id"].as_str().unwrap().to_owned(), ds);
    }
    let members: Vec<String> = meta["workspace_members"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m.as_str().unwrap().to_owned())
        .collect();
    let frame_id = members
        .iter()
        .find(|m| name_of(m) == "trace-frame")
        .unwrap()
        .clone();
    let mut checked = 0;
    let mut offenders = Vec::new();
    let mut frame_reaches_polars = false;
    for m in &members {
        // Walk the graph without passing through trace-frame (its users reach polars only
        // through it, which is the point).
        let mut seen = std::collections::BTreeSet::new();
        let mut todo = vec![m.clone()];
        while let Some(id) = todo.pop() {
            if !seen.insert(id.clone()) {
                continue;
            }
            if name_of(&id) == "polars" {
                if *m == frame_id {
                    frame_reaches_polars = true;
                } else {
                    offenders.push(name_of(m));
                }
                break;
            }
            for d in deps.get(&id).into_iter().flatten() {
                if *d != frame_id {
                    todo.push(d.clone());
                }
            }
        }
        checked += 1;
    }
    assert!(checked >= 10, "{checked} workspace members");
    assert!(frame_reaches_polars, "the walk must be able to find polars");
    assert!(
        offenders.is_empty(),
        "crates depending on polars besides trace-frame: {offenders:?}"
    );
}

#[test]
fn sql_counts_equal_the_manifest_on_every_pytorch_trace() {
    let Some(set) = test_support::real_traces("sql_counts_equal_the_manifest") else {
        return;
    };
    assert!(
        !set.kineto.is_empty(),
        "pytorch/MANIFEST.md lists no traces"
    );
    // Events by `cat` and by `ph` per trace, from MANIFEST.md's "Event counts by `cat`".
    for trace in &set.kineto {
        let path = &trace.path;
        let cats: BTreeMap<String, i64> = trace
            .by_cat
            .iter()
            .map(|(k, n)| (k.clone(), *n as i64))
            .collect();
        let (cats, phs) = (&cats, &trace.by_ph);
        let f = trace_frame::read_frame(path).unwrap();
        let by_cat = trace_frame::run_sql(
            &f.df,
            "SELECT COALESCE(cat, 'null') AS cat, COUNT(*) AS n FROM events GROUP BY 1",
        )
        .unwrap();
        let got: BTreeMap<String, i64> = trace_frame::frame_to_json(&by_cat)
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                (
                    r["cat"].as_str().unwrap().to_owned(),
                    r["n"].as_i64().unwrap(),
                )
            })
            .collect();
        assert_eq!(&got, cats, "{}", path.display());
        for (ph, n) in phs {
            let q = format!("SELECT COUNT(*) FROM events WHERE ph = '{ph}'");
            assert_eq!(count(&f.df, &q), *n as i64, "{} ph {ph}", path.display());
        }
        // The kernels view: `kernel`, and 2021's `Kernel` spelling.
        let kernels = count(
            &f.df,
            "SELECT COUNT(*) FROM events WHERE cat = 'kernel' OR cat = 'Kernel'",
        );
        assert_eq!(
            kernels,
            cats.get("kernel").copied().unwrap_or(0) + cats.get("Kernel").copied().unwrap_or(0),
            "{}",
            path.display()
        );
        assert_eq!(kernels, trace.kernels as i64, "{}", path.display());
        assert_eq!(count(&f.df, "SELECT COUNT(*) FROM kernels"), kernels);
    }
}

fn csv_rows(path: &Path) -> Vec<BTreeMap<String, String>> {
    let mut r = csv::Reader::from_path(path).unwrap();
    let headers: Vec<String> = r.headers().unwrap().iter().map(str::to_owned).collect();
    r.records()
        .map(|rec| {
            headers
                .iter()
                .cloned()
                .zip(rec.unwrap().iter().map(str::to_owned))
                .collect()
        })
        .collect()
}

fn f(row: &BTreeMap<String, String>, k: &str) -> f64 {
    row[k]
        .parse()
        .unwrap_or_else(|_| panic!("{k} = {:?}", row[k]))
}

fn dlrm(
    root: &Path,
) -> (
    trace_frame::LoadedRanks,
    Vec<trace_frame::Timeline>,
    PathBuf,
) {
    let loaded = trace_frame::load(&root.join("pytorch/param-dlrm-8rank"), None).unwrap();
    // The HTA drop-in's read (the Python package's `HtaTrace`).
    let ts = trace_frame::load_hta_timelines(&root.join("pytorch/param-dlrm-8rank")).unwrap();
    let refs = root.join("pytorch/reference-outputs/hta-0.5.0/param-dlrm-8rank");
    (loaded, ts, refs)
}

#[test]
fn param_dlrm_equals_hta_per_rank() {
    let Some(root) = test_support::traces_dir("param_dlrm_equals_hta_per_rank") else {
        return;
    };
    let (loaded, ts, refs) = dlrm(&root);
    assert_eq!(ts.len(), 8);
    let by_rank: BTreeMap<i64, &trace_frame::Timeline> =
        ts.iter().map(|t| (t.rank.unwrap(), t)).collect();

    // Temporal breakdown: spans to the µs, shares to 0.5 pp.
    let mut max_temporal: f64 = 0.0;
    for row in csv_rows(&refs.join("temporal_breakdown.csv")) {
        let t = hta::temporal(by_rank[&(f(&row, "rank") as i64)]).unwrap();
        assert!(
            (t.kernel_time_us - f(&row, "kernel_time(us)")).abs() < 1.0,
            "{row:?} {t:?}"
        );
        for (ours, theirs) in [
            (t.idle_pct, "idle_time_pctg"),
            (t.compute_pct, "compute_time_pctg"),
            (t.non_compute_pct, "non_compute_time_pctg"),
        ] {
            let d = (ours - f(&row, theirs)).abs();
            max_temporal = max_temporal.max(d);
            assert!(
                d <= 0.5,
                "rank {} {theirs}: ours {ours}, HTA {}",
                row["rank"],
                row[theirs]
            );
        }
    }

    // Kernel-type breakdown over all ranks.
    let ours = hta::kernel_type_breakdown(&ts);
    let theirs = csv_rows(&refs.join("kernel_type_breakdown.csv"));
    assert_eq!(ours.len(), theirs.len(), "{ours:?}");
    for row in &theirs {
        let o = ours
            .iter()
            .find(|k| k.kernel_type == row["kernel_type"])
            .unwrap_or_else(|| panic!("{row:?} not in {ours:?}"));
        assert!((o.sum_us - f(row, "sum")).abs() < 1.0, "{row:?} {o:?}");
        assert!(
            (o.percentage - f(row, "percentage")).abs() <= 0.5,
            "{row:?} {o:?}"
        );
    }

    // Idle-time breakdown: per rank and stream, each category to the µs and 0.5 pp.
    let rows = csv_rows(&refs.join("idle_time_breakdown.csv"));
    assert!(rows.len() >= 60, "{} rows", rows.len());
    let mut max_idle_pp: f64 = 0.0;
    for row in &rows {
        let rank = f(row, "rank") as i64;
        let stream = f(row, "stream") as i64;
        let ib = hta::idle_breakdown(by_rank[&rank], 30);
        let s = ib.iter().find(|r| r.stream == stream).unwrap();
        let (us, ratio) = match row["idle_category"].as_str() {
            "host_wait" => (s.host_wait_us, s.host_wait_ratio),
            "kernel_wait" => (s.kernel_wait_us, s.kernel_wait_ratio),
            "other" => (s.other_us, s.other_ratio),
            c => panic!("category {c}"),
        };
        assert!((us - f(row, "idle_time")).abs() < 1.0, "{row:?} ours {us}");
        let d = 100.0 * (ratio - f(row, "idle_time_ratio")).abs();
        max_idle_pp = max_idle_pp.max(d);
        assert!(d <= 0.5 + 1e-9, "{row:?} ours {ratio}");
    }

    // Communication/computation overlap.
    let mut max_overlap: f64 = 0.0;
    for row in csv_rows(&refs.join("comm_comp_overlap.csv")) {
        let o = hta::overlap(by_rank[&(f(&row, "rank") as i64)]);
        let d = (o.overlap_pct - f(&row, "comp_comm_overlap_pctg")).abs();
        max_overlap = max_overlap.max(d);
        assert!(d <= 0.5, "{row:?} ours {o:?}");
    }
    eprintln!(
        "param-dlrm vs HTA 0.5.0 (measured): max |Δ| temporal {max_temporal:.3} pp, idle ratio {max_idle_pp:.3} pp, overlap {max_overlap:.3} pp"
    );

    // Launch statistics of rank 0, row by row.
    let rows = csv_rows(&refs.join("cuda_kernel_launch_stats_rank0.csv"));
    let ls = hta::launch_stats(by_rank[&0]);
    assert_eq!(ls.rows.len(), rows.len());
    for (o, row) in ls.rows.iter().zip(&rows) {
        assert_eq!(o.correlation, f(row, "correlation") as i64);
        assert!(
            (o.cpu_duration_us - f(row, "cpu_duration")).abs() < 1e-6,
            "{row:?} {o:?}"
        );
        assert!(
            (o.gpu_duration_us - f(row, "gpu_duration")).abs() < 1e-6,
            "{row:?} {o:?}"
        );
        assert!(
            (o.launch_delay_us - f(row, "launch_delay")).abs() < 1e-6,
            "{row:?} {o:?}"
        );
    }
    drop(loaded);
}

#[test]
fn param_dlrm_stragglers_and_critical_path_equal_hta() {
    let Some(root) = test_support::traces_dir("param_dlrm_stragglers_and_critical_path") else {
        return;
    };
    let (_, ts, refs) = dlrm(&root);
    let s = hta::stragglers(&ts, 2).unwrap();
    let mut ranks = s.ranks.clone();
    ranks.sort();
    let theirs: Vec<i64> = csv_rows(&refs.join("potential_stragglers.csv"))
        .iter()
        .map(|r| f(r, "straggler_rank") as i64)
        .collect();
    assert_eq!(ranks, vec![2, 7]);
    assert_eq!(ranks, theirs);

    let rank0 = ts.iter().find(|t| t.rank == Some(0)).unwrap();
    let cp = trace_frame::critical_path(rank0, "ProfilerStep", 0).unwrap();
    let split: BTreeMap<&str, f64> = cp.split.iter().map(|(b, p)| (b.label(), *p)).collect();
    eprintln!(
        "rank 0 critical path (measured): {split:?}, {} µs",
        cp.length_us
    );
    for row in csv_rows(&refs.join("critical_path_summary.csv")) {
        if row["bound_by"].is_empty() {
            continue;
        }
        let ours = split.get(row["bound_by"].as_str()).copied().unwrap_or(0.0);
        let d = (ours - f(&row, "duration")).abs();
        assert!(
            d <= 1.0,
            "{}: ours {ours:.2}, HTA {}",
            row["bound_by"],
            row["duration"]
        );
    }
    assert!((split["cpu_bound"] - 75.7).abs() <= 1.0);
    assert!((split["gpu_kernel_kernel_overhead"] - 22.0).abs() <= 1.0);
    assert!((split["gpu_compute_bound"] - 2.2).abs() <= 1.0);
}

/// The critical path with synchronisation edges, against HTA 0.5.0 on the traces with
/// `cuda_sync` events (testdata/hta-critical-path/expected.tsv, written by the script beside
/// it): the graph's size, its synchronisation edges, and the split to 1 point.
#[test]
fn critical_path_with_sync_events_equals_hta() {
    let Some(root) = test_support::traces_dir("critical_path_with_sync_events_equals_hta") else {
        return;
    };
    let expected = fixture("hta-critical-path/expected.tsv");
    let mut r = csv::ReaderBuilder::new()
        .delimiter(b'\t')
        .from_path(&expected)
        .unwrap();
    let headers: Vec<String> = r.headers().unwrap().iter().map(str::to_owned).collect();
    let mut cases = 0;
    for rec in r.records() {
        let row: BTreeMap<String, String> = headers
            .iter()
            .cloned()
            .zip(rec.unwrap().iter().map(str::to_owned))
            .collect();
        let loaded = trace_frame::load(&root.join(&row["trace"]), None).unwrap();
        let ts = trace_frame::hta_timelines(&loaded).unwrap();
        let instance = f(&row, "instance") as usize;
        let cp = trace_frame::critical_path(&ts[0], &row["annotation"], instance)
            .unwrap_or_else(|| panic!("{}: no critical path", row["trace"]));
        let case = format!("{} [{}] #{instance}", row["trace"], row["annotation"]);
        eprintln!(
            "{case}: {} nodes, {} edges, {} sync ({} on the path), {:?}",
            cp.nodes, cp.edges, cp.sync_edges, cp.sync_edges_on_path, cp.split
        );
        assert_eq!(cp.nodes, f(&row, "nodes") as usize, "{case}: nodes");
        assert_eq!(cp.edges, f(&row, "edges") as usize, "{case}: edges");
        assert_eq!(
            cp.sync_edges,
            f(&row, "sync_edges") as usize,
            "{case}: sync edges"
        );
        // Which zero-weight edges the path takes where paths tie in length is each
        // implementation's own choice (networkx's `dag_longest_path` for HTA), so the count
        // on the path is not compared; the split below is.
        assert!(cp.sync_edges_on_path <= cp.sync_edges, "{case}");
        let ours: BTreeMap<&str, f64> = cp.split.iter().map(|(b, p)| (b.label(), *p)).collect();
        for bound in &headers[7..] {
            let (pct, theirs) = (
                ours.get(bound.as_str()).copied().unwrap_or(0.0),
                f(&row, bound),
            );
            assert!(
                (pct - theirs).abs() <= 1.0,
                "{case}: {bound}: ours {pct:.3} %, HTA {theirs:.3} %"
            );
        }
        cases += 1;
    }
    assert_eq!(cases, 5, "{}: the cases", expected.display());
}

#[test]
fn param_dlrm_export_reads_back_with_the_event_counts() {
    let Some(set) = test_support::real_traces("param_dlrm_export_reads_back") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("dlrm");
    let ranks = set.root.join("pytorch/param-dlrm-8rank");
    let paths = trace_frame::trace_paths(&ranks).unwrap();
    let ex = trace_frame::export_hive(&paths, &out, 4).unwrap();
    // MANIFEST's events column, per rank.
    let expect: BTreeMap<u32, u64> = set
        .kineto
        .iter()
        .filter(|t| t.path.parent() == Some(ranks.as_path()))
        .map(|t| (t.rank.expect("the DLRM traces have ranks"), t.events))
        .collect();
    assert_eq!(expect.len(), 8, "MANIFEST.md's eight DLRM ranks");
    assert_eq!(ex.files.len(), expect.len());
    let back = trace_frame::read_export(&out).unwrap();
    for (rank, n) in &expect {
        let got = count(
            &back,
            &format!("SELECT COUNT(*) FROM events WHERE rank = {rank}"),
        );
        assert_eq!(got, *n as i64, "rank {rank}");
    }
    assert_eq!(back.height() as u64, expect.values().sum::<u64>());
}

#[test]
fn analyze_runs_every_analysis_on_the_fixture() {
    let loaded = trace_frame::load(&fixture("chrome/ok/tiny-train"), None).unwrap();
    let r = trace_frame::analyze(&loaded, &AnalysisName::ALL, &Default::default()).unwrap();
    assert_eq!(r.summary.ranks, 2);
    assert!(r.summary.kernels.value > 0);
    assert!(!r.temporal.is_empty());
    assert!(!r.idle.is_empty());
    let json: serde_json::Value = serde_json::from_str(&trace_frame::render_json(&r)).unwrap();
    assert!(json["summary"]["bottleneck"]["label"] == "inferred");
    assert!(json["summary"]["bottleneck"]["assumptions"].is_string());
    assert!(json["summary"]["kernels"]["label"] == "measured");
}

/// A trace with no events, or with no complete event, is analysed (the report says what is
/// missing) rather than failing or panicking, on both the narrow single-parse path and a
/// full load.
#[test]
fn traces_without_events_are_analysed() {
    let dir = tempfile::tempdir().unwrap();
    let texts = [
        ("empty.json", r#"{"traceEvents": []}"#),
        (
            "instant.json",
            r#"{"traceEvents": [{"ph": "i", "name": "mark", "pid": 1, "tid": 1, "ts": 1.5}]}"#,
        ),
    ];
    for (name, text) in texts {
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        let (_, report) =
            trace_frame::load_and_analyze(&path, None, &AnalysisName::ALL, &Default::default())
                .unwrap();
        let report = report.unwrap();
        assert_eq!(report.summary.kernels.value, 0, "{name}");
        assert!(report.temporal.is_empty(), "{name}");
        let loaded = trace_frame::load(&path, None).unwrap();
        let full = trace_frame::analyze(&loaded, &AnalysisName::ALL, &Default::default()).unwrap();
        assert_eq!(
            trace_frame::render_json(&full),
            trace_frame::render_json(&report),
            "{name}"
        );
    }
}

/// Every shared PyTorch trace, then every directory that holds one.
fn kineto_files_and_dirs(set: &test_support::RealTraces) -> Vec<PathBuf> {
    let mut inputs: Vec<PathBuf> = set.kineto.iter().map(|t| t.path.clone()).collect();
    let mut dirs: Vec<PathBuf> = inputs
        .iter()
        .filter_map(|p| p.parent().map(Path::to_path_buf))
        .collect();
    dirs.sort();
    dirs.dedup();
    inputs.extend(dirs);
    inputs
}

/// The frames `load_and_analyze` builds (only the columns the analyses read, our read
/// beside the load) give the report of a full load and `analyze`, on every shared PyTorch
/// trace and trace directory.
#[test]
fn the_analyses_frame_gives_the_full_frames_report_on_every_pytorch_trace() {
    let Some(set) = test_support::real_traces("the_analyses_frame_gives_the_full_frames_report")
    else {
        return;
    };
    let inputs = kineto_files_and_dirs(&set);
    assert!(inputs.len() >= 40, "{} inputs", inputs.len());
    let step = trace_frame::StepQuery::default();
    for input in &inputs {
        let full = trace_frame::load(input, None).and_then(|loaded| {
            trace_frame::analyze(&loaded, &AnalysisName::ALL, &step)
                .map(|r| trace_frame::render_json(&r))
        });
        let narrow = trace_frame::load_and_analyze(input, None, &AnalysisName::ALL, &step)
            .and_then(|(_, r)| r.map(|r| trace_frame::render_json(&r)));
        match (full, narrow) {
            (Ok(a), Ok(b)) => assert!(a == b, "{}", input.display()),
            (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string(), "{}", input.display()),
            (a, b) => panic!("{}: {a:?} / {b:?}", input.display()),
        }
    }
}

/// `load_hta_timelines` (the analyses' columns, no joined frame) gives the timelines of a
/// full `load` and `hta_timelines`, or the same error, on every shared PyTorch trace and
/// trace directory and on the malformed fixtures.
#[test]
fn hta_timelines_of_a_path_equal_those_of_the_full_load() {
    let Some(set) = test_support::real_traces("hta_timelines_of_a_path_equal_the_full_load") else {
        return;
    };
    let mut inputs = kineto_files_and_dirs(&set);
    inputs.push(fixture("chrome/err"));
    assert!(inputs.len() >= 40, "{} inputs", inputs.len());
    let mut timelines = 0;
    for input in &inputs {
        let full = trace_frame::load(input, None)
            .and_then(|loaded| trace_frame::hta_timelines(&loaded))
            .map(|ts| format!("{ts:?}"));
        let direct = trace_frame::load_hta_timelines(input).map(|ts| {
            timelines += ts.len();
            format!("{ts:?}")
        });
        match (full, direct) {
            (Ok(a), Ok(b)) => assert!(a == b, "{}", input.display()),
            (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string(), "{}", input.display()),
            (a, b) => panic!("{}: {a:?} / {b:?}", input.display()),
        }
    }
    assert!(timelines >= 40, "{timelines} timelines");
}

/// Two traces with the same file name in different directories, or one trace whose bytes
/// changed, never share a cache file; the cache directory is private (0700) and a
/// directory open to others is not used.
#[test]
fn cache_is_keyed_on_path_and_content_and_private() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache");
    let a = dir.path().join("runA/rank0.pt.trace.json");
    let b = dir.path().join("runB/rank0.pt.trace.json");
    for p in [&a, &b] {
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    }
    std::fs::copy(fixture("chrome/ok/tiny-train/rank0.pt.trace.json"), &a).unwrap();
    std::fs::copy(fixture("chrome/ok/tiny-train/rank1.pt.trace.json"), &b).unwrap();
    assert_ne!(
        trace_frame::cache_path(&a, &cache),
        trace_frame::cache_path(&b, &cache)
    );
    let (fa, ua) = trace_frame::read_frame_cached(&a, &cache).unwrap();
    assert!(matches!(ua, trace_frame::CacheUse::Written(_)), "{ua:?}");
    let (fb, ub) = trace_frame::read_frame_cached(&b, &cache).unwrap();
    assert!(
        matches!(ub, trace_frame::CacheUse::Written(_)),
        "runB is not runA: {ub:?}"
    );
    assert_eq!(fa.rank, Some(0));
    assert_eq!(fb.rank, Some(1));
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&cache), 0o700);
    let trace_frame::CacheUse::Written(file) = ua else {
        unreachable!()
    };
    assert_eq!(mode(&file) & 0o077, 0, "cache files are private");
    // Same path, size and mtime, other bytes: another key.
    let before = trace_frame::cache_path(&a, &cache);
    let text = std::fs::read(&a).unwrap();
    let mtime = std::fs::metadata(&a).unwrap().modified().unwrap();
    let mut changed = text.clone();
    let at = changed.iter().position(|&c| c == b'1').unwrap();
    changed[at] = b'2';
    std::fs::write(&a, &changed).unwrap();
    std::fs::File::options()
        .write(true)
        .open(&a)
        .unwrap()
        .set_modified(mtime)
        .unwrap();
    assert_ne!(trace_frame::cache_path(&a, &cache), before);
    // A cache directory that others may write to is not used.
    let open = dir.path().join("open");
    std::fs::create_dir(&open).unwrap();
    std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o777)).unwrap();
    let (_, used) = trace_frame::read_frame_cached(&b, &open).unwrap();
    assert!(
        matches!(&used, trace_frame::CacheUse::WriteFailed(_, why) if why.contains("other users")),
        "{used:?}"
    );
    assert_eq!(std::fs::read_dir(&open).unwrap().count(), 0);
}

/// `--sql` reads only the trace's tables: file and URL table functions, unknown tables
/// and statements other than one SELECT are refused before anything runs, and a cross
/// join past the row limit is an error that says so.
#[test]
fn sql_is_confined_to_the_trace_tables() {
    let loaded =
        trace_frame::load(&fixture("chrome/ok/tiny-train/rank0.pt.trace.json"), None).unwrap();
    let df = &loaded.events;
    let refused = |q: &str, why: &str| {
        let e = trace_frame::run_sql(df, q).unwrap_err().to_string();
        assert!(e.contains(why), "{q}: {e}");
    };
    refused(
        "SELECT * FROM read_parquet('/etc/*.parquet')",
        "table functions",
    );
    refused(
        "SELECT * FROM read_csv('http://127.0.0.1:9/x.csv')",
        "table functions",
    );
    refused(
        "SELECT * FROM events JOIN read_json('/etc/passwd') ON true",
        "table functions",
    );
    refused("SELECT * FROM some_table", "unknown table");
    refused("DROP TABLE events", "only SELECT");
    refused("SELECT 1; SELECT 2", "one SELECT");
    // Common table expressions and subqueries over the tables are fine.
    let ok = trace_frame::run_sql(
        df,
        "WITH k AS (SELECT * FROM kernels) SELECT COUNT(*) AS n FROM (SELECT * FROM k)",
    )
    .unwrap();
    assert_eq!(ok.height(), 1);
    let rows = df.height();
    let limit = rows * rows - 1;
    let e = trace_frame::run_sql_limited(df, "SELECT * FROM events a CROSS JOIN events b", limit)
        .unwrap_err()
        .to_string();
    assert!(e.contains("--sql-max-rows"), "{e}");
    let e = trace_frame::run_sql_limited(df, "SELECT * FROM events a, events b", limit)
        .unwrap_err()
        .to_string();
    assert!(e.contains("--sql-max-rows"), "{e}");
    // A join ON a condition that is no equality keeps most pairs: bounded as a cross join.
    let e = trace_frame::run_sql_limited(
        df,
        "SELECT COUNT(*) FROM events a JOIN events b ON a.ts_ns < b.ts_ns",
        limit,
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("--sql-max-rows"), "{e}");
    // An equi-join on a key with few values is counted before it runs, exactly: refused one
    // row under its size, run at its size (where the join's own count agrees).
    let per_cat = trace_frame::run_sql(
        df,
        "SELECT cat, COUNT(*) AS n FROM events WHERE cat IS NOT NULL GROUP BY cat",
    )
    .unwrap();
    let pairs: u64 = per_cat
        .column("n")
        .unwrap()
        .cast(&DataType::UInt64)
        .unwrap()
        .u64()
        .unwrap()
        .into_no_null_iter()
        .map(|n| n * n)
        .sum();
    assert!(pairs > rows as u64, "{pairs}");
    let self_join =
        "SELECT COUNT(*) AS n FROM events a JOIN events AS b ON (a.cat = b.cat AND a.pid = b.pid)";
    let e = trace_frame::run_sql_limited(df, self_join, pairs as usize - 1)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains(&format!("a.cat = b.cat makes up to {pairs} rows"))
            && e.contains("--sql-max-rows"),
        "{e}"
    );
    // The same self-join spelled with USING, through a CTE or a subquery that only
    // filters and projects the table, or a CTE over a CTE: counted the same way.
    for spelled in [
        "SELECT COUNT(*) AS n FROM events a JOIN events b USING (cat)",
        "WITH e AS (SELECT * FROM events) SELECT COUNT(*) AS n FROM e a JOIN e b ON a.cat = b.cat",
        "WITH e AS (SELECT cat, ts_ns FROM events WHERE dur_ns >= 0), f AS (SELECT * FROM e) \
         SELECT COUNT(*) AS n FROM f a JOIN events b ON a.cat = b.cat",
        "SELECT COUNT(*) AS n FROM (SELECT cat FROM events) a JOIN (SELECT * FROM events) b \
         ON a.cat = b.cat",
    ] {
        let e = trace_frame::run_sql_limited(df, spelled, pairs as usize - 1)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains(&format!("makes up to {pairs} rows")) && e.contains("--sql-max-rows"),
            "{spelled}: {e}"
        );
    }
    // A side grouped by its key has one row per key: not counted as the table, and run.
    let grouped = "WITH c AS (SELECT cat, COUNT(*) AS k FROM events GROUP BY cat) \
                   SELECT COUNT(*) AS n FROM c a JOIN c b ON a.cat = b.cat";
    trace_frame::run_sql_limited(df, grouped, pairs as usize - 1).unwrap();
    // Text of any length from a number is refused before anything runs.
    for q in [
        "SELECT length(rpad('a', 9223372036854775807, 'b')) FROM events",
        "SELECT LPAD(name, 100, 'x') FROM events",
        "SELECT repeat(name, 1000000000) FROM kernels",
    ] {
        refused(q, "any length");
    }
    let joined = trace_frame::run_sql_limited(
        df,
        "SELECT COUNT(*) AS n FROM events a JOIN events b ON a.cat = b.cat",
        pairs as usize,
    )
    .unwrap();
    assert_eq!(
        joined
            .column("n")
            .unwrap()
            .cast(&DataType::UInt64)
            .unwrap()
            .u64()
            .unwrap()
            .get(0),
        Some(pairs)
    );
    // A result past the limit is an error, not a silently cut table.
    let e = trace_frame::run_sql_limited(df, "SELECT * FROM events", rows - 1)
        .unwrap_err()
        .to_string();
    assert!(e.contains("more than"), "{e}");
    assert_eq!(
        trace_frame::run_sql_limited(df, "SELECT * FROM events", rows)
            .unwrap()
            .height(),
        rows
    );
}

/// The analyses a rank directory can be read for one rank at a time.
const PER_RANK: [AnalysisName; 6] = [
    AnalysisName::Stragglers,
    AnalysisName::Temporal,
    AnalysisName::Idle,
    AnalysisName::Overlap,
    AnalysisName::LaunchStats,
    AnalysisName::QueueLength,
];

/// `analyze_by_rank`'s report of `dir` is the report of the whole load, byte for byte in
/// JSON; returns it.
fn by_rank_equals_whole_load(dir: &Path) -> trace_frame::ProfileModelReport {
    assert!(trace_frame::reads_by_rank(dir, &PER_RANK));
    let (_, whole) =
        trace_frame::load_and_analyze(dir, None, &PER_RANK, &Default::default()).expect("loads");
    let whole = whole.expect("analyses");
    let by_rank = trace_frame::analyze_by_rank(dir, &PER_RANK).expect("analyses by rank");
    assert_eq!(
        trace_frame::render_json(&by_rank.report),
        trace_frame::render_json(&whole),
        "{}",
        dir.display()
    );
    by_rank.report
}

/// param-dlrm-8rank read one rank at a time: the same report, so the same stragglers as
/// HTA 0.5.0.
#[test]
fn param_dlrm_by_rank_equals_the_whole_load_and_hta() {
    let Some(root) = test_support::traces_dir("param_dlrm_by_rank_equals_the_whole_load") else {
        return;
    };
    let dir = root.join("pytorch/param-dlrm-8rank");
    let report = by_rank_equals_whole_load(&dir);
    let mut ranks = report.stragglers.expect("stragglers").ranks;
    ranks.sort();
    let theirs: Vec<i64> = csv_rows(
        &root.join("pytorch/reference-outputs/hta-0.5.0/param-dlrm-8rank/potential_stragglers.csv"),
    )
    .iter()
    .map(|r| f(r, "straggler_rank") as i64)
    .collect();
    assert_eq!(ranks, theirs);
    assert_eq!(report.skip_stats.map(|o| o.ranks.len()), Some(8));
    // Not per-rank analyses: the whole load.
    assert!(!trace_frame::reads_by_rank(
        &dir,
        &[AnalysisName::CriticalPath]
    ));
}

/// A synthetic job (`cargo xtask synth-ranks`'s) read one rank at a time: the report of the
/// whole load; our late-rank detection (clocks corrected) names the planted straggler, its
/// first step and its delay; HTA's rule has it among its candidates on short steps (on 8
/// ranks of 5 MB it does not: the straggler's own all-reduce, which waits for no one, is
/// under 1 % of the mean step and left out). HTA's rule counts each step's top candidates
/// on unaligned clocks, so it need not name the planted rank first: another rank can lead
/// on the steps before the straggler starts (at 0.2 MB HTA's order is 10, 6).
#[test]
fn synthetic_job_by_rank_names_the_planted_straggler() {
    use test_support::synth_ranks::{COMPUTE_JITTER_NS, END_JITTER_NS, Job};
    for mb in [0.2, 2.0] {
        let tmp = tempfile::tempdir().expect("a temporary directory");
        let job = Job::plan(16, mb, 1);
        job.write_into(tmp.path());
        let report = by_rank_equals_whole_load(tmp.path());
        let s = report.stragglers.expect("stragglers");
        if mb < 1.0 {
            assert!(
                s.ranks.contains(&(job.straggler_rank as i64)),
                "{mb} MB: {s:?}"
            );
        }
        assert_eq!(report.temporal.len(), 16);
        let ours = report.skip_stats.expect("ours").stragglers;
        assert_eq!(ours.len(), 1, "{mb} MB: {ours:?}");
        assert_eq!(ours[0].rank, Some(job.straggler_rank as i64));
        assert_eq!(ours[0].first_step, job.straggler_step as i64);
        let planted_us = job.straggler_delay_ns as f64 / 1e3;
        let tolerance_us = (COMPUTE_JITTER_NS + END_JITTER_NS) as f64 / 1e3;
        assert!(
            (ours[0].late_by_us - planted_us).abs() <= tolerance_us,
            "{ours:?}"
        );
    }
}
