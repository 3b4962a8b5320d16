"""Query and list_counters on the local machine, checked against /proc on Linux."""

from __future__ import annotations

import datetime as dt
import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import pyarrow as pa
import pytest

import perfcounters

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="checked against /proc (Linux)")

TOTAL = r"\Processor(_Total)\% Processor Time"
EACH = r"\Processor(*)\% Processor Time"
AVAILABLE = r"\Memory\Available Bytes"


def mem_available() -> int:
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    raise AssertionError("no MemAvailable in /proc/meminfo")


def cpus() -> list[str]:
    """The cpuN lines of /proc/stat: the Processor instances besides _Total."""
    with open("/proc/stat") as f:
        return [line.split()[0][3:] for line in f if line.startswith("cpu") and line[3].isdigit()]


def paths_of(result: dict[str, object], counter: str) -> list[str]:
    return [p for p in result if p.endswith(counter)]


def test_collect_values_and_statuses() -> None:
    query = perfcounters.Query([TOTAL, AVAILABLE, EACH])
    before = mem_available()
    first = query.collect()
    after = mem_available()
    machine = os.uname().nodename
    total = rf"\\{machine}\Processor(_Total)\% Processor Time"
    available = rf"\\{machine}\Memory\Available Bytes"
    # One counter per cpuN line of /proc/stat, and _Total (alone and in the wildcard: one key).
    instances = sorted(p for p in first if p != available)
    expected = sorted([total] + [rf"\\{machine}\Processor({c})\% Processor Time" for c in cpus()])
    assert instances == expected
    # A rate has no value at the first collection: PDH's status says why.
    assert first[total] is None
    assert query.statuses()[total] == "PDH_NO_DATA"
    # Available Bytes is MemAvailable, within 8 MiB of the range read around the collection.
    value = first[available]
    assert value is not None
    assert min(before, after) - 8 * 2**20 <= value <= max(before, after) + 8 * 2**20
    # The first sample of any counter is new data.
    assert query.statuses()[available] == "PDH_CSTATUS_NEW_DATA"
    time.sleep(0.2)
    second = query.collect()
    for path in paths_of(second, "% Processor Time"):
        v = second[path]
        assert v is not None and 0.0 <= v <= 100.0, (path, v)
        # The first value of a rate is new data, as PDH says of it.
        assert query.statuses()[path] in ("PDH_CSTATUS_NEW_DATA", "PDH_CSTATUS_VALID_DATA")


def test_table_is_a_wide_series() -> None:
    query = perfcounters.Query([TOTAL, AVAILABLE])
    start = dt.datetime.now(dt.timezone.utc)
    table = query.table(3, 0.2)
    end = dt.datetime.now(dt.timezone.utc)
    machine = os.uname().nodename
    assert table.column_names == [
        "time",
        rf"\\{machine}\Processor(_Total)\% Processor Time",
        rf"\\{machine}\Memory\Available Bytes",
    ]
    assert table.schema.field("time").type == pa.timestamp("us", tz="UTC")
    assert table.num_rows == 3
    times = table.column("time").to_pylist()
    assert start - dt.timedelta(seconds=1) <= times[0] < times[1] < times[2] <= end + dt.timedelta(seconds=1)
    assert (times[2] - times[0]) >= dt.timedelta(seconds=0.35)
    cpu = table.column(1).to_pylist()
    assert cpu[0] is None
    assert all(v is not None and 0.0 <= v <= 100.0 for v in cpu[1:])
    assert all(v is not None and v > 0 for v in table.column(2).to_pylist())


def test_list_counters() -> None:
    catalog = perfcounters.list_counters()
    assert catalog.column_names == [
        "object",
        "multi_instance",
        "counter",
        "counter_type",
        "counter_type_name",
        "detail_level",
        "help",
    ]
    rows = catalog.to_pylist()
    processor = [r for r in rows if r["object"] == "Processor" and r["counter"] == "% Processor Time"]
    assert len(processor) == 1
    assert processor[0]["multi_instance"] is True
    assert processor[0]["counter_type"] == 0x21510500
    assert processor[0]["counter_type_name"] == "PERF_100NSEC_TIMER_INV"
    memory = perfcounters.list_counters("memory")
    assert set(memory.column("object").to_pylist()) == {"Memory"}
    assert "Available Bytes" in memory.column("counter").to_pylist()
    with pytest.raises(ValueError, match="no object"):
        perfcounters.list_counters("No Such Object")


def test_bad_paths() -> None:
    with pytest.raises(ValueError, match="invalid counter path"):
        perfcounters.Query(["Processor"])
    with pytest.raises(ValueError):
        perfcounters.Query([])
    # A query none of whose paths can ever have a value is an error, as in watch.
    query = perfcounters.Query([r"\No Such Object\Nothing"])
    with pytest.raises(ValueError, match='no valid counters:\n  .*no object named "No Such Object"'):
        query.collect()
    assert list(query.statuses().values()) == ["PDH_CSTATUS_NO_OBJECT"]
    # One good path keeps the query: the bad one has no value and its status.
    query = perfcounters.Query([r"\No Such Object\Nothing", r"\Memory\Available Bytes"])
    values = query.collect()
    assert list(values.values())[0] is None
    assert list(query.statuses().values())[0] == "PDH_CSTATUS_NO_OBJECT"


def sleeper(tmp_path: Path) -> str:
    """A copy of sleep under a name no other process has (its comm: at most 15 characters)."""
    name = f"pcq{os.getpid()}"[:15]
    exe = tmp_path / name
    shutil.copy(shutil.which("sleep") or "/bin/sleep", exe)
    exe.chmod(0o755)
    return str(exe)


def test_collect_expands_wildcards_again(tmp_path: Path) -> None:
    exe = sleeper(tmp_path)
    name = os.path.basename(exe)
    machine = os.uname().nodename
    pattern = rf"\Process({name}*)\ID Process"
    instance = rf"\\{machine}\Process({name})\ID Process"
    query = perfcounters.Query([pattern])
    # Nothing matches yet: the wildcard's one counter, without a value.
    first = query.collect()
    assert instance not in first
    assert list(first.values()) == [None]
    assert list(query.statuses().values()) == ["PDH_CSTATUS_NO_INSTANCE"]
    child = subprocess.Popen([exe, "60"])
    try:
        time.sleep(0.2)
        # The second collection expands again: the process that started is there.
        second = query.collect()
        assert second == {instance: float(child.pid)}
    finally:
        child.kill()
        child.wait()
    # Then every 10 s of collections: the collection after 10 s foreseen expands, and the
    # process that exited is gone.
    time.sleep(10.2)
    query.collect()
    gone = query.collect()
    assert instance not in gone
    assert list(gone.values()) == [None]
    assert list(query.statuses().values()) == ["PDH_CSTATUS_NO_INSTANCE"]


def test_table_columns_are_the_union(tmp_path: Path) -> None:
    exe = sleeper(tmp_path)
    name = os.path.basename(exe)
    machine = os.uname().nodename
    query = perfcounters.Query([AVAILABLE, rf"\Process({name}*)\ID Process"])
    children: list[subprocess.Popen[bytes]] = []
    # The process starts between the first collection and the second (which expands again).
    timer = threading.Timer(0.3, lambda: children.append(subprocess.Popen([exe, "60"])))
    timer.start()
    try:
        table = query.table(3, 0.8)
    finally:
        timer.join()
        for c in children:
            c.kill()
            c.wait()
    assert len(children) == 1
    assert table.column_names == [
        "time",
        rf"\\{machine}\Memory\Available Bytes",
        rf"\\{machine}\Process({name}*)\ID Process",
        rf"\\{machine}\Process({name})\ID Process",
    ]
    # The wildcard's placeholder until the process appears; its column from then on, null before.
    assert table.column(2).to_pylist() == [None, None, None]
    assert table.column(3).to_pylist() == [None, float(children[0].pid), float(children[0].pid)]


def test_misspelt_object_gets_the_close_names_of_the_command(cli: Path) -> None:
    """Query and list_counters say what ``perfcounters watch`` and ``list`` say."""
    path = r"\Procesor(*)\% Processor Time"
    watch = subprocess.run([str(cli), "watch", path, "-n", "1"], capture_output=True, text=True)
    assert watch.returncode == 1
    query = perfcounters.Query(path)
    with pytest.raises(ValueError) as e:
        query.collect()
    assert f"perfcounters: {e.value}\n" == watch.stderr
    assert 'did you mean "Processor"' in str(e.value)
    listed = subprocess.run([str(cli), "list", "Procesor"], capture_output=True, text=True)
    with pytest.raises(ValueError) as e:
        perfcounters.list_counters("Procesor")
    assert f"perfcounters: {e.value}\n" == listed.stderr


def test_version() -> None:
    version = perfcounters.__version__
    assert isinstance(version, str) and version.count(".") == 2
    cargo = (Path(__file__).resolve().parents[1] / "Cargo.toml").read_text()
    assert f'version = "{version}"' in cargo
