"""read_log compares counter names by the library's one case rule (``path::fold_case``): per
character, so ``ΣΣ`` is ``σσ`` (not ``σς``, which ``str.lower`` makes of it), ``İ`` is not ``i̇``
(its ``str.lower``), and ``ẞ`` is ``ß`` while ``SS`` is another name."""

from __future__ import annotations

from pathlib import Path

import perfcounters

HEADER = '"(PDH-CSV 4.0) (Pacific Standard Time)(480)"'
DOTTED_I = "\u0130"
DOTTED_I_LOWER = "i\u0307"


def write_log(path: Path, columns: list[str], rows: list[tuple[str, list[str]]]) -> Path:
    lines = [",".join([HEADER] + [f'"{c}"' for c in columns])]
    for time, values in rows:
        lines.append(",".join([f'"{time}"'] + [f'"{v}"' for v in values]))
    path.write_text("\r\n".join(lines) + "\r\n", encoding="utf-8")
    return path


def test_the_names_are_where_the_rules_disagree() -> None:
    assert "ΣΣ".lower() == "σς"
    assert DOTTED_I.lower() == DOTTED_I_LOWER


def test_counters_select_columns_named_in_another_case(tmp_path: Path) -> None:
    columns = [
        r"\\H\σσ\x",
        r"\\H\σς\x",
        rf"\\H\{DOTTED_I}\y",
        rf"\\H\{DOTTED_I_LOWER}\y",
        r"\\H\ß\z",
        r"\\H\SS\z",
    ]
    path = write_log(
        tmp_path / "case.csv",
        columns,
        [
            ("02/01/2014 00:00:00.000", ["1", "2", "3", "4", "5", "6"]),
            ("02/01/2014 00:00:01.000", ["7", "8", "9", "10", "11", "12"]),
        ],
    )
    table = perfcounters.read_log(path, counters=[r"\ΣΣ\X", rf"\{DOTTED_I}\Y", "\\\u1e9e\\Z"])
    assert table.column_names == ["time", r"\\H\σσ\x", rf"\\H\{DOTTED_I}\y", r"\\H\ß\z"]
    assert table.column(1).to_pylist() == [1.0, 7.0]
    assert table.column(2).to_pylist() == [3.0, 9.0]
    assert table.column(3).to_pylist() == [5.0, 11.0]


def test_merged_logs_join_columns_named_in_another_case(tmp_path: Path) -> None:
    a = write_log(
        tmp_path / "a.csv",
        [r"\\H\ΣΣ\x", r"\\H\ẞ\z"],
        [("02/01/2014 00:00:00.000", ["1", "2"])],
    )
    b = write_log(
        tmp_path / "b.csv",
        [r"\\H\σσ\x", r"\\H\σς\x", r"\\H\ß\z"],
        [("02/01/2014 00:00:01.000", ["3", "4", "5"])],
    )
    table = perfcounters.read_log([a, b])
    assert table.column_names == ["time", r"\\H\ΣΣ\x", r"\\H\ẞ\z", r"\\H\σς\x"]
    assert table.column(1).to_pylist() == [1.0, 3.0]
    assert table.column(2).to_pylist() == [2.0, 5.0]
    assert table.column(3).to_pylist() == [None, 4.0]
