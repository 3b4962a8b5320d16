"""Logs given by their content (bytes, file-like objects) rather than by path: read as their files
are, with no temporary file, named as given in messages."""

from __future__ import annotations

import io
from pathlib import Path

import pyarrow as pa
import pytest

import perfcounters
from conftest import data_file
from test_read_log import LOGS

TX = "blg/tx-win8-BasicPerfCounters.blg"
EDT = "logs/en-edt-process-DataCollector01.csv"


def without_source(table: pa.Table) -> pa.Table:
    """The table with the metadata key that names the log left out."""
    metadata = dict(table.schema.metadata)
    del metadata[b"perfcounters.source"]
    return table.replace_schema_metadata(metadata)


@pytest.mark.parametrize("log", LOGS)
@pytest.mark.parametrize("tidy", [False, True])
def test_bytes_read_as_the_file(log: str, tidy: bool) -> None:
    path = data_file(log)
    from_path = perfcounters.read_log(path, tidy=tidy)
    content = path.read_bytes()
    for given in (content, bytearray(content), memoryview(content), io.BytesIO(content)):
        table = perfcounters.read_log(given, tidy=tidy)
        assert without_source(table).equals(without_source(from_path), check_metadata=True), type(given)
        name = b"<file>" if isinstance(given, io.BytesIO) else b"<bytes>"
        assert table.schema.metadata[b"perfcounters.source"] == name


def test_a_file_object_is_named_by_its_name() -> None:
    path = data_file(TX)
    with open(path, "rb") as f:
        table = perfcounters.read_log(f)
    assert table.schema.metadata[b"perfcounters.source"] == str(path).encode()
    assert table.num_rows == 601


def test_paths_and_contents_merge_as_paths_do() -> None:
    tx, edt = data_file(TX), data_file(EDT)
    both = perfcounters.read_log([edt, tx])
    mixed = perfcounters.read_log([edt, tx.read_bytes()])
    assert without_source(mixed).equals(without_source(both), check_metadata=True)
    # Two unnamed contents are two logs (<bytes> and <bytes #2>), not one read twice.
    contents = perfcounters.read_log([edt.read_bytes(), tx.read_bytes()])
    assert without_source(contents).equals(without_source(both), check_metadata=True)


def test_compare_takes_contents() -> None:
    tx = data_file(TX)
    assert perfcounters.compare(tx.read_bytes(), io.BytesIO(tx.read_bytes())).equals(perfcounters.compare(tx, tx))


def test_errors_name_the_content() -> None:
    with pytest.raises(perfcounters.LogError, match=r"^<bytes>: not a counter log") as e:
        perfcounters.read_log(b"Time,Value\r\n1,2\r\n")
    assert e.value.source == "<bytes>"
    bad_row = io.BytesIO(b'"(PDH-CSV 4.0)","\\\\M\\Memory\\Available MBytes"\r\n"x","1"\r\n')
    bad_row.name = "upload.csv"
    with pytest.raises(perfcounters.LogError) as e:
        perfcounters.read_log(bad_row)
    assert e.value.source == "upload.csv"
    assert e.value.location == "line 2, column 1"
    with pytest.raises(perfcounters.LogError, match="is read from a file, not from memory"):
        perfcounters.read_log(b"SQLite format 3\x00" + bytes(100))


def test_a_damaged_blg_in_memory_warns_as_its_file_does(tmp_path: Path) -> None:
    cut = data_file(TX).read_bytes()[:100_000]
    with pytest.warns(perfcounters.LogWarning, match=r"^<bytes>: EVENT_TRACE_HEADER at offset 99912: .* \(64 samples\)"):
        table = perfcounters.read_log(cut)
    assert table.num_rows == 64
    (tmp_path / "cut.blg").write_bytes(cut)
    with pytest.warns(perfcounters.LogWarning):
        assert without_source(table).equals(without_source(perfcounters.read_log(tmp_path / "cut.blg")))
    with pytest.raises(perfcounters.LogError, match=r"^<bytes>: EVENT_TRACE_HEADER"):
        perfcounters.read_log(cut, strict=True)


def test_a_text_file_object_is_refused(tmp_path: Path) -> None:
    text = tmp_path / "log.csv"
    text.write_text("x")
    with open(text) as f, pytest.raises(TypeError, match="binary mode"):
        perfcounters.read_log(f)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="not int"):
        perfcounters.read_log(3)  # type: ignore[arg-type]
