//! Nsight Systems and ROCm captures have no CPU ops: a kernel whose launch lies inside an
//! annotation range (NVTX, ROCm marker) on the launching thread is attributed to the
//! innermost such range, and one outside every range says it has no CPU op.

use attribution::{Config, DecidedBy};

#[test]
fn kernels_launched_inside_ranges_get_the_innermost_range() {
    let root = test_support::workspace_root();
    for rel in [
        "testdata/nsys/ok/small.sqlite",
        "testdata/rocprof/ok/small.pftrace",
    ] {
        let path = root.join(rel);
        let loaded = load::load_single(&path).expect("loads");
        let result =
            attribution::attribute_loaded(&loaded, &Config::default()).expect("attributes");
        let capture = &loaded.capture;
        assert_eq!(result.kernels.len(), capture.activities().len(), "{rel}");
        let mut in_range = 0;
        for (row, activity) in result.kernels.iter().zip(capture.activities()) {
            let Some(launch) = activity.launch() else {
                assert_eq!(row.decided_by, DecidedBy::NoLaunch, "{rel}");
                continue;
            };
            let launch = capture.host_event(launch);
            // Independently: the shortest annotation on the launch's thread that contains it.
            let innermost = capture
                .thread_events(launch.thread)
                .iter()
                .filter(|e| e.kind == trace_model::HostKind::Annotation)
                .filter(|e| e.start <= launch.start && e.end() >= launch.end())
                .min_by_key(|e| e.dur);
            match innermost {
                Some(range) => {
                    in_range += 1;
                    assert_eq!(row.decided_by, DecidedBy::EnclosingRange, "{rel}");
                    assert_eq!(row.op_name, capture.name(range.name), "{rel}");
                }
                None => assert_eq!(row.decided_by, DecidedBy::NoCpuOp, "{rel}"),
            }
        }
        assert!(in_range > 0, "{rel}: no kernel launched inside a range");
        assert!(
            result.notes.iter().any(|n| n.code == "no-cpu-ops"),
            "{rel}: {:?}",
            result.notes
        );
    }
}

/// On every shared Nsight Systems export with NVTX ranges, the kernel time attributed to an
/// enclosing range equals a plain SQL count over the export: kernels whose runtime launch
/// (same correlation id, same process) lies inside an NVTX range of the launching thread.
#[test]
fn nvtx_attribution_equals_an_sql_count_on_every_shared_export() {
    let Some(traces) = test_support::traces_dir("nvtx attribution on shared exports") else {
        return;
    };
    let mut checked = 0;
    let mut folders: Vec<_> = std::fs::read_dir(traces.join("nsys"))
        .expect("nsys folder")
        .map(|e| e.expect("entry").path())
        .collect();
    folders.sort();
    for folder in folders {
        let Ok(files) = std::fs::read_dir(&folder) else {
            continue;
        };
        for file in files {
            let path = file.expect("entry").path();
            if path.extension().is_none_or(|e| e != "sqlite") {
                continue;
            }
            let db = rusqlite::Connection::open_with_flags(
                &path,
                rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
            )
            .unwrap();
            let has = |t: &str| -> bool {
                db.query_row(
                    "SELECT count(*) FROM sqlite_master WHERE name = ?1",
                    [t],
                    |r| r.get::<_, i64>(0),
                )
                .unwrap()
                    > 0
            };
            if !has("NVTX_EVENTS") || !has("CUPTI_ACTIVITY_KIND_KERNEL") {
                continue;
            }
            // Kernels, their launch by correlation id within the process, and whether an
            // NVTX push/pop or start/end range of the launching thread encloses the launch.
            // `globalTid` is `globalPid` with the thread id in its low 24 bits.
            let tid_bits = 0xFF_FFFFi64;
            let sql = format!(
                "SELECT coalesce(sum(K.end - K.start), 0),
                        coalesce(sum(CASE WHEN EXISTS (
                            SELECT 1 FROM CUPTI_ACTIVITY_KIND_RUNTIME R
                            JOIN NVTX_EVENTS N ON N.globalTid = R.globalTid
                            WHERE R.correlationId = K.correlationId
                              AND (R.globalTid & ~{tid_bits}) = (K.globalPid & ~{tid_bits})
                              AND N.eventType IN (59, 60, 70, 71)
                              AND N.end IS NOT NULL AND N.start <= R.start AND N.end >= R.end
                        ) THEN K.end - K.start ELSE 0 END), 0)
                 FROM CUPTI_ACTIVITY_KIND_KERNEL K"
            );
            let (total, in_ranges): (i64, i64) = db
                .query_row(&sql, [], |r| Ok((r.get(0)?, r.get(1)?)))
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            let loaded = load::load(&path).unwrap_or_else(|e| panic!("{e}"));
            let (mut ours_total, mut ours_in) = (0i64, 0i64);
            for one in &loaded {
                let result = attribution::attribute_loaded(one, &Config::default())
                    .unwrap_or_else(|e| panic!("{e}"));
                for row in result.kernels.iter().filter(|k| k.kind == "kernel") {
                    ours_total += row.dur_ns.0;
                    if row.match_kind == attribution::MatchKind::EnclosingRange {
                        assert_eq!(row.decided_by, DecidedBy::EnclosingRange);
                        assert!(!row.op_name.is_empty());
                        ours_in += row.dur_ns.0;
                    }
                }
            }
            let shown = path.display();
            assert_eq!(ours_total, total, "{shown}: kernel time");
            assert_eq!(
                ours_in, in_ranges,
                "{shown}: kernel time launched inside ranges"
            );
            eprintln!(
                "{shown}: {:.1} % of kernel time attributed to an enclosing NVTX range",
                100.0 * in_ranges as f64 / total.max(1) as f64
            );
            checked += 1;
        }
    }
    assert!(checked >= 2, "{checked} shared exports with NVTX ranges");
}

/// TensorFlow's XSpace: every kernel of the two compute streams gets the TensorFlow op of
/// the `TensorFlow Ops` line around it (the line has one op per kernel, same span).
#[test]
fn tensorflow_kernels_get_their_tf_op() {
    let Some(traces) = test_support::traces_dir("tensorflow ops attribution") else {
        return;
    };
    let path = traces.join("jax/tf-v100-multiworker-xplane/34.83.195.179_6003.xplane.pb");
    let loaded = load::load_single(&path).unwrap_or_else(|e| panic!("{e}"));
    let result = attribution::attribute_loaded(&loaded, &Config::default())
        .unwrap_or_else(|e| panic!("{e}"));
    let by_op: Vec<_> = result
        .kernels
        .iter()
        .filter(|k| k.decided_by == DecidedBy::TensorFlowOpLine)
        .collect();
    // 665 kernels per compute stream on GPU:4 and GPU:6, each under its op.
    assert_eq!(by_op.len(), 2 * 665);
    for k in &by_op {
        assert_eq!(k.match_kind, attribution::MatchKind::EnclosingRange);
        assert!(k.op_name.contains(':'), "{}", k.op_name);
    }
    let note = result
        .notes
        .iter()
        .find(|n| n.code == "tensorflow-op-lines")
        .expect("the TensorFlow op-line note");
    assert_eq!(note.shown_count(), Some(by_op.len() as u64));
}
