"""perfcounters.spark without Spark: the functions for ``mapInArrow`` on batches shaped as Spark's
``binaryFile`` source gives them, against ``relog -o DIR/`` (read by DuckDB) and
``perfcounters.analyze`` of the same shared logs."""

from __future__ import annotations

import datetime as dt
import subprocess
from pathlib import Path
from typing import List

import pyarrow as pa
import pytest

import perfcounters
from perfcounters import spark as pcs
from conftest import data_file
from test_read_log import LOGS

TX = "blg/tx-win8-BasicPerfCounters.blg"

#: The columns a dataset of the long form has (relog's files, with the partition column `date`).
DATA_COLUMNS = [
    "time", "machine", "object", "instance", "counter", "value", "parent", "instance_index",
    "counter_type", "raw_first", "raw_second", "multi_count", "status", "date",
]


def binary_file_rows(paths: List[Path], per_batch: int = 2) -> List[pa.RecordBatch]:
    """The rows Spark's ``binaryFile`` source gives for ``paths``, in batches of ``per_batch``."""
    batches = []
    for i in range(0, len(paths), per_batch):
        chunk = paths[i : i + per_batch]
        contents = [p.read_bytes() for p in chunk]
        batches.append(
            pa.record_batch(
                {
                    "path": [f"file:{p}" for p in chunk],
                    "modificationTime": pa.array(
                        [dt.datetime.fromtimestamp(p.stat().st_mtime, dt.timezone.utc) for p in chunk],
                        pa.timestamp("us", tz="UTC"),
                    ),
                    "length": pa.array([len(c) for c in contents], pa.int64()),
                    "content": pa.array(contents, pa.binary()),
                }
            )
        )
    return batches


def relog_dataset(cli: Path, logs: List[Path], out: Path) -> None:
    """``perfcounters relog LOG -o OUT/`` of each log, one run per log into one dataset."""
    for log in logs:
        subprocess.run([str(cli), "relog", str(log), "-o", f"{out}/"], check=True, capture_output=True)


def test_schemas_for_spark() -> None:
    assert pcs.LONG_FORM_SCHEMA == (
        "`time` TIMESTAMP, `machine` STRING, `object` STRING, `instance` STRING, `counter` STRING, "
        "`value` DOUBLE, `parent` STRING, `instance_index` BIGINT, `counter_type` BIGINT, "
        "`raw_first` BIGINT, `raw_second` BIGINT, `multi_count` BIGINT, `status` BIGINT, "
        "`date` DATE, `path` STRING, `error` STRING"
    )
    assert pcs.ALERTS_SCHEMA == (
        "`path` STRING, `machine` STRING, `analysis` STRING, `condition` STRING, `priority` INT, "
        "`counter` STRING, `start` TIMESTAMP, `end` TIMESTAMP, `min` DOUBLE, `avg` DOUBLE, "
        "`max` DOUBLE, `error` STRING"
    )


def test_long_form_has_the_rows_of_relogs_dataset(cli: Path, tmp_path: Path) -> None:
    duckdb = pytest.importorskip("duckdb")
    logs = [data_file(log) for log in LOGS]
    out = list(pcs.to_long_form(binary_file_rows(logs)))
    assert all(b.schema.equals(pcs.LONG_FORM_ARROW_SCHEMA) for b in out)
    converted = pa.Table.from_batches(out, pcs.LONG_FORM_ARROW_SCHEMA)
    assert converted.filter(pa.compute.is_valid(converted["error"])).num_rows == 0
    relog_dataset(cli, logs, tmp_path / "relog")
    con = duckdb.connect()
    con.register("converted", converted)
    columns = ", ".join(f'"{c}"' for c in DATA_COLUMNS)
    con.execute(
        f"CREATE VIEW relog AS SELECT {columns} FROM read_parquet('{tmp_path}/relog/**/*.parquet', "
        "hive_partitioning = true, union_by_name = true)"
    )
    con.execute(f"CREATE VIEW spark AS SELECT {columns} FROM converted")
    count = con.execute("SELECT count(*) FROM relog").fetchone()
    assert count is not None and count[0] == converted.num_rows == 131_788
    for a, b in (("spark", "relog"), ("relog", "spark")):
        left = con.execute(f"SELECT count(*) FROM (SELECT * FROM {a} EXCEPT ALL SELECT * FROM {b})").fetchone()
        assert left == (0,), f"rows of {a} not in {b}"
    # Each row's date is the UTC date of its time, and its path the file it came from.
    bad = con.execute(
        "SELECT count(*) FROM converted WHERE date <> CAST(time AT TIME ZONE 'UTC' AS DATE)"
    ).fetchone()
    assert bad == (0,)
    paths = set(converted["path"].unique().to_pylist())
    assert paths == {f"file:{p}" for p in logs}


def test_a_damaged_file_is_an_error_row(tmp_path: Path) -> None:
    tx = data_file(TX)
    cut = tmp_path / "cut.blg"
    cut.write_bytes(tx.read_bytes()[:100_000])
    junk = tmp_path / "junk.csv"
    junk.write_bytes(b"Time,Value\r\n1,2\r\n")
    rows = binary_file_rows([junk, cut, tx], per_batch=3)
    table = pa.Table.from_batches(list(pcs.to_long_form(rows)), pcs.LONG_FORM_ARROW_SCHEMA)
    errors = table.filter(pa.compute.is_valid(table["error"])).to_pylist()
    assert [(e["path"], e["error"]) for e in errors] == [
        (
            f"file:{junk}",
            # Named .csv, read as PDH-CSV, whose reader says what is wrong.
            f"file:{junk}: line 1, column 1: not a PDH log: the first cell is not \"(PDH-CSV 4.0)\" or "
            "\"(PDH-TSV 4.0)\"",
        ),
        (
            f"file:{cut}",
            f"file:{cut}: EVENT_TRACE_HEADER at offset 99912: size 520 exceeds the 88 bytes left by "
            "the enclosing structure; the log is read up to there (64 samples)",
        ),
        (f"file:{cut}", f"file:{cut}: offset 65536: the file ends 34464 bytes into a buffer of 65536 bytes"),
    ]
    for e in errors:
        assert all(v is None for k, v in e.items() if k not in ("path", "error"))
    # The damaged log's rows up to its damage, and the good log's, are there.
    per_path = table.group_by("path").aggregate([([], "count_all")]).to_pydict()
    counts = dict(zip(per_path["path"], per_path["count_all"]))
    assert counts[f"file:{cut}"] == 64 * 10 + 2
    assert counts[f"file:{tx}"] == 601 * 10
    with pytest.raises(perfcounters.LogError, match="not a PDH log"):
        list(pcs.to_long_form(binary_file_rows([junk]), strict=True))
    with pytest.raises(perfcounters.LogError, match="EVENT_TRACE_HEADER"):
        list(pcs.to_long_form(binary_file_rows([cut]), strict=True))


@pytest.mark.parametrize("per_batch", [1, 4])
def test_alerts_of_each_log(per_batch: int, tmp_path: Path) -> None:
    logs = [data_file(log) for log in LOGS]
    junk = tmp_path / "junk.blg"
    junk.write_bytes(b"\x00" * 100)
    out = list(pcs.analyze(binary_file_rows([*logs, junk], per_batch)))
    assert all(b.schema.equals(pcs.ALERTS_ARROW_SCHEMA) for b in out)
    table = pa.Table.from_batches(out, pcs.ALERTS_ARROW_SCHEMA)
    for log in logs:
        mine = table.filter(pa.compute.equal(table["path"], f"file:{log}"))
        alone = perfcounters.analyze(log)
        expected = alone.select([f.name for f in pcs.ALERTS_ARROW_SCHEMA if f.name in alone.column_names])
        assert mine.drop_columns(["path", "error"]).to_pylist() == expected.to_pylist(), log
    error = table.filter(pa.compute.equal(table["path"], f"file:{junk}")).to_pylist()
    assert len(error) == 1 and error[0]["error"].startswith(f"file:{junk}: ")
    assert table.num_rows == 24 + 136 + 12 + 19 + 0 + 62 + 1


def test_analysis_options_reach_each_log() -> None:
    pal = data_file("blg/pal-vista-SamplePerfmonLog.blg")
    rows = binary_file_rows([pal])
    table = pa.Table.from_batches(
        list(pcs.analyze(rows, rules="QuickSystemOverview", interval=120, set={"PhysicalMemory": "1"}))
    )
    alone = perfcounters.analyze(pal, interval=120, set={"PhysicalMemory": "1"})
    assert table["min"].to_pylist() == alone["min"].to_pylist()
    assert table.num_rows == alone.num_rows != perfcounters.analyze(pal).num_rows
