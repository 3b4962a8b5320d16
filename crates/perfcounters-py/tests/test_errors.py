"""Errors are Python exceptions with the place they name, never a crash of the interpreter."""

from __future__ import annotations

import datetime as dt
import errno
import os
from pathlib import Path

import pytest

import perfcounters
from conftest import data_file


def test_exception_hierarchy() -> None:
    assert issubclass(perfcounters.LogError, ValueError)
    assert issubclass(perfcounters.DecodeError, perfcounters.LogError)


def test_missing_file_is_file_not_found(tmp_path: Path) -> None:
    missing = tmp_path / "nothere.blg"
    with pytest.raises(FileNotFoundError) as e:
        perfcounters.read_log(missing)
    assert e.value.filename == str(missing)
    assert e.value.errno == 2


def test_os_error_text_is_the_os_own(tmp_path: Path) -> None:
    missing = tmp_path / "nothere.csv"
    with pytest.raises(FileNotFoundError) as e:
        perfcounters.read_log(missing)
    # As Python's own OSError: the number, the OS's text for it, the file.
    assert e.value.errno == errno.ENOENT
    assert e.value.strerror == os.strerror(errno.ENOENT)
    assert str(e.value) == f"[Errno {errno.ENOENT}] {os.strerror(errno.ENOENT)}: '{missing}'"


def test_corrupt_parquet_message_says_each_cause_once(tmp_path: Path) -> None:
    path = tmp_path / "cut.parquet"
    path.write_bytes(b"PAR1" + bytes(16) + b"PAR!")
    with pytest.raises(perfcounters.LogError) as e:
        perfcounters.read_log(path)
    assert e.value.source == str(path)
    assert e.value.location is None
    # The log, then the Parquet reader's own message.
    assert str(e.value) == f"{path}: Parquet error: Invalid Parquet file. Corrupt footer"


def test_unreadable_file_is_permission_error(tmp_path: Path) -> None:
    path = tmp_path / "locked.csv"
    path.write_bytes(data_file("logs/en-pst-BM_Active_Load_Test.csv").read_bytes())
    path.chmod(0)
    if os.geteuid() != 0:
        with pytest.raises(PermissionError):
            perfcounters.read_log(path)
        return
    # root reads any file: the read is tried in a child that has dropped to an unprivileged user.
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            os.setgid(65534)
            os.setuid(65534)
            perfcounters.read_log(path)
        except PermissionError as e:
            code = 0 if e.filename == str(path) else 2
        except BaseException:
            code = 3
        os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0


def test_truncated_blg_is_a_decode_error(tmp_path: Path) -> None:
    path = tmp_path / "cut.blg"
    path.write_bytes(data_file("blg/tx-win8-BasicPerfCounters.blg").read_bytes()[:100])
    with pytest.raises(perfcounters.DecodeError) as e:
        perfcounters.read_log(path)
    assert e.value.structure == "WMI_BUFFER_HEADER"
    assert e.value.offset == 0
    assert e.value.source == str(path)
    assert e.value.location == "WMI_BUFFER_HEADER at offset 0"
    assert "needs 560 bytes, 100 available" in str(e.value)
    assert isinstance(e.value, ValueError)


def test_bad_csv_row_is_a_log_error_naming_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "bad.csv"
    path.write_text(
        '"(PDH-CSV 4.0) (Pacific Standard Time)(480)","\\\\M\\Memory\\Available Bytes"\n'
        '"02/19/2013 18:50:17.844","12","13"\n'
    )
    with pytest.raises(perfcounters.LogError) as e:
        perfcounters.read_log(path)
    assert not isinstance(e.value, perfcounters.DecodeError)
    assert e.value.source == str(path)
    assert e.value.location == "line 2, column 3"
    assert "the row has 3 cells, the header 2" in str(e.value)


def test_not_a_log(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("nothing to see\n")
    with pytest.raises(perfcounters.LogError) as e:
        perfcounters.read_log(path)
    assert e.value.source == str(path)


def test_bad_arguments_are_value_and_type_errors() -> None:
    path = data_file("logs/en-pst-BM_Active_Load_Test.csv")
    with pytest.raises(ValueError, match="invalid counter path"):
        perfcounters.read_log(path, counters=["no backslash"])
    with pytest.raises(ValueError, match="no counter of the input matches"):
        perfcounters.read_log(path, counters=[r"\Nothing\Here"])
    with pytest.raises(ValueError, match="empty"):
        perfcounters.read_log([])
    with pytest.raises(TypeError):
        perfcounters.read_log(path, begin="yesterday")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="out of range"):
        perfcounters.read_log(path, begin=dt.datetime(1, 1, 1))


CPU_LOG = (
    '"(PDH-CSV 4.0) (Coordinated Universal Time)(0)","\\\\M\\Processor(_Total)\\% Processor Time",'
    '"\\\\M\\Memory\\Available MBytes"\r\n'
    '"02/01/2014 00:00:00.000","12.5","1024"\r\n'
    '"02/01/2014 00:00:01.000","37.5","1000"\r\n'
)


def test_misspelt_counter_raises_the_commands_suggestion(tmp_path: Path, cli: Path) -> None:
    """A path that selects nothing gives the reason and the log's closest names, word for word
    as `perfcounters relog -c` prints them."""
    import subprocess

    path = tmp_path / "cpu.csv"
    path.write_text(CPU_LOG, encoding="utf-8")
    with pytest.raises(ValueError) as e:
        perfcounters.read_log(path, counters=[r"\Procesor(*)\*"])
    assert str(e.value) == (
        "no counter of the input matches `counters`:\n"
        '  \\Procesor(*)\\*: the log has no object "Procesor"; did you mean "Processor"?'
    )
    run = subprocess.run(
        [str(cli), "relog", str(path), "-c", r"\Procesor(*)\*", "-f", "csv"],
        capture_output=True,
        text=True,
    )
    assert run.returncode != 0
    reason = '\\Procesor(*)\\*: the log has no object "Procesor"; did you mean "Processor"?'
    assert run.stderr == f"perfcounters: no counter of the input matches -c / -cf:\n  {reason}\n"


def test_a_path_that_selects_nothing_beside_others_is_a_warning(tmp_path: Path) -> None:
    path = tmp_path / "cpu.csv"
    path.write_text(CPU_LOG, encoding="utf-8")
    with pytest.warns(perfcounters.LogWarning) as caught:
        table = perfcounters.read_log(
            path, counters=[r"\Processor(*)\% Processor Time", r"\Memory\Available Mbyte"]
        )
    assert table.column_names == ["time", "\\\\M\\Processor(_Total)\\% Processor Time"]
    assert [str(w.message) for w in caught] == [
        '\\Memory\\Available Mbyte: object "Memory" has no counter named "Available Mbyte"; '
        'did you mean "Available MBytes"?'
    ]


def _damaged(tmp_path: Path) -> "tuple[Path, Path]":
    """The Tx log with one bit flipped in a raw counter array of its 16th sample, and cut in half."""
    data = data_file("blg/tx-win8-BasicPerfCounters.blg").read_bytes()
    flipped = bytearray(data)
    flipped[74883] ^= 0x10
    bit = tmp_path / "flipped.blg"
    bit.write_bytes(bytes(flipped))
    cut = tmp_path / "cut.blg"
    cut.write_bytes(data[: len(data) // 2])
    return bit, cut


def test_damaged_blg_warns_and_strict_raises(tmp_path: Path) -> None:
    bit, cut = _damaged(tmp_path)
    expected = {
        bit: (
            15,
            f"{bit}: PDH raw counter array at offset 74880: string offset 268435616 is outside the "
            "string area; the log is read up to there (15 samples)",
        ),
        cut: (248, f"{cut}: offset 72: the log-file header counts 6 buffers, the file holds 3"),
    }
    for path, (rows, message) in expected.items():
        with pytest.warns(perfcounters.LogWarning) as caught:
            table = perfcounters.read_log(path)
        assert table.num_rows == rows
        assert [str(w.message) for w in caught] == [message]
        with pytest.raises(perfcounters.LogError) as e:
            perfcounters.read_log(path, strict=True)
        assert str(e.value) == message
    # An undamaged log reads the same with strict=True.
    whole = data_file("blg/tx-win8-BasicPerfCounters.blg")
    assert perfcounters.read_log(whole, strict=True).num_rows == 601
