-- Per-rank GPU busy time (µs) as profile-model's temporal breakdown gives it (HTA's
-- `get_temporal_breakdown`: kernel_time_us - idle_time_us): the length of the union of
-- the rank's GPU activities. With two or more steps, activities launched after the last
-- step's end are left out, as HTA does. Needs the views of timeline.sql.
WITH kept AS (
  SELECT g.rank, g.s, g.e
  FROM tw_gpu g
  LEFT JOIN (SELECT rank, count(DISTINCT step) AS steps, max(e) AS last_end
             FROM tw_steps GROUP BY rank) st
    ON g.rank = st.rank
  WHERE coalesce(st.steps, 0) < 2 OR g.launch_s <= st.last_end
), ordered AS (
  SELECT rank, s, e,
         max(e) OVER (PARTITION BY rank ORDER BY s, e
                      ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS reach
  FROM kept
), islands AS (
  SELECT rank, s, e,
         sum(CASE WHEN reach IS NULL OR s > reach THEN 1 ELSE 0 END)
           OVER (PARTITION BY rank ORDER BY s, e
                ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS island
  FROM ordered
)
SELECT rank, CAST(sum(e - s) AS DOUBLE) / 1000 AS busy_us
FROM (SELECT rank, island, min(s) AS s, max(e) AS e FROM islands GROUP BY rank, island) u
GROUP BY rank
ORDER BY rank;
