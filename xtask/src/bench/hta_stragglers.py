"""HTA 0.5.0: load a rank directory and find its potential stragglers, whole process (for /usr/bin/time)."""
import logging, sys, warnings
logging.disable(logging.WARNING)
warnings.simplefilter("ignore")
from hta.trace_analysis import TraceAnalysis

ta = TraceAnalysis(trace_dir=sys.argv[1])
try:
    print("stragglers", ta.get_potential_stragglers(num_candidates=2))
except Exception as e:
    print("stragglers failed", type(e).__name__, e)
