"""A script that uses the package as a notebook would; `mypy --strict` checks it against the stubs
(tests/test_typing.py)."""

from __future__ import annotations

import datetime as dt
from typing import Dict, List, Optional

import pyarrow as pa

import perfcounters


def cpu_peak(path: str) -> Optional[float]:
    table: pa.Table = perfcounters.read_log(
        [path],
        counters=[r"\Processor(_Total)\% Processor Time"],
        begin=dt.datetime(2013, 2, 19, 18, 55),
        end=dt.datetime(2013, 2, 20, 2, 56, tzinfo=dt.timezone.utc),
        tidy=False,
        code_page=1252,
        names=None,
    )
    values = [v for v in table.column(1).to_pylist() if v is not None]
    return max(values) if values else None


def live() -> Dict[str, Optional[float]]:
    query = perfcounters.Query([r"\Memory\Available Bytes"])
    values = query.collect()
    statuses: Dict[str, str] = query.statuses()
    series: pa.Table = query.table(2, 0.1)
    assert series.num_rows == 2 and len(statuses) == len(values)
    return values


def describe_error(path: str) -> str:
    try:
        perfcounters.read_log(path)
    except perfcounters.DecodeError as e:
        return f"{e.source}: {e.structure} at {e.offset}"
    except perfcounters.LogError as e:
        return f"{e.source}: {e.location}"
    except FileNotFoundError as e:
        return str(e.filename)
    return "ok"


def alerts_of(path: str) -> pa.Table:
    with open(path, "rb") as f:
        from_file: pa.Table = perfcounters.analyze(f, rules=["QuickSystemOverview"], interval=60, set={"PhysicalMemory": "64"})
    from_bytes = perfcounters.read_log(bytearray(b"..."), tidy=True)
    assert from_bytes.num_rows >= 0
    return from_file


def spark_functions(batches: List[pa.RecordBatch]) -> int:
    from perfcounters import spark as pcs

    rows: int = sum(b.num_rows for b in pcs.to_long_form(batches, strict=True))
    rows += sum(b.num_rows for b in pcs.analyze(batches, rules="IIS", set={"PhysicalMemory": "64"}))
    assert pcs.LONG_FORM_SCHEMA.startswith("`time`") and pcs.ALERTS_ARROW_SCHEMA.names[0] == "path"
    return rows


catalog: pa.Table = perfcounters.list_counters("Memory")
