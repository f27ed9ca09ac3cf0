"""Type stubs of ``tracewise.hta``, Holistic Trace Analysis' ``TraceAnalysis`` as a drop-in."""

import os
from typing import Any, Dict, List, Optional, Tuple, Union

import pandas as pd

class CriticalPathSummary:
    length_us: float
    def summary(self) -> pd.Series: ...

class TraceAnalysis:
    trace_dir: str
    def __init__(
        self,
        trace_dir: Optional[Union[str, "os.PathLike[str]"]] = None,
        trace_files: Optional[Dict[int, str]] = None,
        include_last_profiler_step: Optional[bool] = False,
        **kwargs: Any,
    ) -> None: ...
    def get_temporal_breakdown(self, visualize: bool = True) -> pd.DataFrame: ...
    def get_comm_comp_overlap(self, visualize: bool = True) -> pd.DataFrame: ...
    def get_gpu_kernel_breakdown(
        self,
        visualize: bool = True,
        duration_ratio: float = 0.8,
        num_kernels: int = 10,
        include_memory_kernels: bool = True,
        image_renderer: str = "",
    ) -> Tuple[pd.DataFrame, pd.DataFrame]: ...
    def get_idle_time_breakdown(
        self,
        ranks: Optional[List[int]] = None,
        streams: Optional[List[int]] = None,
        visualize: bool = True,
        visualize_pctg: bool = True,
        show_idle_interval_stats: bool = False,
        consecutive_kernel_delay: int = 30,
    ) -> Tuple[pd.DataFrame, Optional[pd.DataFrame]]: ...
    def get_cuda_kernel_launch_stats(
        self,
        ranks: Optional[List[int]] = None,
        runtime_cutoff: int = 50,
        launch_delay_cutoff: int = 100,
        include_memory_events: bool = True,
        visualize: bool = True,
    ) -> Dict[int, pd.DataFrame]: ...
    def get_queue_length_summary(self, ranks: Optional[List[int]] = None) -> Optional[pd.DataFrame]: ...
    def get_profiler_steps(self) -> List[int]: ...
    def get_potential_stragglers(
        self,
        profiler_steps: Optional[List[int]] = None,
        num_candidates: int = 2,
        visualize: bool = False,
        **kwargs: Any,
    ) -> List[int]: ...
    def critical_path_analysis(
        self,
        rank: int,
        annotation: str,
        instance_id: Union[Optional[int], Tuple[int, int]],
    ) -> Tuple[CriticalPathSummary, bool]: ...
