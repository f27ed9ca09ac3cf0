"""Load + the profile-model analyses with HTA 0.5.0, whole process (for /usr/bin/time)."""
import logging, sys, warnings
logging.disable(logging.WARNING)
warnings.simplefilter("ignore")
from hta.trace_analysis import TraceAnalysis

d = sys.argv[1]
ta = TraceAnalysis(trace_dir=d, include_last_profiler_step=True)
ranks = sorted(ta.t.traces.keys())
ta.get_gpu_kernel_breakdown(visualize=False, include_memory_kernels=True)
ta.get_temporal_breakdown(visualize=False)
for r in ranks:
    ta.get_idle_time_breakdown(ranks=[r], visualize=False)
ta.get_comm_comp_overlap(visualize=False)
try:
    print("stragglers", ta.get_potential_stragglers(num_candidates=2))
except Exception as e:
    print("stragglers failed", type(e).__name__, e)
ta.get_cuda_kernel_launch_stats(ranks=ranks, visualize=False)
ta.get_queue_length_summary(ranks=ranks)
try:
    g, ok = ta.critical_path_analysis(rank=ranks[0], annotation="ProfilerStep", instance_id=0)
    print("critical path", ok, g.summary().to_dict() if ok else None)
except Exception as e:
    print("critical path failed", type(e).__name__, e)
