{"traceEvents": []}
