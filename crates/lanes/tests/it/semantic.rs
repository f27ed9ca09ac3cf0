//! `LaneGrouping::Semantic`: lanes by the workspace's kernel classes, so every collective,
//! whatever its library, lands in a communication lane; the original grouping is untouched.

use std::collections::BTreeMap;

use lanes::{Config, LaneGrouping};
use serde_json::{Value, json};
use trace_model::{KernelClass, classify_kernel};

use crate::support::*;

const NCCL_ALL_REDUCE: &str =
    "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)";
const CUSTOM_ALL_REDUCE: &str = "void vllm::cross_device_reduce_1stage<__nv_bfloat16, 8>(vllm::RankData*, vllm::RankSignals, vllm::Signal*, __nv_bfloat16*, int, int)";
const MSCCL: &str = "mscclKernel_Sum_bf16_Simple_false";
const NCCL_ALL_GATHER: &str = "ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)";
/// Collective or not depending on the table's version; the checks below ask the table.
const DEEP_EP_DISPATCH: &str = "void deep_ep::intranode::dispatch<8, 768, 8192>(int4*, float*, int*, long*, float*, int*, int*, int4 const*, float const*, long const*, float const*, bool const*, int const*, int, int, int, int, int, int, void**, int, int, int)";
const GEMM: &str = "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas";
const ATTENTION: &str = "void flash_fwd_kernel<Flash_fwd_kernel_traits<128, 64, 64, 4, false, false, cutlass::bfloat16_t>, false, false>(Flash_fwd_params)";
const SEND_RECV: &str = "ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)";
const ELEMENTWISE: &str = "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<c10::BFloat16>, std::array<char*, 3ul> >(int, at::native::CUDAFunctor_add<c10::BFloat16>, std::array<char*, 3ul>)";

const SEMANTIC: Config = Config {
    lanes: LaneGrouping::Semantic,
};

/// Overlapping kernels of several classes on eight streams, and a memcpy.
fn mixed_trace() -> Value {
    plain_trace(vec![
        kernel(NCCL_ALL_REDUCE, 1, 0.0, 10.0, None),
        kernel(CUSTOM_ALL_REDUCE, 2, 5.0, 10.0, None),
        kernel(MSCCL, 3, 20.0, 4.0, None),
        kernel(NCCL_ALL_GATHER, 4, 1.0, 30.0, None),
        kernel(DEEP_EP_DISPATCH, 5, 2.0, 8.0, None),
        kernel(GEMM, 6, 0.0, 12.0, None),
        kernel(GEMM, 7, 3.0, 3.0, None),
        kernel(GEMM, 6, 12.0, 5.0, None),
        kernel(ELEMENTWISE, 8, 4.0, 2.0, None),
        memcpy(9, 1.0, 2.0, "copy"),
        thread_metadata(0, 1, "stream 1"),
    ])
}

/// (kernel name, lane name) of every kernel slice, in output order.
fn lanes_of_kernels(events: &[Value]) -> Vec<(String, String)> {
    let names: BTreeMap<(i64, i64), String> = events
        .iter()
        .filter(|e| e["name"] == "thread_name")
        .map(|e| {
            let key = (
                e["pid"].as_i64().unwrap_or(-1),
                e["tid"].as_i64().unwrap_or(-1),
            );
            (key, e["args"]["name"].as_str().unwrap_or("").to_string())
        })
        .collect();
    events
        .iter()
        .filter(|e| cat_is(e, "kernel"))
        .map(|e| {
            let key = (
                e["pid"].as_i64().unwrap_or(-1),
                e["tid"].as_i64().unwrap_or(-1),
            );
            let lane = names.get(&key).cloned().unwrap_or_default();
            (e["name"].as_str().unwrap_or("").to_string(), lane)
        })
        .collect()
}

fn lane_names(events: &[Value]) -> Vec<String> {
    events
        .iter()
        .filter(|e| e["name"] == "thread_name")
        .filter_map(|e| e["args"]["name"].as_str().map(str::to_string))
        .collect()
}

#[test]
fn the_test_names_are_classified_as_assumed() {
    for name in [NCCL_ALL_REDUCE, CUSTOM_ALL_REDUCE, MSCCL, NCCL_ALL_GATHER] {
        assert!(classify_kernel(name).is_collective(), "{name}");
    }
    assert_eq!(classify_kernel(GEMM), KernelClass::Gemm);
    assert_eq!(classify_kernel(ELEMENTWISE), KernelClass::Elementwise);
    assert_eq!(classify_kernel(ATTENTION), KernelClass::Attention);
    assert!(classify_kernel(SEND_RECV).is_collective());
}

#[test]
fn every_collective_and_only_collectives_are_in_communication_lanes() {
    let (events, summary) = compact_with(&mixed_trace(), &SEMANTIC);
    let placed = lanes_of_kernels(&events);
    assert_eq!(placed.len(), 9);
    for (name, lane) in &placed {
        assert!(!lane.is_empty(), "{name} has a named lane");
        assert_eq!(
            lane.starts_with("Communication"),
            classify_kernel(name).is_collective(),
            "{name} is in lane {lane}"
        );
    }
    let lane = |name: &str| -> Vec<&str> {
        let mut lanes: Vec<&str> = placed
            .iter()
            .filter(|(n, _)| n == name)
            .map(|(_, l)| l.as_str())
            .collect();
        lanes.sort_unstable();
        lanes
    };
    // The NCCL and the custom all-reduce overlap: two all-reduce lanes, one each.
    assert_eq!(lane(NCCL_ALL_REDUCE), ["Communication all-reduce 1"]);
    assert_eq!(lane(CUSTOM_ALL_REDUCE), ["Communication all-reduce 2"]);
    assert_eq!(lane(NCCL_ALL_GATHER), ["Communication all-gather"]);
    assert!(lane(MSCCL)[0].starts_with("Communication "), "{placed:?}");
    assert_eq!(lane(GEMM), ["GEMM 1", "GEMM 1", "GEMM 2"]);
    assert_eq!(lane(ELEMENTWISE), ["Elementwise"]);

    let names = lane_names(&events);
    assert!(names.contains(&"GPU memcpy".to_string()), "{names:?}");
    assert!(
        !names
            .iter()
            .any(|n| n.starts_with("Compute") || n.starts_with("NCCL")),
        "no original group is left: {names:?}"
    );
    assert_eq!(summary.slice_groups["communication_all_reduce"], 2);
    assert_eq!(summary.lanes_by_group["communication_all_reduce"], 2);
    assert_eq!(summary.slice_groups["gemm"], 3);
    assert_eq!(summary.lanes_by_group["gemm"], 2);
    assert_eq!(summary.slice_groups["memcpy"], 1);
    assert_eq!(summary.measured_slices, 10);
}

#[test]
fn the_original_grouping_keeps_its_name_rules() {
    let (events, summary) = compact(&mixed_trace());
    let placed = lanes_of_kernels(&events);
    let lane = |name: &str| {
        placed
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, l)| l.clone())
            .unwrap_or_default()
    };
    assert_eq!(lane(NCCL_ALL_REDUCE), "NCCL all-reduce");
    assert_eq!(lane(NCCL_ALL_GATHER), "NCCL all-gather");
    // The original groups by "nccl" in the name: other libraries' collectives are compute.
    assert!(lane(CUSTOM_ALL_REDUCE).starts_with("Compute"));
    assert!(lane(MSCCL).starts_with("Compute"));
    assert!(lane(GEMM).starts_with("Compute"));
    let keys: Vec<&str> = summary.slice_groups.keys().map(String::as_str).collect();
    assert_eq!(
        keys,
        ["compute", "memcpy", "nccl_all_gather", "nccl_all_reduce"]
    );
}

#[test]
fn only_the_semantic_output_says_how_it_grouped() {
    let provenance = |config: &Config| -> Value {
        let trace = read(&mixed_trace(), "mixed.json");
        let res = lanes::compact_trace(trace, config).expect("compaction succeeds");
        let member = res
            .trace
            .member("cuda_graph_stream_compaction")
            .expect("the compaction says what it did");
        serde_json::from_str(member.get()).expect("valid JSON")
    };
    let original = provenance(&Config::default());
    assert!(original.get("lane_groups").is_none(), "{original}");
    assert_eq!(
        original["algorithm"],
        json!("semantic interval partitioning")
    );
    let semantic = provenance(&SEMANTIC);
    assert!(
        semantic["lane_groups"]
            .as_str()
            .is_some_and(|s| s.contains("classify_kernel")),
        "{semantic}"
    );
}

/// A rank-local pipeline on one stage: UNSHARD all-gather; RECV_F0, F0 (a GEMM and an
/// elementwise kernel on two streams), SEND_F0; RECV_F1, F1 (attention only), SEND_F1.
fn pp_trace() -> Value {
    rank_trace(
        4,
        0,
        vec![
            kernel(NCCL_ALL_GATHER, 2, 0.0, 5.0, Some("PP:1UNSHARD")),
            kernel(SEND_RECV, 3, 6.0, 2.0, Some("PP:1RECV_F0")),
            kernel(GEMM, 7, 9.0, 4.0, Some("PP:1F0")),
            kernel(ELEMENTWISE, 8, 13.0, 1.0, Some("PP:1F0")),
            kernel(SEND_RECV, 3, 15.0, 2.0, Some("PP:1SEND_F0")),
            kernel(SEND_RECV, 3, 18.0, 2.0, Some("PP:1RECV_F1")),
            kernel(ATTENTION, 7, 21.0, 3.0, Some("PP:1F1")),
            kernel(SEND_RECV, 3, 25.0, 2.0, Some("PP:1SEND_F1")),
        ],
    )
}

/// The lane name of the `f` end of the flow named `flow`.
fn destination_lane(events: &[Value], flow: &str) -> String {
    let names: BTreeMap<(i64, i64), String> = events
        .iter()
        .filter(|e| e["name"] == "thread_name")
        .map(|e| {
            let key = (
                e["pid"].as_i64().unwrap_or(-1),
                e["tid"].as_i64().unwrap_or(-1),
            );
            (key, e["args"]["name"].as_str().unwrap_or("").to_string())
        })
        .collect();
    events
        .iter()
        .find(|e| e["name"] == flow && e["ph"] == "f")
        .and_then(|e| names.get(&(e["pid"].as_i64()?, e["tid"].as_i64()?)))
        .cloned()
        .unwrap_or_else(|| format!("no flow {flow}"))
}

#[test]
fn pp_arrows_find_their_blocks_in_both_groupings() {
    for config in [Config::default(), SEMANTIC] {
        let (events, summary) = compact_with(&pp_trace(), &config);
        let flows = summary
            .pp_local_flows
            .expect("single-trace mode adds PP arrows");
        assert_eq!(
            (
                flows.pp_compute_dependency_pairs,
                flows.pp_compute_dependency_unmatched
            ),
            (4, 0),
            "{config:?}"
        );
        assert_eq!(
            (
                flows.pp_unshard_compute_pairs,
                flows.pp_unshard_compute_unmatched
            ),
            (1, 0),
            "{config:?}"
        );
        let names = lane_names(&events);
        let (unshard_lane, f0_lane, f1_lane) = match config.lanes {
            LaneGrouping::Original => (
                "NCCL all-gather annotations",
                "Compute annotations",
                "Compute annotations",
            ),
            // Every compute class's first lane is a main compute lane.
            LaneGrouping::Semantic => (
                "Communication all-gather annotations",
                "GEMM annotations",
                "Attention annotations",
            ),
            other => panic!("no expectation for {other:?} yet"),
        };
        assert!(
            names.iter().any(|n| n == unshard_lane),
            "{config:?}: {names:?}"
        );
        assert_eq!(destination_lane(&events, "1RECV_F0 -> 1F0"), f0_lane);
        assert_eq!(destination_lane(&events, "1RECV_F1 -> 1F1"), f1_lane);
        assert_eq!(destination_lane(&events, "1UNSHARD -> 1F0"), f0_lane);
    }
}
