"""The cells of docs/python.md's walk-through, each checked against the table it starts from."""

from __future__ import annotations

import datetime as dt

import pyarrow as pa
import pyarrow.compute as pc
import pytest

import perfcounters
from conftest import data_file

TOTAL = r"\\GEORGIS3\Processor(_Total)\% Processor Time"


@pytest.fixture(scope="module")
def tx() -> pa.Table:
    return perfcounters.read_log(data_file("blg/tx-win8-BasicPerfCounters.blg"))


def test_first_look(tx: pa.Table) -> None:
    assert (tx.num_rows, tx.num_columns) == (601, 11)
    assert tx.schema.field("time").type == pa.timestamp("us", tz="UTC")
    assert tx.column_names[1] == "\\\\GEORGIS3\\PhysicalDisk(0 C:)\\Avg. Disk Bytes/Read"
    assert tx.schema.metadata[b"perfcounters.time_zone"] == b"Pacific Standard Time"


def test_pandas(tx: pa.Table) -> None:
    df = tx.to_pandas().set_index("time")
    assert str(df.index.dtype) == "datetime64[us, UTC]"
    per_minute = df[TOTAL].resample("1min").mean()
    # 18:50:17 .. 19:00:17 Pacific: eleven minutes, the first mean over 18:50:17 .. 18:50:59.
    assert len(per_minute) == 11
    first = [v for t, v in zip(tx.column("time").to_pylist(), tx.column(TOTAL).to_pylist()) if t.minute == 50]
    values = [v for v in first if v is not None]
    assert per_minute.iloc[0] == pytest.approx(sum(values) / len(values), rel=1e-12)
    # Nulls become NaN: the first sample of a rate counter has no value.
    assert df[TOTAL].isna().iloc[0]


def test_polars(tx: pa.Table) -> None:
    pl = pytest.importorskip("polars")
    tidy = pl.from_arrow(perfcounters.read_log(data_file("blg/tx-win8-BasicPerfCounters.blg"), tidy=True))
    means = (
        tidy.filter(pl.col("object") == "Processor")
        .group_by("instance")
        .agg(pl.col("value").mean().alias("mean"))
        .sort("instance")
    )
    assert means["instance"].cast(pl.Utf8).to_list() == ["0", "1", "2", "3", "_Total"]
    for instance, mean in zip(means["instance"].cast(pl.Utf8).to_list(), means["mean"].to_list()):
        column = tx.column(rf"\\GEORGIS3\Processor({instance})\% Processor Time")
        assert mean == pytest.approx(pc.mean(column).as_py(), rel=1e-12)


def test_duckdb(tx: pa.Table) -> None:
    duckdb = pytest.importorskip("duckdb")
    busy = duckdb.sql(
        r"""
        SELECT date_trunc('minute', time) AS minute,
               max("\\GEORGIS3\Processor(_Total)\% Processor Time") AS peak
        FROM tx GROUP BY minute ORDER BY minute
        """
    ).fetchall()
    df = tx.to_pandas().set_index("time")
    expected = df[TOTAL].resample("1min").max()
    assert len(busy) == len(expected) == 11
    for (minute, peak), (t, v) in zip(busy, expected.items()):
        assert minute.astimezone(dt.timezone.utc) == t.to_pydatetime()
        assert peak == v


def test_filtered_range(tx: pa.Table) -> None:
    cpu = perfcounters.read_log(
        data_file("blg/tx-win8-BasicPerfCounters.blg"),
        counters=[r"\Processor(*)\% Processor Time"],
        begin=dt.datetime(2013, 2, 19, 18, 55),
        end=dt.datetime(2013, 2, 20, 2, 56, tzinfo=dt.timezone.utc),
    )
    assert cpu.column_names == ["time", *[c for c in tx.column_names if "Processor(" in c]]
    times = cpu.column("time").to_pylist()
    utc = dt.timezone.utc
    assert times[0] >= dt.datetime(2013, 2, 20, 2, 55, tzinfo=utc)
    assert times[-1] <= dt.datetime(2013, 2, 20, 2, 56, tzinfo=utc)
    assert cpu.num_rows == 60
    whole = tx.filter(pc.field("time").isin(cpu.column("time")))
    assert whole.select(cpu.column_names).equals(cpu.replace_schema_metadata(whole.schema.metadata))
