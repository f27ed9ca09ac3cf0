//! The five scenarios of the reference's unit tests, rebuilt from their description,
//! with the same assertions.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Value, json};

use crate::support::*;

/// Whether some GPU annotation named `name` on the endpoint's (pid, tid) contains its ts.
fn inside_annotation(events: &[Value], endpoint: &Value, name: &str) -> bool {
    events
        .iter()
        .filter(|a| cat_is(a, "gpu_user_annotation"))
        .any(|a| {
            a["pid"] == endpoint["pid"]
                && a["tid"] == endpoint["tid"]
                && a["name"] == name
                && f(a, "ts") <= f(endpoint, "ts")
                && f(endpoint, "ts") <= f(a, "ts") + f(a, "dur")
        })
}

fn endpoint_annotation_name(ev: &Value) -> String {
    let args = &ev["args"];
    let side = if ev["ph"] == "s" {
        "source"
    } else {
        "destination"
    };
    let op = args[format!("{side}_operation")].as_str().unwrap_or("");
    let stage = &args[format!("{side}_stage")];
    if op == "UNSHARD" {
        format!("PP:{stage}UNSHARD")
    } else {
        format!("PP:{stage}{op}{}", args["microbatch"])
    }
}

fn thread_names_by_lane(events: &[Value]) -> BTreeMap<(i64, i64), String> {
    events
        .iter()
        .filter(|e| e["name"] == "thread_name")
        .map(|e| {
            (
                (
                    e["pid"].as_i64().unwrap_or(-1),
                    e["tid"].as_i64().unwrap_or(-1),
                ),
                e["args"]["name"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect()
}

fn lane_of(ev: &Value) -> (i64, i64) {
    (
        ev["pid"].as_i64().unwrap_or(-1),
        ev["tid"].as_i64().unwrap_or(-1),
    )
}

#[test]
fn merges_aligned_pp_ranks_and_connects_send_recv() {
    let send = rank_trace(
        0,
        1_000_000,
        vec![
            thread_metadata(100, 100, "thread 100 (python) 100"),
            kernel("ncclDevKernel_AllGather", 6, 1.0, 4.0, Some("PP:0UNSHARD")),
            kernel("ncclDevKernel_AllGather", 7, 2.0, 2.0, Some("PP:0UNSHARD")),
            kernel("compute", 2, 4.0, 1.0, Some("PP:0F0")),
            kernel("compute", 3, 4.5, 4.0, Some("PP:0F0")),
            kernel("compute", 5, 6.0, 1.0, None),
            kernel("compute", 2, 8.0, 1.0, Some("PP:0F0")),
            memcpy(4, 3.5, 2.0, "PP:0F0"),
            kernel("ncclDevKernel_SendRecv", 1, 10.0, 4.0, Some("PP:0SEND_F0")),
            flow(1, 10.0),
        ],
    );
    let recv = rank_trace(
        4,
        1_001_000,
        vec![
            kernel("ncclDevKernel_AllGather", 6, 1.0, 4.0, Some("PP:1UNSHARD")),
            kernel("ncclDevKernel_AllGather", 7, 2.0, 2.0, Some("PP:1UNSHARD")),
            kernel("ncclDevKernel_SendRecv", 1, 8.0, 5.0, Some("PP:1RECV_F0")),
            flow(1, 8.0),
            kernel("compute", 2, 14.0, 1.0, Some("PP:1F0")),
            kernel("compute", 3, 14.5, 4.0, Some("PP:1F0")),
            kernel("compute", 5, 16.0, 1.0, None),
            kernel("compute", 2, 18.0, 1.0, Some("PP:1F0")),
            memcpy(4, 13.5, 2.0, "PP:1F0"),
        ],
    );

    let (events, summary) = merge(&[recv, send]);

    let kernels: BTreeMap<String, &Value> = events
        .iter()
        .filter(|e| cat_is(e, "kernel") && e["args"].get("name").is_some())
        .map(|e| (e["args"]["name"].as_str().unwrap_or("").to_string(), e))
        .collect();
    let by_cat = |cat: &str| -> Vec<&Value> { events.iter().filter(|e| cat_is(e, cat)).collect() };
    let send_recv = by_cat("pp_send_recv");
    let dependency = by_cat("pp_compute_dependency");
    let unshard = by_cat("pp_unshard_dependency");
    let annotations: BTreeMap<String, &Value> = events
        .iter()
        .filter(|e| {
            cat_is(e, "gpu_user_annotation")
                && ["PP:0F0", "PP:0SEND_F0", "PP:1RECV_F0", "PP:1F0"]
                    .contains(&e["name"].as_str().unwrap_or(""))
        })
        .map(|e| (e["name"].as_str().unwrap_or("").to_string(), e))
        .collect();
    let original_flows = by_cat("ac2g");
    let names = thread_names_by_lane(&events);
    let thread_names: BTreeSet<&str> = names.values().map(String::as_str).collect();
    let process_sort: BTreeMap<i64, i64> = events
        .iter()
        .filter(|e| e["name"] == "process_sort_index")
        .map(|e| {
            (
                e["pid"].as_i64().unwrap_or(-1),
                e["args"]["sort_index"].as_i64().unwrap_or(-1),
            )
        })
        .collect();
    let cpu_thread = events
        .iter()
        .find(|e| {
            e["name"] == "thread_name" && e["args"]["name"] == "PP rank 0 | thread 100 (python) 100"
        })
        .expect("the CPU thread is renamed");

    assert_eq!(f(kernels["PP:0SEND_F0"], "ts"), 10.0);
    assert_eq!(f(kernels["PP:1RECV_F0"], "ts"), 9.0);
    assert_ne!(kernels["PP:0SEND_F0"]["pid"], kernels["PP:1RECV_F0"]["pid"]);
    let phases: Vec<&str> = send_recv
        .iter()
        .map(|e| e["ph"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(phases, ["s", "f"]);
    assert!(f(send_recv[0], "ts") < f(send_recv[1], "ts"));
    assert!(send_recv[0]["id"].is_i64());
    assert_eq!(send_recv[0]["id"], send_recv[1]["id"]);
    let flow_ids: BTreeSet<String> = original_flows.iter().map(|e| e["id"].to_string()).collect();
    assert_eq!(flow_ids.len(), 2);
    assert!(original_flows.iter().all(|e| e["id"].is_i64()));
    assert_eq!(annotations["PP:0SEND_F0"]["tid"], send_recv[0]["tid"]);
    assert_eq!(annotations["PP:1RECV_F0"]["tid"], send_recv[1]["tid"]);
    assert_ne!(kernels["PP:0SEND_F0"]["tid"], send_recv[0]["tid"]);
    let dependency_names: BTreeSet<&str> = dependency
        .iter()
        .map(|e| e["name"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(
        dependency_names,
        BTreeSet::from(["0F0 -> 0SEND_F0", "1RECV_F0 -> 1F0"])
    );
    let compute_endpoints: Vec<&&Value> = dependency
        .iter()
        .filter(|e| {
            (e["ph"] == "s"
                && ["F", "B"].contains(&e["args"]["source_operation"].as_str().unwrap_or("")))
                || (e["ph"] == "f"
                    && ["F", "B"]
                        .contains(&e["args"]["destination_operation"].as_str().unwrap_or("")))
        })
        .collect();
    assert_eq!(compute_endpoints.len(), 2);
    for e in &compute_endpoints {
        assert!(names[&lane_of(e)].ends_with("Compute 1 annotations"), "{e}");
        assert!(
            inside_annotation(&events, e, &endpoint_annotation_name(e)),
            "{e}"
        );
    }
    assert!(
        process_sort[&cpu_thread["pid"].as_i64().unwrap_or(-1)]
            < process_sort[&kernels["PP:0F0"]["pid"].as_i64().unwrap_or(-1)]
    );
    assert!(thread_names.contains("PP rank 0 | NCCL other"));
    assert!(thread_names.contains("PP rank 1 | NCCL other"));
    assert_eq!(summary.time_alignment, "baseTimeNanoseconds");
    assert_eq!(
        summary.time_offsets_us,
        BTreeMap::from([(0, 0.0), (4, 1.0)])
    );
    assert_eq!(summary.pp_send_recv_pairs, 1);
    assert_eq!(summary.pp_send_recv_unmatched, 0);
    assert_eq!(summary.pp_compute_dependency_pairs, 2);
    assert_eq!(summary.pp_compute_dependency_unmatched, 0);
    let unshard_names: BTreeSet<&str> = unshard
        .iter()
        .map(|e| e["name"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(
        unshard_names,
        BTreeSet::from(["0UNSHARD -> 0F0", "1UNSHARD -> 1F0"])
    );
    let sources: BTreeSet<&str> = unshard
        .iter()
        .filter(|e| e["ph"] == "s")
        .map(|e| names[&lane_of(e)].rsplit(" | ").next().unwrap_or(""))
        .collect();
    assert_eq!(
        sources,
        BTreeSet::from([
            "NCCL all-gather 1 annotations",
            "NCCL all-gather 2 annotations"
        ])
    );
    for e in unshard.iter().filter(|e| e["ph"] == "f") {
        assert!(names[&lane_of(e)].ends_with("Compute 1 annotations"), "{e}");
    }
    for e in &unshard {
        assert!(
            inside_annotation(&events, e, &endpoint_annotation_name(e)),
            "{e}"
        );
    }
    for name in ["0UNSHARD -> 0F0", "1UNSHARD -> 1F0"] {
        let destinations: Vec<&&Value> = unshard
            .iter()
            .filter(|e| e["name"] == name && e["ph"] == "f")
            .collect();
        assert_eq!(destinations.len(), 2);
        let places: BTreeSet<String> = destinations
            .iter()
            .map(|e| format!("{} {} {}", e["pid"], e["tid"], e["ts"]))
            .collect();
        assert_eq!(places.len(), 1);
    }
    assert_eq!(summary.pp_unshard_compute_pairs, 4);
    assert_eq!(summary.pp_unshard_compute_unmatched, 0);
}

#[test]
fn compacts_single_rank_with_local_pp_flows() {
    let mut trace = rank_trace(
        4,
        1_000_000,
        vec![
            kernel("ncclDevKernel_AllGather", 6, 1.0, 4.0, Some("PP:1UNSHARD")),
            kernel("ncclDevKernel_AllGather", 7, 2.0, 2.0, Some("PP:1UNSHARD")),
            kernel("ncclDevKernel_SendRecv", 1, 4.0, 3.0, Some("PP:1RECV_F0")),
            kernel("compute", 2, 8.0, 2.0, Some("PP:1F0")),
            kernel("ncclDevKernel_SendRecv", 1, 11.0, 1.0, Some("PP:1SEND_F0")),
        ],
    );
    trace["distributedInfo"]["pg_config"] =
        json!([{"pg_name": "recorded-group-id", "pg_desc": "mesh_pp", "ranks": [0, 4]}]);

    let (events, summary) = compact(&trace);

    let names = thread_names_by_lane(&events);
    let dependency: Vec<&Value> = events
        .iter()
        .filter(|e| cat_is(e, "pp_compute_dependency"))
        .collect();
    let unshard: Vec<&Value> = events
        .iter()
        .filter(|e| cat_is(e, "pp_unshard_dependency"))
        .collect();
    assert!(!events.iter().any(|e| cat_is(e, "pp_send_recv")));
    let dependency_names: BTreeSet<&str> = dependency
        .iter()
        .map(|e| e["name"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(
        dependency_names,
        BTreeSet::from(["1RECV_F0 -> 1F0", "1F0 -> 1SEND_F0"])
    );
    let sources: BTreeSet<&str> = unshard
        .iter()
        .filter(|e| e["ph"] == "s")
        .map(|e| names[&lane_of(e)].as_str())
        .collect();
    assert_eq!(
        sources,
        BTreeSet::from([
            "NCCL all-gather 1 annotations",
            "NCCL all-gather 2 annotations"
        ])
    );
    for e in unshard.iter().filter(|e| e["ph"] == "f") {
        assert_eq!(names[&lane_of(e)], "Compute annotations");
    }
    for e in dependency.iter().chain(&unshard) {
        assert_eq!(e["args"]["source_pp_rank"], 1);
        assert_eq!(e["args"]["destination_pp_rank"], 1);
    }
    let pp = summary
        .pp_local_flows
        .expect("single mode reports local PP flows");
    assert_eq!(pp.pp_rank, 1);
    assert_eq!(pp.pp_compute_dependency_pairs, 2);
    assert_eq!(pp.pp_compute_dependency_unmatched, 0);
    assert_eq!(pp.pp_unshard_compute_pairs, 2);
    assert_eq!(pp.pp_unshard_compute_unmatched, 0);
}

#[test]
fn converts_neighbor_kernel_annotations_to_spans() {
    let trace = plain_trace(vec![
        kernel("compute", 1, 10.0, 1.0, Some("PP:F0")),
        flow(1, 10.0),
        kernel("compute", 1, 12.0, 2.0, Some("PP:F0")),
        kernel("compute", 1, 15.0, 1.0, Some("PP:B0")),
        kernel("compute", 1, 17.0, 1.0, None),
        kernel("compute", 1, 19.0, 1.0, Some("PP:B0")),
    ]);

    let (events, summary) = compact(&trace);

    let kernels: Vec<&Value> = events.iter().filter(|e| cat_is(e, "kernel")).collect();
    let kernel_names: Vec<Option<&str>> = kernels
        .iter()
        .map(|e| e["args"].get("name").and_then(Value::as_str))
        .collect();
    assert_eq!(
        kernel_names,
        [
            Some("PP:F0"),
            Some("PP:F0"),
            Some("PP:B0"),
            None,
            Some("PP:B0")
        ]
    );
    let flow = events
        .iter()
        .find(|e| cat_is(e, "ac2g"))
        .expect("the flow is kept");
    let annotation_tids: BTreeSet<i64> = events
        .iter()
        .filter(|e| cat_is(e, "gpu_user_annotation"))
        .map(|e| e["tid"].as_i64().unwrap_or(-1))
        .collect();
    assert_eq!(kernels[0]["tid"], flow["tid"]);
    assert!(!annotation_tids.contains(&flow["tid"].as_i64().unwrap_or(-1)));
    let sort_indices: BTreeMap<i64, i64> = events
        .iter()
        .filter(|e| e["name"] == "thread_sort_index")
        .map(|e| {
            (
                e["tid"].as_i64().unwrap_or(-1),
                e["args"]["sort_index"].as_i64().unwrap_or(-1),
            )
        })
        .collect();
    let first_track = *annotation_tids.iter().next().expect("an annotation track");
    assert!(sort_indices[&first_track] < sort_indices[&kernels[0]["tid"].as_i64().unwrap_or(-1)]);
    let mut annotations: Vec<(String, f64, f64)> = events
        .iter()
        .filter(|e| cat_is(e, "gpu_user_annotation"))
        .map(|e| {
            (
                e["name"].as_str().unwrap_or("").to_string(),
                f(e, "ts"),
                f(e, "dur"),
            )
        })
        .collect();
    annotations.sort_by(|a, b| a.partial_cmp(b).expect("no NaN"));
    assert_eq!(
        annotations,
        [
            ("PP:B0".to_string(), 15.0, 1.0),
            ("PP:B0".to_string(), 19.0, 1.0),
            ("PP:F0".to_string(), 10.0, 4.0)
        ]
    );
    assert_eq!(summary.kernel_annotations_converted, 4);
    assert_eq!(summary.kernel_annotation_blocks, 3);
    assert_eq!(summary.gpu_annotations_retained, 3);
}

#[test]
fn coalesces_replay_annotations_per_collective_lane() {
    let trace = plain_trace(vec![
        kernel("ncclDevKernel_AllGather", 1, 10.0, 1.0, None),
        annotation(1, 9.0, 5.0, 1),
        kernel("ncclDevKernel_AllGather", 2, 12.0, 1.0, None),
        annotation(2, 11.0, 5.0, 1),
        kernel("ncclDevKernel_ReduceScatter", 3, 10.0, 1.0, None),
        annotation(3, 9.0, 5.0, 1),
        kernel("ncclDevKernel_ReduceScatter", 4, 12.0, 1.0, None),
        annotation(4, 11.0, 5.0, 1),
    ]);

    let (events, summary) = compact(&trace);

    let labels: BTreeMap<i64, String> = events
        .iter()
        .filter(|e| e["ph"] == "M" && e["name"] == "thread_name")
        .map(|e| {
            (
                e["tid"].as_i64().unwrap_or(-1),
                e["args"]["name"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect();
    let by_lane: BTreeMap<&str, &Value> = events
        .iter()
        .filter(|e| cat_is(e, "gpu_user_annotation"))
        .map(|e| (labels[&e["tid"].as_i64().unwrap_or(-1)].as_str(), e))
        .collect();
    assert_eq!(
        by_lane.keys().copied().collect::<BTreeSet<_>>(),
        BTreeSet::from([
            "NCCL all-gather annotations",
            "NCCL reduce-scatter annotations"
        ])
    );
    for lane in [
        "NCCL all-gather annotations",
        "NCCL reduce-scatter annotations",
    ] {
        assert_eq!(f(by_lane[lane], "ts"), 9.0);
        assert_eq!(f(by_lane[lane], "dur"), 7.0);
    }
    assert_eq!(summary.gpu_annotations_mapped, 4);
    assert_eq!(summary.gpu_annotations_coalesced, 2);
    assert_eq!(summary.gpu_annotations_retained, 2);
}

#[test]
fn preserves_distinct_and_disjoint_annotations() {
    let trace = plain_trace(vec![
        kernel("compute", 1, 10.0, 1.0, None),
        annotation(1, 9.0, 5.0, 1),
        kernel("compute", 2, 12.0, 1.0, None),
        annotation(2, 11.0, 5.0, 1),
        kernel("compute", 3, 14.0, 1.0, None),
        annotation(3, 13.0, 3.0, 2),
        kernel("compute", 4, 30.0, 1.0, None),
        annotation(4, 30.0, 1.0, 1),
    ]);

    let (events, summary) = compact(&trace);

    let mut intervals: Vec<(i64, String, String)> = events
        .iter()
        .filter(|e| cat_is(e, "gpu_user_annotation"))
        .map(|e| {
            (
                e["args"]["External id"].as_i64().unwrap_or(-1),
                e["ts"].to_string(),
                e["dur"].to_string(),
            )
        })
        .collect();
    intervals.sort();
    // The merged span is written as floats; untouched spans keep their integer text.
    let expect = [(1, "30", "1"), (1, "9.0", "7.0"), (2, "13", "3")];
    let expect: Vec<(i64, String, String)> = expect
        .iter()
        .map(|(i, t, d)| (*i, t.to_string(), d.to_string()))
        .collect();
    assert_eq!(intervals, expect);
    assert_eq!(summary.gpu_annotations_coalesced, 1);
    assert_eq!(summary.gpu_annotations_retained, 3);
}

/// The reference's worked example: rank 0 of the merge scenario, compacted alone.
#[test]
fn worked_example_single_rank_zero() {
    let trace = rank_trace(
        0,
        1_000_000,
        vec![
            thread_metadata(100, 100, "thread 100 (python) 100"),
            kernel("ncclDevKernel_AllGather", 6, 1.0, 4.0, Some("PP:0UNSHARD")),
            kernel("ncclDevKernel_AllGather", 7, 2.0, 2.0, Some("PP:0UNSHARD")),
            kernel("compute", 2, 4.0, 1.0, Some("PP:0F0")),
            kernel("compute", 3, 4.5, 4.0, Some("PP:0F0")),
            kernel("compute", 5, 6.0, 1.0, None),
            kernel("compute", 2, 8.0, 1.0, Some("PP:0F0")),
            memcpy(4, 3.5, 2.0, "PP:0F0"),
            kernel("ncclDevKernel_SendRecv", 1, 10.0, 4.0, Some("PP:0SEND_F0")),
            flow(1, 10.0),
        ],
    );
    let (events, s) = compact(&trace);
    assert_eq!(
        (s.measured_slices, s.original_streams, s.compacted_lanes),
        (8, 7, 6)
    );
    let groups = |m: &BTreeMap<String, usize>| -> Vec<(String, usize)> {
        m.iter().map(|(k, v)| (k.clone(), *v)).collect()
    };
    let expect = |pairs: &[(&str, usize)]| -> Vec<(String, usize)> {
        pairs.iter().map(|(k, v)| (k.to_string(), *v)).collect()
    };
    assert_eq!(
        groups(&s.slice_groups),
        expect(&[
            ("compute", 4),
            ("memcpy", 1),
            ("nccl_all_gather", 2),
            ("nccl_other", 1)
        ])
    );
    assert_eq!(
        groups(&s.lanes_by_group),
        expect(&[
            ("compute", 2),
            ("memcpy", 1),
            ("nccl_all_gather", 2),
            ("nccl_other", 1)
        ])
    );
    assert_eq!(s.gpu_flow_endpoints_mapped, 1);
    assert_eq!(
        (
            s.kernel_annotations_converted,
            s.kernel_annotation_blocks,
            s.gpu_annotations_retained
        ),
        (7, 7, 7)
    );
    let pp = s
        .pp_local_flows
        .expect("single mode reports local PP flows");
    assert_eq!(pp.pp_rank, 0);
    assert_eq!(pp.pp_compute_dependency_pairs, 1);
    assert_eq!(pp.pp_unshard_compute_pairs, 2);
    let lane_tids: BTreeSet<i64> = events
        .iter()
        .filter(|e| cat_is(e, "kernel") || cat_is(e, "gpu_memcpy"))
        .map(|e| e["tid"].as_i64().unwrap_or(-1))
        .collect();
    assert_eq!(lane_tids, (1100..1106).collect());
    let track_tids: BTreeSet<i64> = events
        .iter()
        .filter(|e| cat_is(e, "gpu_user_annotation"))
        .map(|e| e["tid"].as_i64().unwrap_or(-1))
        .collect();
    assert_eq!(track_tids.first(), Some(&2105));
    let mut names: Vec<String> = thread_names_by_lane(&events)
        .into_values()
        .filter(|n| !n.starts_with("thread"))
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "Compute 1",
            "Compute 1 annotations",
            "Compute 2",
            "Compute 2 annotations",
            "GPU memcpy",
            "GPU memcpy annotations",
            "NCCL all-gather 1",
            "NCCL all-gather 1 annotations",
            "NCCL all-gather 2",
            "NCCL all-gather 2 annotations",
            "NCCL other",
            "NCCL other annotations"
        ]
    );
}
