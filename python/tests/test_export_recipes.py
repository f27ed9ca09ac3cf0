"""The recipes of docs/export-recipes.md, run on ``profile-model --export`` of
param-dlrm-8rank: DuckDB always, Spark when pyspark and a Java runtime are present
(SKIPPED with the reason otherwise). Each must give profile-model's own per-rank busy time
(HTA's temporal breakdown: ``kernel_time_us - idle_us``) and its straggler metric, and
the export's ``_summary`` table must hold the same busy time."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Dict, List, Tuple

import pytest

from conftest import REPO

RECIPES = REPO / "docs" / "recipes"


def statements(name: str) -> List[str]:
    """The statements of a recipe file, comment lines left out."""
    text = "\n".join(
        line
        for line in (RECIPES / name).read_text().splitlines()
        if not line.lstrip().startswith("--")
    )
    return [s for s in text.split(";") if s.strip()]


def profile_model() -> Path:
    """The profile-model binary the workspace's tests built (``TRACEWISE_PROFILE_MODEL``
    names another)."""
    named = os.environ.get("TRACEWISE_PROFILE_MODEL")
    if named:
        return Path(named)
    target = Path(os.environ.get("CARGO_TARGET_DIR", REPO / "target"))
    if not target.is_absolute():
        target = REPO / target
    path = target / "debug" / "profile-model"
    if not path.is_file():
        pytest.fail(
            f"{path} is missing: build it (cargo build -p profile-model) or name one with "
            "TRACEWISE_PROFILE_MODEL"
        )
    return path


@pytest.fixture(scope="module")
def exported(traces: Path, tmp_path_factory) -> Tuple[Path, dict]:
    """(export directory, profile-model's JSON) of param-dlrm-8rank, from one run."""
    out = tmp_path_factory.mktemp("export") / "dlrm"
    run = subprocess.run(
        [
            str(profile_model()),
            str(traces / "pytorch" / "param-dlrm-8rank"),
            "--analysis",
            "temporal",
            "--analysis",
            "stragglers",
            "--json",
            "--export",
            str(out),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    return out, json.loads(run.stdout)


def busy_by_rank(report: dict) -> Dict[int, float]:
    return {t["rank"]: t["kernel_time_us"] - t["idle_us"] for t in report["temporal"]}


def straggler_rows(report: dict) -> List[Tuple[int, float]]:
    return [(rank, metric) for rank, metric in report["stragglers"]["metric"]]


def check(busy: Dict[int, float], rows: List[Tuple[int, float]], report: dict) -> None:
    want = busy_by_rank(report)
    assert len(want) == 8
    assert busy.keys() == want.keys()
    for rank, value in want.items():
        assert busy[rank] == pytest.approx(value, rel=1e-9, abs=1e-9), rank
    want_rows = straggler_rows(report)
    assert [r for r, _ in rows] == [r for r, _ in want_rows]
    for (_, got), (_, value) in zip(rows, want_rows):
        assert got == pytest.approx(value, rel=1e-9)
    # profile-model names HTA's candidates: each step's top two by the metric, counted per
    # rank, ties in HTA's order (a pandas sort). On this one-step capture they are the
    # recipe's top two, not necessarily in the metric's order.
    assert sorted(r for r, _ in rows[:2]) == sorted(report["stragglers"]["ranks"])


def test_the_export_has_one_summary_row_per_rank_with_profile_models_busy_time(exported):
    duckdb = pytest.importorskip("duckdb", reason="SKIPPED: duckdb is not installed")
    out, report = exported
    rows = duckdb.sql(
        f"SELECT rank, busy_time_us, kernel_time_us, idle_time_us, file "
        f"FROM read_parquet('{out}/_summary/rank=*/*.parquet', hive_partitioning = true) "
        f"ORDER BY rank"
    ).fetchall()
    want = busy_by_rank(report)
    assert [r[0] for r in rows] == sorted(want)
    for rank, busy, span, idle, file in rows:
        assert busy == pytest.approx(want[rank], rel=1e-9)
        assert busy == pytest.approx(span - idle, rel=1e-9)
        assert file.endswith(".pt.trace.json")


def test_duckdb_recipes_equal_profile_models_busy_time_and_stragglers(exported):
    duckdb = pytest.importorskip("duckdb", reason="SKIPPED: duckdb is not installed")
    out, report = exported
    con = duckdb.connect()
    con.execute(
        f"CREATE VIEW events AS SELECT * FROM read_parquet('{out}/rank=*/*.parquet', "
        "hive_partitioning = true, union_by_name = true)"
    )
    # As docs/export-recipes.md runs it: the whole file in one call.
    con.execute((RECIPES / "timeline.sql").read_text())
    (busy_sql,) = statements("busy.sql")
    (stragglers_sql,) = statements("stragglers.sql")
    busy = dict(con.execute(busy_sql).fetchall())
    rows = [(r[0], r[4]) for r in con.execute(stragglers_sql).fetchall()]
    # Closed before the checks: a failing check must not leave duckdb's threads alive for
    # the later tests, whose HTA forks worker processes.
    con.close()
    check(busy, rows, report)


def test_spark_recipes_equal_profile_models_busy_time_and_stragglers(exported):
    pyspark = pytest.importorskip(
        "pyspark", reason="SKIPPED: pyspark is not installed; the Spark recipe did not run"
    )
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        pytest.skip("SKIPPED: no Java runtime (java on PATH or JAVA_HOME); the Spark recipe did not run")
    from pyspark.sql import SparkSession

    out, report = exported
    spark = (
        SparkSession.builder.master("local[2]")
        .appName("tracewise-export-recipes")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .getOrCreate()
    )
    try:
        spark.sparkContext.setLogLevel("ERROR")
        spark.read.option("mergeSchema", "true").parquet(str(out)).createOrReplaceTempView(
            "events"
        )
        for statement in statements("timeline.sql"):
            spark.sql(statement)
        (busy_sql,) = statements("busy.sql")
        (stragglers_sql,) = statements("stragglers.sql")
        busy = {r["rank"]: r["busy_us"] for r in spark.sql(busy_sql).collect()}
        rows = [(r["rank"], r["metric"]) for r in spark.sql(stragglers_sql).collect()]
    finally:
        spark.stop()
    assert pyspark.__version__
    check(busy, rows, report)
