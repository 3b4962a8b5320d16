"""The README's Python lines, run: the DuckDB query of its Examples over a dataset relog writes, and
the extra that ``to_pandas`` needs."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT, data_file


def _readme() -> str:
    return (ROOT / "README.md").read_text(encoding="utf-8")


def test_duckdb_example_runs_on_a_dataset(cli: Path, tmp_path: Path) -> None:
    pytest.importorskip("duckdb")
    # The `python3 -c "…"` line of the Examples, its continuation line joined.
    match = re.search(r'^python3 -c "(.*?)"$', _readme(), re.M | re.S)
    assert match, "the README's DuckDB example"
    # As the shell reads it: a backslash-newline inside double quotes joins the lines.
    code = re.sub(r"\\\n\s*", "", match.group(1)).replace('\\"', '"')
    log = data_file("blg/tx-win8-BasicPerfCounters.blg")
    subprocess.run([str(cli), "relog", str(log), "-o", "fleet/"], cwd=tmp_path, check=True, capture_output=True)
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    # The Tx log's disk answers in under 25 ms: the query runs and finds no such machine.
    assert "machine" in out.stdout and "0 rows" in out.stdout, out.stdout


def test_pandas_extra_is_declared() -> None:
    assert 'pip install "./crates/perfcounters-py[pandas]"' in _readme()
    pyproject = (ROOT / "crates" / "perfcounters-py" / "pyproject.toml").read_text()
    assert 'pandas = ["pandas"]' in pyproject
