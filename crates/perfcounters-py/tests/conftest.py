"""Shared fixtures: the real Windows logs beside the repository and the `perfcounters` binary.

The logs are in ``../shared/data`` beside the repository root, or the folder
``PERFCOUNTERS_SHARED_DATA`` names, as for the Rust tests (tests/support/shared_data.rs); each test
that asks for them appends ``ran <test>`` or ``skipped <test>`` to the file
``PERFCOUNTERS_DATA_REPORT`` names, which .ci/run counts."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
DATA = Path(os.environ.get("PERFCOUNTERS_SHARED_DATA") or ROOT.parent / "shared" / "data")
IN_CI = os.environ.get("CI") == "true"


def _report(outcome: str) -> None:
    report = os.environ.get("PERFCOUNTERS_DATA_REPORT")
    if not report:
        return
    test = os.environ.get("PYTEST_CURRENT_TEST", "unnamed").rsplit(" (", 1)[0]
    try:
        with open(report, "a") as f:
            f.write(f"{outcome} python {test}\n")
    except OSError:
        pass  # a count for people, not part of the test


def data_file(relative: str) -> Path:
    """A file of the shared data, or a skip when it is absent."""
    path = DATA / relative
    if not path.exists():
        _report("skipped")
        pytest.skip(f"{path} is absent (the real Windows logs live beside the repository)")
    _report("ran")
    return path


@pytest.fixture(scope="session")
def cli() -> Path:
    """The `perfcounters` binary (PERFCOUNTERS_CLI, else the workspace's debug or release build)."""
    candidates = [os.environ.get("PERFCOUNTERS_CLI"), shutil.which("perfcounters")]
    candidates += [str(ROOT / "target" / p / "perfcounters") for p in ("debug", "release")]
    for c in candidates:
        if c and Path(c).is_file() and os.access(c, os.X_OK):
            return Path(c)
    message = "no perfcounters binary: run `cargo build -p perfcounters-cli` first"
    if IN_CI:
        pytest.fail(message)
    pytest.skip(message)
