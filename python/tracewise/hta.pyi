"""Type stubs of ``tracewise.hta``, Holistic Trace Analysis' ``TraceAnalysis``, ``TraceDiff`` and
``LabeledTrace`` as a drop-in (the signatures of ``hta.py``)."""

from enum import Enum, Flag
from typing import Any, Callable, Dict, List, Optional, Set, Tuple, Union

import pandas as pd

class TimeSeriesTypes(Flag):
    QUEUE_LENGTH: TimeSeriesTypes
    MEMCPY_BANDWIDTH: TimeSeriesTypes

class DeviceType(Enum):
    CPU: DeviceType
    GPU: DeviceType
    ALL: DeviceType

class CPNode:
    idx: int
    ev_idx: int
    ts: float
    is_start: bool
    is_blocking: bool

class CPEdgeType(Enum):
    OPERATOR_KERNEL: CPEdgeType
    DEPENDENCY: CPEdgeType
    KERNEL_LAUNCH_DELAY: CPEdgeType
    KERNEL_KERNEL_DELAY: CPEdgeType
    SYNC_DEPENDENCY: CPEdgeType

class CPEdge:
    begin: int
    end: int
    weight: float
    type: CPEdgeType

class CPGraph:
    rank: int
    node_list: List[CPNode]
    critical_path_nodes: List[int]
    critical_path_events_set: Set[int]
    critical_path_edges_set: Set[CPEdge]
    event_to_start_node_map: Dict[int, int]
    event_to_end_node_map: Dict[int, int]
    edge_to_event_map: Dict[Tuple[int, int], int]
    length_us: float
    def get_nodes_for_event(self, ev_id: int) -> Tuple[Optional[CPNode], Optional[CPNode]]: ...
    def get_events_for_edge(self, edge: CPEdge) -> Tuple[int, int]: ...
    def get_event_attribution_for_edge(self, edge: CPEdge) -> Optional[int]: ...
    def get_edges_attributed_to_event(self, ev_idx: int) -> List[CPEdge]: ...
    def edge_objects(self) -> List[CPEdge]: ...
    def critical_path(self) -> bool: ...
    def get_critical_path_breakdown(self) -> Optional[pd.DataFrame]: ...
    def summary(self) -> pd.Series: ...
    def show_critical_path(self) -> None: ...
    def save(self, out_dir: str) -> str: ...
    @property
    def trace_df(self) -> pd.DataFrame: ...
    @property
    def full_trace_df(self) -> pd.DataFrame: ...
    @property
    def symbol_table(self) -> Any: ...
    @property
    def sym_table(self) -> List[str]: ...

CriticalPathSummary = CPGraph

class TraceAnalysis:
    trace_dir: str
    include_last_profiler_step: bool
    def __init__(
        self,
        trace_files: Optional[Union[Dict[int, str], List[str]]] = None,
        trace_dir: str = '/tmp/trace',
        include_last_profiler_step: Optional[bool] = False,
    ) -> None: ...
    def critical_path_analysis(
        self,
        rank: int,
        annotation: str,
        instance_id: Union[Optional[int], Tuple[int, int]],
    ) -> Tuple[CPGraph, bool]: ...
    def generate_trace_with_counters(
        self,
        time_series: Optional[TimeSeriesTypes] = None,
        ranks: Optional[List[int]] = None,
        output_suffix: str = '_with_counters',
    ) -> None: ...
    def get_aten_op_kernels_and_delay(
        self,
        ranks: Optional[List[int]] = None,
        sort_by: Optional[List[str]] = None,
    ) -> Dict[int, pd.DataFrame]: ...
    def get_comm_comp_overlap(
        self,
        visualize: bool = True,
    ) -> pd.DataFrame: ...
    def get_cuda_kernel_launch_stats(
        self,
        ranks: Optional[List[int]] = None,
        runtime_cutoff: int = 50,
        launch_delay_cutoff: int = 100,
        include_memory_events: bool = True,
        visualize: bool = True,
    ) -> Dict[int, pd.DataFrame]: ...
    def get_cupti_counter_data_with_operators(
        self,
        ranks: Optional[List[int]] = None,
    ) -> List[pd.DataFrame]: ...
    def get_frequent_cuda_kernel_sequences(
        self,
        operator_name: str,
        output_dir: str,
        min_pattern_len: int = 3,
        rank: int = 0,
        top_k: int = 5,
        visualize: bool = False,
        compress_other_kernels: bool = True,
    ) -> pd.DataFrame: ...
    def get_gpu_kernel_breakdown(
        self,
        visualize: bool = True,
        duration_ratio: float = 0.8,
        num_kernels: int = 10,
        include_memory_kernels: bool = True,
        image_renderer: str = '',
    ) -> Tuple[pd.DataFrame, pd.DataFrame]: ...
    def get_gpu_kernels_with_user_annotations(
        self,
        rank: int,
        expand_names: bool = True,
        shortern_names: bool = True,
    ) -> Optional[pd.DataFrame]: ...
    def get_gpu_user_annotation_breakdown(
        self,
        use_gpu_annotation: bool = True,
        visualize: bool = True,
        duration_ratio: float = 0.8,
        num_kernels: int = 1000,
        allowlist_patterns: Optional[List[str]] = None,
        image_renderer: Optional[str] = None,
    ) -> Optional[pd.DataFrame]: ...
    def get_idle_time_breakdown(
        self,
        ranks: Optional[List[int]] = None,
        streams: Optional[List[int]] = None,
        visualize: bool = True,
        visualize_pctg: bool = True,
        show_idle_interval_stats: bool = False,
        consecutive_kernel_delay: int = 30,
    ) -> Tuple[pd.DataFrame, Optional[pd.DataFrame]]: ...
    def get_memory_bw_summary(
        self,
        ranks: Optional[List[int]] = None,
    ) -> Optional[pd.DataFrame]: ...
    def get_memory_bw_time_series(
        self,
        ranks: Optional[List[int]] = None,
    ) -> Dict[int, pd.DataFrame]: ...
    def get_potential_stragglers(
        self,
        profiler_steps: Optional[List[int]] = None,
        num_candidates: int = 2,
        visualize: bool = False,
        straggler_identification_impl: Callable[..., pd.Series] = ...,
    ) -> List[int]: ...
    def get_profiler_steps(
        self,
    ) -> List[int]: ...
    def get_queue_length_summary(
        self,
        ranks: Optional[List[int]] = None,
    ) -> Optional[pd.DataFrame]: ...
    def get_queue_length_summary_from_time_series(
        self,
        queue_length_dict: Dict[int, pd.DataFrame],
    ) -> Optional[pd.DataFrame]: ...
    def get_queue_length_time_series(
        self,
        ranks: Optional[List[int]] = None,
    ) -> Dict[int, pd.DataFrame]: ...
    def get_temporal_breakdown(
        self,
        visualize: bool = True,
    ) -> pd.DataFrame: ...
    def get_time_spent_blocked_on_full_queue(
        self,
        queue_length_dict: Dict[int, pd.DataFrame],
        max_queue_length: int = 1024,
    ) -> Optional[pd.DataFrame]: ...
    def overlay_critical_path_analysis(
        self,
        rank: int,
        critical_path_graph: CPGraph,
        output_dir: str,
        only_show_critical_events: bool = True,
        show_all_edges: bool = False,
    ) -> str: ...

class LabeledTrace:
    def __init__(
        self,
        label: Optional[str] = None,
        t: Any = None,
        trace_dir: Optional[str] = None,
    ) -> None: ...
    def extract_ops(
        self,
        rank: Union[int, List[int], None] = None,
        iteration: Union[int, List[int], None] = None,
        device_type: DeviceType = DeviceType.ALL,
    ) -> pd.DataFrame: ...
    def get_ops_summary(
        self,
        ops: pd.DataFrame,
    ) -> pd.DataFrame: ...
    def get_trace(
        self,
        rank: int,
    ) -> pd.DataFrame: ...
    def iterations(
        self,
    ) -> List[int]: ...
    def ranks(
        self,
    ) -> List[int]: ...

class TraceDiff:
    @classmethod
    def compare_traces(
        cls,
        control: Union[LabeledTrace, str],
        test: Union[LabeledTrace, str],
        control_rank: Union[int, List[int], None] = None,
        test_rank: Union[int, List[int], None] = None,
        control_iteration: Union[int, List[int], None] = None,
        test_iteration: Union[int, List[int], None] = None,
        device_type: DeviceType = DeviceType.ALL,
        use_short_name: bool = False,
    ) -> pd.DataFrame: ...
    @classmethod
    def ops_diff(
        cls,
        control: Union[LabeledTrace, str],
        test: Union[LabeledTrace, str],
        control_rank: Union[int, List[int], None] = None,
        test_rank: Union[int, List[int], None] = None,
        control_iteration: Union[int, List[int], None] = None,
        test_iteration: Union[int, List[int], None] = None,
        device_type: DeviceType = DeviceType.ALL,
    ) -> Dict[str, List[str]]: ...
    @classmethod
    def visualize_counts_diff(
        cls,
        df: pd.DataFrame,
        show_image: bool = True,
        export_image_path: Optional[str] = None,
    ) -> pd.DataFrame: ...
    @classmethod
    def visualize_duration_diff(
        cls,
        df: pd.DataFrame,
        show_image: bool = True,
        export_image_path: Optional[str] = None,
    ) -> pd.DataFrame: ...
