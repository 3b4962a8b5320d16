"""compare: the library's comparison of a baseline and a candidate as an Arrow table."""

from __future__ import annotations

import csv
import subprocess
from pathlib import Path

import pyarrow as pa
import pytest

import perfcounters
from conftest import data_file

TX = "blg/tx-win8-BasicPerfCounters.blg"
TOTAL = r"\Processor(_Total)\% Processor Time"


def relog_rows(cli: Path, log: Path, out: Path) -> list[list[str]]:
    subprocess.run([str(cli), "relog", str(log), "-f", "csv", "-o", str(out)], check=True, capture_output=True)
    with open(out, newline="", encoding="utf-8-sig") as f:
        return list(csv.reader(f))


def write_rows(rows: list[list[str]], out: Path) -> None:
    with open(out, "w", newline="", encoding="utf-8") as f:
        csv.writer(f, quoting=csv.QUOTE_ALL, lineterminator="\r\n").writerows(rows)


def test_a_log_against_itself() -> None:
    log = data_file(TX)
    table = perfcounters.compare(log, log)
    assert isinstance(table, pa.Table)
    assert table.num_rows == 10
    assert table.column_names[:8] == [
        "counter", "class", "effect", "effect_error", "avg_ratio", "p95_ratio", "bad", "analyses",
    ]
    assert table.schema.field("baseline_count").type == pa.uint64()
    rows = table.to_pylist()
    assert all(r["class"] == "unchanged" and r["effect"] == 0.0 and r["avg_ratio"] == 1.0 for r in rows)
    total = next(r for r in rows if r["counter"] == TOTAL)
    assert total["baseline_count"] == total["candidate_count"] == 600
    assert total["bad"] == "up"
    assert total["analyses"] == ["Processor % Processor Time"]
    assert total["baseline_p95"] == total["candidate_p95"]


def test_rules_by_built_in_name() -> None:
    """``rules`` takes a built-in file's name, ignoring case, as ``--rules`` does; an unknown name
    is refused with the closest built-in names."""
    log = data_file(TX)
    by_name = perfcounters.compare(log, log, rules="quicksystemoverview")
    assert by_name.to_pylist() == perfcounters.compare(log, log).to_pylist()
    with pytest.raises(ValueError, match="SQLServer2014"):
        perfcounters.compare(log, log, rules="SQLServer2041")


def test_a_tripled_counter_comes_first(cli: Path, tmp_path: Path) -> None:
    log = data_file(TX)
    rows = relog_rows(cli, log, tmp_path / "base.csv")
    column = next(i for i, name in enumerate(rows[0]) if name.endswith(TOTAL))
    before, after = [], []
    for n, row in enumerate(rows[1:]):
        cell = row[column].strip()
        if not cell:
            continue
        v = float(cell)
        before.append(v)
        if n >= 301:
            v *= 3
            row[column] = repr(v)
        after.append(v)
    write_rows(rows, tmp_path / "cand.csv")
    table = perfcounters.compare(tmp_path / "base.csv", tmp_path / "cand.csv").to_pylist()
    top = table[0]
    assert top["counter"] == TOTAL
    assert top["class"] == "worse"
    assert top["baseline_avg"] == sum(before) / len(before)
    assert top["candidate_avg"] == sum(after) / len(after)
    assert top["candidate_max"] == max(after)
    # Every value kept: Cliff's delta by its definition.
    pairs = sum((c > b) - (c < b) for c in after for b in before)
    assert top["effect"] == pairs / (len(before) * len(after))
    assert top["effect_error"] == 0.0
    assert all(r["class"] == "unchanged" for r in table[1:])


def test_nothing_shared_is_a_value_error(tmp_path: Path) -> None:
    log = data_file(TX)
    other = tmp_path / "other.csv"
    other.write_text(
        '"(PDH-CSV 4.0) (Coordinated Universal Time)(0)","\\\\M\\Memory\\Available MBytes"\r\n'
        '"02/19/2013 18:50:20.000","100"\r\n'
    )
    with pytest.raises(ValueError, match="share no counter") as e:
        perfcounters.compare(other, log)
    assert r"the baseline has \Memory\Available MBytes;" in str(e.value)
    with pytest.raises(FileNotFoundError):
        perfcounters.compare(tmp_path / "missing.blg", log)
