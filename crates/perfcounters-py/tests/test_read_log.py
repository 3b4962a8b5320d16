"""read_log against the library's relog conversion, cell for cell, and its options."""

from __future__ import annotations

import csv
import datetime as dt
import subprocess
from pathlib import Path

import pyarrow as pa
import pytest

import perfcounters
from conftest import data_file

LOGS = [
    "blg/tx-win8-BasicPerfCounters.blg",
    "blg/pal-vista-SamplePerfmonLog.blg",
    "blg/powershell-2003-BadCounterSamples.blg",
    "logs/en-edt-process-DataCollector01.csv",
    "logs/en-pst-BM_Active_Load_Test.csv",
    "logs/en-tokyo-5964cols-Sample01.csv",
]


def relog_csv(cli: Path, inputs: list[Path], out: Path, *extra: str) -> tuple[list[str], list[list[str]]]:
    """The CSV that `perfcounters relog` writes for `inputs`: header row and data rows."""
    subprocess.run(
        [str(cli), "relog", *map(str, inputs), *extra, "-f", "csv", "-o", str(out)],
        check=True,
        capture_output=True,
    )
    with open(out, newline="", encoding="utf-8-sig") as f:
        rows = list(csv.reader(f))
    return rows[0], rows[1:]


def wall_clock(text: str) -> dt.datetime:
    return dt.datetime.strptime(text, "%m/%d/%Y %H:%M:%S.%f")


def assert_equals_relog(table: pa.Table, header: list[str], rows: list[list[str]]) -> None:
    """Column names, times (the CSV's wall clock plus the log's bias) and every value agree."""
    assert table.column_names == ["time", *header[1:]]
    assert table.num_rows == len(rows)
    bias = int(table.schema.metadata.get(b"perfcounters.time_zone_bias", b"0"))
    assert table.schema.field("time").type == pa.timestamp("us", tz="UTC")
    times = table.column("time").to_pylist()
    for t, row in zip(times, rows):
        expected = (wall_clock(row[0]) + dt.timedelta(minutes=bias)).replace(tzinfo=dt.timezone.utc)
        assert t == expected
    for i, name in enumerate(header[1:], start=1):
        values = table.column(name).to_pylist()
        assert table.schema.field(name).type == pa.float64()
        for r, (v, row) in enumerate(zip(values, rows)):
            cell = row[i].strip()
            expected_value = None if cell == "" else float(cell)
            assert v == expected_value, f"{name}, row {r}: {v!r} != {row[i]!r}"


@pytest.mark.parametrize("log", LOGS)
def test_wide_equals_relog(log: str, cli: Path, tmp_path: Path) -> None:
    path = data_file(log)
    header, rows = relog_csv(cli, [path], tmp_path / "out.csv")
    table = perfcounters.read_log(path)
    assert_equals_relog(table, header, rows)
    assert table.num_rows > 0


def test_metadata_of_a_blg() -> None:
    table = perfcounters.read_log(data_file("blg/tx-win8-BasicPerfCounters.blg"))
    md = table.schema.metadata
    assert md[b"perfcounters.kind"] == b"Binary"
    assert md[b"perfcounters.time_zone"] == b"Pacific Standard Time"
    assert md[b"perfcounters.time_zone_bias"] == b"480"
    assert md[b"perfcounters.machines"] == b"GEORGIS3"
    assert b"perfcounters.log" not in md
    lines = md[b"perfcounters.counters"].decode().strip("\n").split("\n")
    assert len(lines) == table.num_columns - 1
    # Name, machine, object, parent, instance, index, counter, counter type, ...: the last column
    # is \Processor(_Total)\% Processor Time, PERF_100NSEC_TIMER_INV (0x21510500).
    fields = lines[-1].split("\t")
    assert fields[1:8] == ["GEORGIS3", "Processor", "\\N", "_Total", "\\N", "% Processor Time", str(0x21510500)]
    # 601 samples one second apart, from 18:50:17.844 Pacific (UTC-8).
    assert table.num_rows == 601
    assert table.column("time")[0].as_py() == dt.datetime(2013, 2, 20, 2, 50, 17, 844000, tzinfo=dt.timezone.utc)


def test_merge_equals_relog_merge(cli: Path, tmp_path: Path) -> None:
    a = data_file("logs/en-pst-BM_Active_Load_Test.csv")
    b = data_file("blg/tx-win8-BasicPerfCounters.blg")
    header, rows = relog_csv(cli, [a, b], tmp_path / "merged.csv")
    table = perfcounters.read_log([a, b])
    assert_equals_relog(table, header, rows)


def test_counters_begin_end_equal_relog(cli: Path, tmp_path: Path) -> None:
    path = data_file("blg/tx-win8-BasicPerfCounters.blg")
    header, rows = relog_csv(
        cli,
        [path],
        tmp_path / "cut.csv",
        "-c",
        r"\Processor(*)\% Processor Time",
        "-b",
        "02/19/2013 18:55:00",
        "-e",
        "02/19/2013 18:56:00",
    )
    naive = perfcounters.read_log(
        path,
        counters=[r"\Processor(*)\% Processor Time"],
        begin=dt.datetime(2013, 2, 19, 18, 55),
        end=dt.datetime(2013, 2, 19, 18, 56),
    )
    assert_equals_relog(naive, header, rows)
    assert naive.num_columns == 1 + 5 and naive.num_rows == 60
    # The same range as aware instants (Pacific Standard Time is UTC-8).
    pst = dt.timezone(dt.timedelta(hours=-8))
    aware = perfcounters.read_log(
        path,
        counters=[r"\Processor(*)\% Processor Time"],
        begin=dt.datetime(2013, 2, 19, 18, 55, tzinfo=pst),
        end=dt.datetime(2013, 2, 20, 2, 56, tzinfo=dt.timezone.utc),
    )
    assert aware.equals(naive)


def test_tidy_form_holds_the_wide_values() -> None:
    path = data_file("blg/tx-win8-BasicPerfCounters.blg")
    wide = perfcounters.read_log(path)
    tidy = perfcounters.read_log(path, tidy=True)
    assert tidy.num_rows == wide.num_rows * (wide.num_columns - 1)
    assert {"time", "machine", "object", "instance", "counter", "value", "counter_type", "raw_first", "status"} <= set(
        tidy.column_names
    )
    assert tidy.schema.metadata[b"perfcounters.log"] == b"long/1"
    # Rows are grouped by column, then by time: the first 601 rows are the first column.
    first = tidy.slice(0, wide.num_rows)
    assert first.column("value").to_pylist() == wide.column(1).to_pylist()
    assert first.column("time").to_pylist() == wide.column("time").to_pylist()
    assert set(first.column("object").to_pylist()) == {"PhysicalDisk"}
    assert set(first.column("counter").to_pylist()) == {"Avg. Disk Bytes/Read"}
    assert set(first.column("instance").to_pylist()) == {"0 C:"}


def test_russian_cp1251_csv(tmp_path: Path) -> None:
    text = (
        '"(PDH-CSV 4.0) (RTZ 2 (зима))(-180)","\\\\SRV\\Процессор(_Total)\\% загруженности процессора",'
        '"\\\\SRV\\Память\\Доступно МБ"\r\n'
        '"03/01/2024 10:00:00.000","12.5","2048"\r\n'
        '"03/01/2024 10:00:15.000"," ","2047.75"\r\n'
    )
    path = tmp_path / "ru.csv"
    path.write_bytes(text.encode("cp1251"))
    # Without code_page, 1251 is detected from the header line and named in a LogWarning.
    with pytest.warns(perfcounters.LogWarning) as caught:
        detected = perfcounters.read_log(path)
    assert str(caught[0].message) == (
        f"{path}: no byte-order mark and not UTF-8: read in code page 1251, detected from its "
        "header line (a code page given overrides it)"
    )
    table = perfcounters.read_log(path, code_page=1251)
    assert detected.column_names == table.column_names
    with pytest.raises(perfcounters.LogError, match="not UTF-8 \\(code page 65001 was given\\)"):
        perfcounters.read_log(path, code_page=65001)
    assert table.column_names == [
        "time",
        "\\\\SRV\\Процессор(_Total)\\% загруженности процессора",
        "\\\\SRV\\Память\\Доступно МБ",
    ]
    assert table.column(1).to_pylist() == [12.5, None]
    assert table.column(2).to_pylist() == [2048.0, 2047.75]
    # Moscow is UTC+3: bias -180.
    assert table.column("time")[0].as_py() == dt.datetime(2024, 3, 1, 7, 0, tzinfo=dt.timezone.utc)
    assert table.schema.metadata[b"perfcounters.machines"] == b"SRV"


def test_german_log_through_the_german_name_table(cli: Path, tmp_path: Path) -> None:
    names = data_file("names/de-en-PerfStringBackup-cp1252.INI")
    text = (
        '"(PDH-CSV 4.0) (W. Europe Standard Time)(-60)","\\\\PC\\Prozessor(_Total)\\Prozessorzeit (%)",'
        '"\\\\PC\\Prozessor(0)\\Prozessorzeit (%)","\\\\PC\\Arbeitsspeicher\\Verfügbare MB"\r\n'
        '"11/26/2026 09:00:00.000","7.25","9.5","1024"\r\n'
        '"11/26/2026 09:00:01.000","3.125"," ","1023"\r\n'
    )
    path = tmp_path / "de.csv"
    path.write_bytes(text.encode("cp1252"))
    wanted = r"\Processor(_Total)\% Processor Time"
    table = perfcounters.read_log(path, counters=[wanted], names=names, code_page=1252)
    assert table.column_names == ["time", "\\\\PC\\Prozessor(_Total)\\Prozessorzeit (%)"]
    assert table.column(1).to_pylist() == [7.25, 3.125]
    header, rows = relog_csv(cli, [path], tmp_path / "out.csv", "-c", wanted, "--names", str(names))
    assert_equals_relog(table, header, rows)
    # Without the table, the built-in one (PAL's CounterLang.xml) selects the same column.
    assert perfcounters.read_log(path, counters=[wanted], code_page=1252).equals(table)
    # A table that is missing is the file system's error.
    with pytest.raises(FileNotFoundError):
        perfcounters.read_log(path, counters=[wanted], names=tmp_path / "none.INI")


def test_the_gil_is_released_while_reading() -> None:
    """Another Python thread runs while a log is read: it could not if the read held the GIL."""
    import sys
    import threading
    import time

    path = data_file("blg/pal-vista-SamplePerfmonLog.blg")
    count = 0
    stop = threading.Event()

    def spin() -> None:
        nonlocal count
        while not stop.is_set():
            count += 1

    interval = sys.getswitchinterval()
    # The thread may take the GIL between two statements of this one for at most 0.1 ms at a time.
    sys.setswitchinterval(1e-4)
    thread = threading.Thread(target=spin)
    thread.start()
    try:
        c0 = count
        time.sleep(0.05)
        rate = (count - c0) / 0.05
        before = count
        t0 = time.perf_counter()
        table = perfcounters.read_log(path)
        elapsed = time.perf_counter() - t0
        during = count - before
    finally:
        stop.set()
        thread.join()
        sys.setswitchinterval(interval)
    assert table.num_rows == 11
    # Released, the thread runs about as fast as alone (a ratio near 1); a C call that holds the GIL
    # (a backtracking re.match) measured 0.1 here.
    assert elapsed > 0.002
    assert during > 0.3 * rate * elapsed, (during, rate, elapsed)


@pytest.mark.parametrize("log", ["blg/tx-win8-BasicPerfCounters.blg", "logs/en-pst-BM_Active_Load_Test.csv"])
def test_parquet_written_by_relog_reads_back_the_same_table(log: str, cli: Path, tmp_path: Path) -> None:
    path = data_file(log)
    parquet = tmp_path / "log.parquet"
    subprocess.run([str(cli), "relog", str(path), "-f", "parquet", "-o", str(parquet)], check=True, capture_output=True)
    original = perfcounters.read_log(path)
    again = perfcounters.read_log(parquet)
    assert again.schema.metadata[b"perfcounters.kind"] == b"Parquet"
    assert again.column_names == original.column_names
    assert again.to_pydict() == original.to_pydict()


def test_sql_log_written_by_relog_reads_back_the_same_table(cli: Path, tmp_path: Path) -> None:
    path = data_file("blg/tx-win8-BasicPerfCounters.blg")
    target = f"SQL:{tmp_path / 'logs.db'}!tx"
    subprocess.run([str(cli), "relog", str(path), "-f", "SQL", "-o", target], check=True, capture_output=True)
    again = perfcounters.read_log(target)
    assert again.schema.metadata[b"perfcounters.kind"] == b"SQL"
    assert again.to_pydict() == perfcounters.read_log(path).to_pydict()
    with pytest.raises(perfcounters.LogError):
        perfcounters.read_log(f"SQL:{tmp_path / 'logs.db'}!no such log")


@pytest.mark.parametrize("log", ["blg/tx-win8-BasicPerfCounters.blg", "logs/en-tokyo-5964cols-Sample01.csv"])
def test_parquet_values_read_by_pyarrow_and_duckdb(log: str, cli: Path, tmp_path: Path) -> None:
    """The `value` column is BYTE_STREAM_SPLIT, or PLAIN in a row group where at least a quarter of
    the values repeat the one before them (the `.blg` here is split, the Tokyo log, whose counters
    mostly hold still, PLAIN): pyarrow's own reader and DuckDB read every value of the file relog
    writes, the same values as read_log's wide table of the original log."""
    import struct

    import pyarrow.parquet as pq

    path = data_file(log)
    parquet = tmp_path / "log.parquet"
    subprocess.run([str(cli), "relog", str(path), "-o", str(parquet)], check=True, capture_output=True)
    file = pq.ParquetFile(parquet)
    meta = file.metadata
    value = meta.schema.to_arrow_schema().get_field_index("value")
    for g in range(meta.num_row_groups):
        values = file.read_row_group(g, columns=["value"]).column(0).to_pylist()
        bits = [struct.pack("<d", v) for v in values if v is not None]
        repeats = sum(a == b for a, b in zip(bits, bits[1:]))
        want = "PLAIN" if repeats > 0 and 4 * repeats >= len(bits) else "BYTE_STREAM_SPLIT"
        assert want in meta.row_group(g).column(value).encodings, (g, repeats, len(bits))
    wide = perfcounters.read_log(path)
    expected = sorted(v for name in wide.column_names[1:] for v in wide.column(name).to_pylist() if v is not None)
    assert expected
    got = sorted(v for v in pq.read_table(parquet).column("value").to_pylist() if v is not None)
    assert got == expected
    duckdb = pytest.importorskip("duckdb")
    rows = duckdb.sql(f"SELECT value FROM read_parquet('{parquet}') WHERE value IS NOT NULL").fetchall()
    assert sorted(r[0] for r in rows) == expected


def test_spanish_log_matches_english_paths_without_names(tmp_path: Path) -> None:
    """PAL's CounterLang.xml is built in: English paths select a Spanish log's columns."""
    text = (
        '"(PDH-CSV 4.0) (UTC)(0)","\\\\SRV\\Procesador(_Total)\\% de tiempo de procesador",'
        '"\\\\SRV\\Memoria\\Bytes disponibles"\r\n'
        '"03/01/2024 10:00:00.000","12.5","2048"\r\n'
    )
    path = tmp_path / "es.csv"
    path.write_bytes(text.encode("utf-8"))
    table = perfcounters.read_log(path, counters=["\\Memory\\Available Bytes"])
    assert table.column_names == ["time", "\\\\SRV\\Memoria\\Bytes disponibles"]
    assert table.column(1).to_pylist() == [2048.0]
