-- Potential stragglers as profile-model's `--analysis stragglers` gives them (HTA's
-- `get_potential_stragglers`, two candidates): NCCL kernels launched inside a step that
-- last at least 1 % of the mean step time; the last one per (rank, stream, step, kernel);
-- the (stream, kernel) whose duration, normalised by the mean step time, varies most
-- across ranks (sample standard deviation per step, averaged over the steps); then the
-- ranks ordered by the normalised start of that kernel, latest first. One row per
-- (rank, step) of that kernel; the first two rows name the stragglers. The ranks'
-- timestamps are compared as they are (one clock, as HTA assumes). Needs timeline.sql.
WITH bounds AS (
  SELECT min(s) AS t_min, max(e) AS t_max
  FROM (SELECT h.s, h.e FROM tw_host h
        JOIN tw_steps st ON st.rank = h.rank AND st.s <= h.s AND h.s <= st.e
        UNION ALL
        SELECT s, e FROM tw_gpu WHERE step IS NOT NULL) x
), scale AS (
  SELECT t_min, CAST(t_max - t_min AS DOUBLE) / (SELECT count(DISTINCT step) FROM tw_steps)
           AS mean_step
  FROM bounds
), nccl AS (
  SELECT g.rank, g.stream, g.step, g.name, g.s, g.e - g.s AS dur,
         row_number() OVER (PARTITION BY g.rank, g.stream, g.step, g.name
                            ORDER BY g.s DESC, g.e DESC, g.event_index DESC) AS n
  FROM tw_gpu g CROSS JOIN scale
  WHERE g.stream > 0 AND g.step > 0 AND g.name LIKE 'ncclKernel%'
    AND g.e - g.s >= scale.mean_step * 0.01
), last_kernel AS (
  SELECT rank, stream, step, name, s, dur FROM nccl WHERE n = 1
), spread AS (
  SELECT stream, name, avg(sd) AS mean_sd
  FROM (SELECT l.stream, l.name, l.step, stddev_samp(l.dur / scale.mean_step) AS sd
        FROM last_kernel l CROSS JOIN scale
        GROUP BY l.stream, l.name, l.step
        HAVING count(*) >= 2) per_step
  GROUP BY stream, name
), chosen AS (
  SELECT stream, name FROM spread ORDER BY mean_sd DESC, stream, name LIMIT 1
)
SELECT l.rank, l.step, l.stream, l.name AS kernel,
       (l.s - scale.t_min) / scale.mean_step AS metric
FROM last_kernel l
JOIN chosen c ON l.stream = c.stream AND l.name = c.name
CROSS JOIN scale
ORDER BY metric DESC, l.rank;
