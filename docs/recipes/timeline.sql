-- The timeline of every rank as Holistic Trace Analysis 0.5.0 sees it, over a
-- `profile-model --export` directory registered as the table `events` (see
-- docs/export-recipes.md). The same text runs in DuckDB and in Spark SQL.
--
-- tw_rounded: a rank with any timestamp off a whole microsecond has every start rounded
--   up and every end down to whole microseconds (HTA's parser does that).
-- tw_host: host events (ph X, not GPU activities, flows or syncs) in nanoseconds.
-- tw_steps: one row per ProfilerStep#N (rank, step, start, end).
-- tw_gpu: GPU activities (kernels, copies, sets with a stream) with the start of the
--   runtime call that launched them (matched by correlation id), and the step that call
--   falls in (the earliest-starting step that holds it).

CREATE OR REPLACE TEMPORARY VIEW tw_rounded AS
SELECT ev.*,
       CASE WHEN f.fractional = 1 THEN CAST(ceil(ev.ts_ns / 1000.0) AS BIGINT) * 1000
            ELSE ev.ts_ns END AS s,
       CASE WHEN f.fractional = 1
            THEN CAST(floor((ev.ts_ns + ev.dur_ns) / 1000.0) AS BIGINT) * 1000
            ELSE ev.ts_ns + ev.dur_ns END AS e
FROM events ev
JOIN (SELECT rank, max(CASE WHEN ts_ns % 1000 <> 0 THEN 1 ELSE 0 END) AS fractional
      FROM events GROUP BY rank) f
  ON ev.rank = f.rank
WHERE ev.ph = 'X' AND ev.ts_ns IS NOT NULL AND ev.dur_ns IS NOT NULL;

CREATE OR REPLACE TEMPORARY VIEW tw_host AS
SELECT rank, name, cat, s, e, args_correlation AS correlation, event_index
FROM tw_rounded
WHERE coalesce(cat, '') NOT IN ('kernel', 'Kernel', 'gpu_memcpy', 'Memcpy', 'gpu_memset',
                                'Memset', 'cuda_sync', 'ac2g')
  AND coalesce(substring(cat, 1, 4), '') <> 'gpu_';

CREATE OR REPLACE TEMPORARY VIEW tw_steps AS
SELECT DISTINCT rank, try_cast(trim(substring(name, 14)) AS BIGINT) AS step, s, e
FROM tw_host
WHERE cat IN ('user_annotation', 'cpu_op', 'Operator')
  AND name LIKE 'ProfilerStep#%'
  AND try_cast(trim(substring(name, 14)) AS BIGINT) IS NOT NULL;

CREATE OR REPLACE TEMPORARY VIEW tw_gpu AS
WITH launch AS (
  SELECT rank, correlation, s AS launch_s
  FROM (SELECT rank, correlation, s,
               row_number() OVER (PARTITION BY rank, correlation ORDER BY event_index) AS n
        FROM tw_host
        WHERE cat IN ('cuda_runtime', 'Runtime', 'cuda_driver') AND correlation IS NOT NULL) x
  WHERE n = 1
), gpu AS (
  SELECT g.rank, g.name, g.cat, g.args_stream AS stream, g.s, g.e, g.event_index, l.launch_s
  FROM tw_rounded g
  LEFT JOIN launch l ON g.rank = l.rank AND g.args_correlation = l.correlation
  WHERE g.cat IN ('kernel', 'Kernel', 'gpu_memcpy', 'Memcpy', 'gpu_memset', 'Memset')
    AND g.args_stream IS NOT NULL
), stepped AS (
  SELECT gpu.*, st.step,
         row_number() OVER (PARTITION BY gpu.rank, gpu.event_index ORDER BY st.s, st.step) AS n
  FROM gpu
  LEFT JOIN tw_steps st
    ON gpu.rank = st.rank AND st.s <= gpu.launch_s AND gpu.launch_s <= st.e
)
SELECT rank, name, cat, stream, s, e, event_index, launch_s, step FROM stepped WHERE n = 1;
