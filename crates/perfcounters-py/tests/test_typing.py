"""The stubs: `mypy --strict` accepts a script using the whole API, and rejects a wrong call."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent


def mypy(path: Path) -> subprocess.CompletedProcess[str]:
    pytest.importorskip("mypy")
    return subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental", "--ignore-missing-imports", str(path)],
        capture_output=True,
        text=True,
    )


def test_sample_script_passes_mypy_strict() -> None:
    result = mypy(HERE / "typing_sample.py")
    assert result.returncode == 0, result.stdout + result.stderr


def test_wrong_call_is_rejected(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("import perfcounters\nperfcounters.read_log('a.blg', tidy='yes')\nperfcounters.Query(3)\n")
    result = mypy(bad)
    assert result.returncode == 1
    assert 'Argument "tidy" to "read_log" has incompatible type "str"; expected "bool"' in result.stdout
    assert 'Argument 1 to "Query" has incompatible type "int"' in result.stdout
