//! skip-stats analyses on the real captures in `$TRACEWISE_TRACES`: budgets reconcile,
//! rows.csv holds every GPU activity once, launch delays agree with the JAX MANIFEST,
//! temporal shares agree with Holistic Trace Analysis.

use std::path::{Path, PathBuf};

use analysis::{InputAnalysis, SkipConfig as Config};

use test_support::RealTraces;
use test_support::traces_dir as traces;

/// Every Kineto trace of `pytorch/MANIFEST.md` and the regenerated JSON of every GPU
/// capture of `jax/MANIFEST.md` (test-support checks the lists against the folders).
fn real_traces(set: &RealTraces) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = set.kineto.iter().map(|t| t.path.clone()).collect();
    assert!(!files.is_empty(), "no Kineto traces in pytorch/MANIFEST.md");
    let jax = set.jax_gpu_json();
    assert!(!jax.is_empty(), "no GPU captures in jax/MANIFEST.md");
    files.extend(jax);
    files
}

/// Budget checks and rows.csv completeness for one input.
fn check_output(input: &Path, out: &InputAnalysis, rows_csv: &[u8]) {
    for r in &out.reports {
        for s in &r.streams {
            let b = &s.budget;
            assert!(
                b.check.holds(),
                "{}: GPU {} stream {}: {:?}",
                input.display(),
                s.device,
                s.stream,
                b.check
            );
            assert_eq!(
                b.compute + b.collective + b.memcpy + b.memset + b.idle,
                b.span(),
                "{}: stream {}",
                input.display(),
                s.stream
            );
        }
        // The gaps of the busiest stream add up to its idle time.
        if let (Some(c), Some(g)) = (r.critical_stream(), &r.gap_host) {
            assert_eq!(c.budget.idle, g.idle, "{}: gaps vs idle", input.display());
            assert!(g.covered <= g.idle, "{}: covered <= idle", input.display());
        }
        for d in &r.devices {
            assert!(
                d.budget.check.holds(),
                "{}: device {}",
                input.display(),
                d.device
            );
        }
    }
    // Every GPU activity appears exactly once in rows.csv.
    let multi = out.reports.len() > 1 || input.is_dir();
    let mut rows: Vec<(String, i64, i64, i64, i64, String)> = Vec::new();
    let mut without_launch = 0;
    let mut reader = csv::Reader::from_reader(rows_csv);
    for rec in reader.records() {
        let rec = rec.expect("rows.csv parses");
        let o = usize::from(multi);
        let rank = if multi {
            rec[0].to_string()
        } else {
            String::new()
        };
        let num = |i: usize| rec[i + o].parse::<i64>().expect("integer column");
        rows.push((rank, num(0), num(1), num(6), num(7), rec[5 + o].to_string()));
        if rec[9 + o].is_empty() {
            without_launch += 1;
        }
    }
    let mut expect = Vec::new();
    let mut expect_without = 0;
    for r in &out.reports {
        let c = load::load(Path::new(&r.label))
            .expect("loads again")
            .remove(0)
            .capture;
        let rank = if multi {
            r.rank.map(|n| n.to_string()).unwrap_or_default()
        } else {
            String::new()
        };
        for a in c.activities() {
            let s = c.stream(a.stream);
            expect.push((
                rank.clone(),
                c.device(s.device).ordinal,
                s.ordinal,
                a.start.0,
                a.dur.0,
                c.name(a.name).to_string(),
            ));
        }
        expect_without += r.launch_all.without_launch;
    }
    rows.sort();
    expect.sort();
    assert_eq!(
        rows.len(),
        expect.len(),
        "{}: one row per activity",
        input.display()
    );
    assert!(
        rows == expect,
        "{}: rows.csv differs from the capture's activities",
        input.display()
    );
    assert_eq!(
        without_launch,
        expect_without,
        "{}: rows without launch",
        input.display()
    );
}

#[test]
fn every_real_trace_reconciles() {
    let Some(set) = test_support::real_traces("every_real_trace_reconciles") else {
        return;
    };
    let mut inputs = real_traces(&set);
    // The folders of complete rank sets (param-dlrm-8rank), as one directory input each.
    let ranks = set.rank_dirs();
    assert!(
        !ranks.is_empty(),
        "no complete rank set in pytorch/MANIFEST.md"
    );
    inputs.extend(ranks);
    for input in inputs {
        let mut rows = Vec::new();
        let out = analysis::skip_stats(&input, &Config::default(), &mut rows)
            .unwrap_or_else(|e| panic!("{}: {e}", input.display()));
        check_output(&input, &out, &rows);
    }
}

/// `12.3 µs`, `0.98 ms` → ns.
fn parse_time(s: &str) -> i64 {
    let s = s.trim();
    let (num, scale) = if let Some(v) = s.strip_suffix("µs") {
        (v, 1e3)
    } else if let Some(v) = s.strip_suffix("ms") {
        (v, 1e6)
    } else {
        panic!("unit of {s:?}")
    };
    (num.trim().parse::<f64>().expect("number") * scale).round() as i64
}

#[test]
fn jax_rocm_launch_latency_matches_manifest() {
    let Some(set) = test_support::real_traces("jax_rocm_launch_latency_matches_manifest") else {
        return;
    };
    let manifest =
        std::fs::read_to_string(set.root.join("jax/MANIFEST.md")).expect("jax/MANIFEST.md");
    let table = manifest
        .split("Launch→kernel-start latency")
        .nth(1)
        .expect("the launch-latency table");
    let mut checked = 0;
    for line in table.lines().filter(|l| l.starts_with("| ")) {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        let folder = match cells[1] {
            "gemm" => "rocm-mi300-jax08-gemm",
            "attention" => "rocm-mi300-jax08-attention",
            "elementwise" => "rocm-mi300-jax08-elementwise",
            "te-fused-attn" => "rocm-gfx950-te-fused-attn",
            _ => continue,
        };
        let (median, max, sum) = (
            parse_time(cells[2]),
            parse_time(cells[3]),
            parse_time(cells[4]),
        );
        let path = &set.xspace(folder).json;
        let out = analysis::skip_stats(path, &Config::default(), std::io::sink()).expect("reads");
        let l = &out.reports[0].launch_all;
        let d = l.delay.expect("launched activities");
        let close = |ours: i64, theirs: i64| (ours - theirs).abs() as f64 <= 0.01 * theirs as f64;
        assert!(
            close(l.delay_sum.0, sum),
            "{folder}: sum {} vs {sum}",
            l.delay_sum.0
        );
        assert!(
            close(d.median.0, median),
            "{folder}: median {} vs {median}",
            d.median.0
        );
        assert!(close(d.max.0, max), "{folder}: max {} vs {max}", d.max.0);
        assert_eq!(l.without_launch, 0, "{folder}: every activity has a launch");
        checked += 1;
    }
    assert_eq!(checked, 4, "four ROCm captures in the table");
}

#[test]
fn param_dlrm_matches_hta_temporal_breakdown() {
    let Some(root) = traces("param_dlrm_matches_hta_temporal_breakdown") else {
        return;
    };
    let csv_path =
        root.join("pytorch/reference-outputs/hta-0.5.0/param-dlrm-8rank/temporal_breakdown.csv");
    let mut reader = csv::Reader::from_path(&csv_path).expect("temporal_breakdown.csv");
    let out = analysis::skip_stats(
        &root.join("pytorch/param-dlrm-8rank"),
        &Config::default(),
        std::io::sink(),
    )
    .expect("reads");
    let mut checked = 0;
    for rec in reader.records() {
        let rec = rec.expect("row");
        let rank: i64 = rec[1].parse().expect("rank");
        let pct = |i: usize| rec[i].parse::<f64>().expect("percentage");
        let (idle, compute, non_compute) = (pct(6), pct(7), pct(8));
        let r = out
            .reports
            .iter()
            .find(|r| r.rank == Some(rank))
            .expect("rank present");
        assert_eq!(r.devices.len(), 1, "rank {rank}: one GPU");
        // HTA's kernel_time is last end − first start over *all* the rank's GPU
        // activities, those in flight at the capture's start included (our report's
        // window leaves them out: docs/differences.md). Budget HTA's window.
        let capture = load::load(Path::new(&r.label))
            .expect("loads again")
            .remove(0)
            .capture;
        let (start, end) = capture.gpu_span().expect("GPU activity");
        let b = &analysis::device_budget(
            &capture,
            r.devices[0].device_id,
            analysis::Window { start, end },
        );
        if r.in_flight.activities > 0 {
            // The report's window is the steps' wall time now, not a GPU span to compare
            // with HTA's; the in-flight activities are counted apart.
            assert!(r.in_flight.time.0 > 0, "rank {rank}: in-flight time");
        }
        let hta_span_us: f64 = rec[5].parse().expect("kernel_time");
        assert_eq!(b.span().0 as f64 / 1e3, hta_span_us, "rank {rank}: span");
        let ours = [
            100.0 * b.share(b.idle),
            100.0 * b.share(b.compute),
            100.0 * b.share(b.collective + b.memcpy + b.memset),
        ];
        for (name, o, h) in [
            ("idle", ours[0], idle),
            ("compute", ours[1], compute),
            ("non-compute", ours[2], non_compute),
        ] {
            assert!(
                (o - h).abs() <= 0.5,
                "rank {rank} {name}: ours {o:.2} % vs HTA {h:.2} %"
            );
        }
        checked += 1;
    }
    assert_eq!(checked, 8);
}

/// HTA's idle time breakdown splits each stream's idle time (between its first and last
/// activity) into host wait, kernel wait and other. Our host wait (the activity after a gap
/// was launched only after the gap began) must agree with HTA's on every rank and stream.
#[test]
fn param_dlrm_host_wait_matches_hta_idle_time_breakdown() {
    let Some(root) = traces("param_dlrm_host_wait_matches_hta_idle_time_breakdown") else {
        return;
    };
    let csv_path =
        root.join("pytorch/reference-outputs/hta-0.5.0/param-dlrm-8rank/idle_time_breakdown.csv");
    let mut reader = csv::Reader::from_path(&csv_path).expect("idle_time_breakdown.csv");
    let ranks = chrome_reader::load_dir(&root.join("pytorch/param-dlrm-8rank")).expect("loads");
    let mut checked = 0;
    for rec in reader.records() {
        let rec = rec.expect("row");
        if &rec[3] != "host_wait" {
            continue;
        }
        let rank: i64 = rec[1].parse().expect("rank");
        let stream: i64 = rec[2].parse().expect("stream");
        let hta_us: f64 = rec[4].parse().expect("idle_time");
        let c = &ranks
            .iter()
            .find(|r| r.rank == Some(rank))
            .expect("rank")
            .capture;
        let s = c
            .streams()
            .iter()
            .find(|s| s.ordinal == stream)
            .expect("stream");
        let acts = c.stream_activities(s.id);
        let window = analysis::Window {
            start: acts.iter().map(|a| a.start).min().expect("activities"),
            end: acts.iter().map(|a| a.end()).max().expect("activities"),
        };
        let gaps = analysis::idle_gaps(c, s.id, window);
        let causes = analysis::idle_causes(c, s.id, &gaps);
        let ours_us = causes.host_wait.0 as f64 / 1e3;
        // Measured: 19 of 32 streams equal to the µs, the others within 0.6 %.
        assert!(
            (ours_us - hta_us).abs() <= 0.01 * hta_us,
            "rank {rank} stream {stream}: host wait ours {ours_us:.1} µs, HTA {hta_us:.1} µs"
        );
        checked += 1;
    }
    assert_eq!(checked, 32, "4 streams on each of 8 ranks");
}
