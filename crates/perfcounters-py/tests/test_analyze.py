"""analyze: the alerts of `perfcounters analyze` as an Arrow table, value for value against the
command's JSON report of the same logs."""

from __future__ import annotations

import datetime as dt
import json
import subprocess
from pathlib import Path
from typing import Any, Dict, List, Optional

import pyarrow as pa
import pytest

import perfcounters
from conftest import data_file
from test_read_log import LOGS

TX = "blg/tx-win8-BasicPerfCounters.blg"
PAL = "blg/pal-vista-SamplePerfmonLog.blg"
EDT = "logs/en-edt-process-DataCollector01.csv"

COLUMNS = [
    "machine", "analysis", "condition", "priority", "counter", "start", "end", "min", "avg", "max",
    "threshold_name", "operator", "threshold", "trend",
]


def cli_report(cli: Path, logs: List[Path], tmp_path: Path, *extra: str) -> Dict[str, Any]:
    out = tmp_path / "report.json"
    subprocess.run(
        [str(cli), "analyze", *map(str, logs), *extra, "--format", "json", "-o", str(out)],
        check=True,
        capture_output=True,
    )
    report: Dict[str, Any] = json.loads(out.read_text())
    return report


def utc(local: str, bias_minutes: int) -> dt.datetime:
    """The report's local ISO time as a UTC instant (local + bias)."""
    t = dt.datetime.fromisoformat(local) + dt.timedelta(minutes=bias_minutes)
    return t.replace(tzinfo=dt.timezone.utc)


def expected_rows(alerts: List[Dict[str, Any]], bias: int, machine: Optional[str] = None) -> List[Dict[str, Any]]:
    """The command's alerts as rows of the table: times as UTC instants, the machine of the
    counter's path."""
    rows = []
    for a in alerts:
        m = a["counter"].split("\\")[2] if a["counter"].startswith("\\\\") else machine
        rows.append(
            {
                "machine": m,
                "analysis": a["analysis"],
                "condition": a["condition"],
                "priority": a["priority"],
                "counter": a["counter"],
                "start": utc(a["start"], bias),
                "end": utc(a["end"], bias),
                "min": a["min"],
                "avg": a["avg"],
                "max": a["max"],
                "threshold_name": a["threshold_name"],
                "operator": a["operator"],
                "threshold": a["threshold"],
                "trend": a.get("trend"),
            }
        )
    return rows


def rows(table: pa.Table) -> List[Dict[str, Any]]:
    out: List[Dict[str, Any]] = table.to_pylist()
    for r in out:
        for k in ("start", "end"):
            r[k] = r[k].astimezone(dt.timezone.utc)
    return out


def bias_of(log: Path) -> int:
    return int(perfcounters.read_log(log).schema.metadata.get(b"perfcounters.time_zone_bias", b"0"))


@pytest.mark.parametrize("log", LOGS)
def test_alerts_equal_the_commands(log: str, cli: Path, tmp_path: Path) -> None:
    path = data_file(log)
    report = cli_report(cli, [path], tmp_path)
    table = perfcounters.analyze(path)
    assert table.column_names == COLUMNS
    assert table.schema.field("start").type == pa.timestamp("us", tz="UTC")
    assert rows(table) == expected_rows(report["alerts"], bias_of(path))
    # The same from the log's content.
    assert perfcounters.analyze(path.read_bytes()).equals(table)


def test_counts_of_the_shared_logs() -> None:
    counts = {log: perfcounters.analyze(data_file(log)).num_rows for log in LOGS}
    assert counts == {
        "blg/tx-win8-BasicPerfCounters.blg": 24,
        "blg/pal-vista-SamplePerfmonLog.blg": 136,
        "blg/powershell-2003-BadCounterSamples.blg": 12,
        "logs/en-edt-process-DataCollector01.csv": 19,
        "logs/en-pst-BM_Active_Load_Test.csv": 0,
        "logs/en-tokyo-5964cols-Sample01.csv": 62,
    }


def test_interval_and_answers(cli: Path, tmp_path: Path) -> None:
    path = data_file(PAL)
    report = cli_report(cli, [path], tmp_path, "--interval", "120", "--set", "PhysicalMemory=1")
    table = perfcounters.analyze(path, interval=120, set={"PhysicalMemory": "1"})
    assert rows(table) == expected_rows(report["alerts"], bias_of(path))
    assert table.num_rows != perfcounters.analyze(path).num_rows
    with pytest.raises(ValueError, match="question value"):
        perfcounters.analyze(path, set={"NoSuchQuestion": "1"})


def test_a_fleet_is_analysed_machine_by_machine(cli: Path, tmp_path: Path) -> None:
    """Logs of three machines: each machine's alerts are those of its log analysed alone, as in the
    command's fleet report."""
    logs = [data_file(TX), data_file(PAL), data_file(EDT)]
    fleet = perfcounters.analyze(logs)
    report = cli_report(cli, logs, tmp_path)
    # The report lists the machines worst first; the table keeps the order of the logs.
    by_machine = {m["machine"]: m for m in report["machines"]}
    expected = []
    for machine, log in zip(["GEORGIS3", "ZACH-PC", "7702-48817743"], logs):
        assert by_machine[machine]["logs"] == [str(log)]
        expected += expected_rows(by_machine[machine]["alerts"], bias_of(log))
    assert rows(fleet) == expected
    for log in logs:
        alone = perfcounters.analyze(log)
        assert fleet.filter(pa.compute.is_in(fleet["machine"], alone["machine"].unique())).equals(alone)


def test_a_damaged_log_in_a_fleet_is_a_warning(tmp_path: Path) -> None:
    bad = tmp_path / "bad.blg"
    bad.write_bytes(b"\x00" * 1000)
    tx = data_file(TX)
    with pytest.warns(perfcounters.LogWarning, match="bad.blg"):
        table = perfcounters.analyze([tx, bad])
    assert table.equals(perfcounters.analyze(tx))
    with pytest.raises(perfcounters.LogError, match="bad.blg"):
        perfcounters.analyze([tx, bad], strict=True)
    with pytest.raises(perfcounters.LogError, match="bad.blg"):
        perfcounters.analyze(bad)
