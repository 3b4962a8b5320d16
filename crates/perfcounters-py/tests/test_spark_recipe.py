"""The Spark recipe of docs/columnar.md, run by a real pyspark in local mode: a directory of the
shared .blg and CSV logs read as ``binaryFile``, converted with ``mapInArrow``, written
``partitionBy("machine", "date")``; DuckDB reads that dataset and gets exactly the rows of
``relog -o DIR/``; the alerts equal ``perfcounters analyze`` of each log.

Too heavy for .ci/run (a JVM and a local Spark): it runs only when ``PERFCOUNTERS_SPARK_RECIPE=1``
and pyspark (with Java 17) is installed, as ``scripts/spark-recipe.sh`` runs it. With
``PERFCOUNTERS_SPARK_LOGS=DIR`` it converts the logs of DIR too and prints the throughput of
Spark and of relog on them (docs/benchmarks.md)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Iterator, List

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import perfcounters
from conftest import data_file
from test_read_log import LOGS
from test_spark_functions import DATA_COLUMNS

if os.environ.get("PERFCOUNTERS_SPARK_RECIPE") != "1":
    pytest.skip("the Spark recipe runs with PERFCOUNTERS_SPARK_RECIPE=1 (scripts/spark-recipe.sh)", allow_module_level=True)
pyspark_sql = pytest.importorskip("pyspark.sql")
duckdb = pytest.importorskip("duckdb")

CORES = 2


@pytest.fixture(scope="module")
def spark() -> Iterator[Any]:
    # The workers run this interpreter, where the package is installed.
    os.environ["PYSPARK_PYTHON"] = sys.executable
    session = (
        pyspark_sql.SparkSession.builder.master(f"local[{CORES}]")
        .appName("perfcounters-recipe")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.parquet.outputTimestampType", "TIMESTAMP_MICROS")
        .config("spark.ui.enabled", "false")
        .getOrCreate()
    )
    yield session
    session.stop()


def recipe(spark: Any, logs: str, out: Path) -> None:
    """The recipe as docs/columnar.md gives it."""
    from perfcounters import spark as pcs

    files = spark.read.format("binaryFile").load(logs)
    long = files.mapInArrow(pcs.to_long_form, pcs.LONG_FORM_SCHEMA).persist()
    long.where("error IS NOT NULL").select("path", "error").write.mode("overwrite").parquet(f"{out}/errors")
    (
        long.where("error IS NULL")
        .drop("path", "error")
        .write.partitionBy("machine", "date")
        .mode("overwrite")
        .parquet(f"{out}/fleet")
    )
    long.unpersist()
    alerts = files.mapInArrow(pcs.analyze, pcs.ALERTS_SCHEMA)
    alerts.write.mode("overwrite").parquet(f"{out}/alerts")


def test_recipe_on_the_shared_logs(spark: Any, cli: Path, tmp_path: Path) -> None:
    logs_dir = tmp_path / "perflogs"
    logs_dir.mkdir()
    logs = [data_file(log) for log in LOGS]
    for log in logs:
        shutil.copy(log, logs_dir / log.name)
    (logs_dir / "damaged.blg").write_bytes(logs[0].read_bytes()[:100_000])
    (logs_dir / "junk.csv").write_bytes(b"Time,Value\r\n1,2\r\n")
    out = tmp_path / "out"
    recipe(spark, str(logs_dir), out)

    relog = tmp_path / "relog"
    for log in logs:
        subprocess.run([str(cli), "relog", str(log), "-o", f"{relog}/"], check=True, capture_output=True)
    con = duckdb.connect()
    columns = ", ".join(f'"{c}"' for c in DATA_COLUMNS)
    dataset = "hive_partitioning = true, union_by_name = true"
    con.execute(f"CREATE VIEW relog AS SELECT {columns} FROM read_parquet('{relog}/**/*.parquet', {dataset})")
    con.execute(f"CREATE VIEW spark AS SELECT {columns} FROM read_parquet('{out}/fleet/**/*.parquet', {dataset})")
    assert con.execute("SELECT count(*) FROM relog").fetchone() == (131_788,)
    # Every row of relog's dataset is in Spark's, which also holds the rows of the damaged copy of
    # tx-win8 (its first 64 samples of 10 counters): rows of relog's dataset once more.
    assert con.execute("SELECT count(*) FROM spark").fetchone() == (131_788 + 640,)
    assert con.execute("SELECT count(*) FROM (SELECT * FROM relog EXCEPT ALL SELECT * FROM spark)").fetchone() == (0,)
    extra = "SELECT * FROM spark EXCEPT ALL SELECT * FROM relog"
    assert con.execute(f"SELECT count(*) FROM ({extra})").fetchone() == (640,)
    assert con.execute(f"SELECT count(*) FROM ({extra} EXCEPT SELECT * FROM relog)").fetchone() == (0,)
    # The partitions are relog's.
    def parts(d: Path) -> List[str]:
        return sorted({p.parent.relative_to(d).as_posix() for p in d.rglob("*.parquet")})

    assert parts(out / "fleet") == parts(relog)

    errors = pq.read_table(out / "errors").to_pylist()
    by_file = sorted((e["path"].rsplit("/", 1)[1], e["error"].split(": ", 1)[1]) for e in errors)
    assert by_file == [
        ("damaged.blg", "EVENT_TRACE_HEADER at offset 99912: size 520 exceeds the 88 bytes left by the "
         "enclosing structure; the log is read up to there (64 samples)"),
        ("damaged.blg", "offset 65536: the file ends 34464 bytes into a buffer of 65536 bytes"),
        ("junk.csv", 'line 1, column 1: not a PDH log: the first cell is not "(PDH-CSV 4.0)" or "(PDH-TSV 4.0)"'),
    ]

    alerts = pq.read_table(out / "alerts")
    for log in logs:
        mine = alerts.filter(pa.compute.equal(alerts["path"], f"file:{logs_dir / log.name}"))
        alone = perfcounters.analyze(log)
        names = [n for n in mine.column_names if n not in ("path", "error")]
        key = lambda r: (r["counter"], r["start"], r["condition"], r["analysis"], r["priority"])  # noqa: E731
        assert sorted(mine.select(names).to_pylist(), key=key) == sorted(alone.select(names).to_pylist(), key=key), log
    junk = alerts.filter(pa.compute.equal(alerts["path"], f"file:{logs_dir / 'junk.csv'}")).to_pylist()
    assert len(junk) == 1 and "not a PDH log" in junk[0]["error"]


def test_throughput(spark: Any, cli: Path, tmp_path: Path) -> None:
    """Spark's conversion of the logs of ``PERFCOUNTERS_SPARK_LOGS`` against ``relog LOG -o DIR/``
    of each: MB of log per second per core, printed."""
    source = os.environ.get("PERFCOUNTERS_SPARK_LOGS")
    if not source:
        pytest.skip("PERFCOUNTERS_SPARK_LOGS names no directory of logs to time")
    logs: List[Path] = sorted(p for p in Path(source).iterdir() if p.is_file())
    megabytes = sum(p.stat().st_size for p in logs) / 1e6
    from perfcounters import spark as pcs

    files = spark.read.format("binaryFile").load(source)
    for run in range(2):
        out = tmp_path / f"spark{run}"
        start = time.perf_counter()
        long = files.mapInArrow(pcs.to_long_form, pcs.LONG_FORM_SCHEMA)
        long.drop("path", "error").write.partitionBy("machine", "date").parquet(str(out))
        spark_seconds = time.perf_counter() - start
        start = time.perf_counter()
        for log in logs:
            subprocess.run([str(cli), "relog", str(log), "-o", f"{tmp_path}/relog{run}/"], check=True, capture_output=True)
        relog_seconds = time.perf_counter() - start
        print(
            f"\n{len(logs)} logs, {megabytes:.1f} MB: Spark local[{CORES}] {spark_seconds:.2f} s "
            f"({megabytes / spark_seconds / CORES:.2f} MB/s per core); relog -o DIR/ one after the other "
            f"{relog_seconds:.2f} s ({megabytes / relog_seconds / CORES:.2f} MB/s per core of the machine)"
        )
