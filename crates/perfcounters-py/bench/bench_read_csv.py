"""read_log(csv).to_pandas() against pandas.read_csv on the same PDH-CSV, and a .blg read.

    python crates/perfcounters-py/bench/bench_read_csv.py [--rows N] [--columns N] [--repeat N]

Writes a PDH-CSV as Performance Monitor writes it (quoted cells, the `(PDH-CSV 4.0) (zone)(bias)`
header cell, 20-digit values, `" "` for blanks, CRLF), then times, best of `--repeat`:

* `perfcounters.read_log(path).to_pandas()`: a DataFrame with a UTC `time` column and float64
  columns, blanks as NaN;
* `pandas.read_csv(path, na_values=[" "], parse_dates=...)`: the same DataFrame from pandas'
  C parser (the time column parsed with the format PDH writes);

and, when the shared logs are beside the repository, `read_log` of the shared .blg files. Prints a
Markdown table. Timings taken on a loaded machine are not figures to quote: re-run on a quiet one.
"""

from __future__ import annotations

import argparse
import datetime as dt
import random
import tempfile
import time
from pathlib import Path
from typing import Callable

import pandas as pd

import perfcounters

DATA = Path(__file__).resolve().parents[3].parent / "shared" / "data"


def write_pdh_csv(path: Path, rows: int, columns: int, seed: int = 7) -> None:
    rng = random.Random(seed)
    names = [f"\\\\BENCH\\Process(app#{i})\\% Processor Time" for i in range(columns)]
    start = dt.datetime(2026, 11, 26, 9, 0, 0)
    with open(path, "w", newline="", encoding="ascii") as f:
        f.write('"(PDH-CSV 4.0) (Pacific Standard Time)(480)",' + ",".join(f'"{n}"' for n in names) + "\r\n")
        for r in range(rows):
            t = start + dt.timedelta(seconds=r)
            cells = [t.strftime("%m/%d/%Y %H:%M:%S.") + f"{t.microsecond // 1000:03d}"]
            for _ in range(columns):
                cells.append(" " if rng.random() < 0.02 else f"{rng.uniform(0, 100):.17g}")
            f.write(",".join(f'"{c}"' for c in cells) + "\r\n")


def best(fn: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=20_000)
    parser.add_argument("--columns", type=int, default=50)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "bench.csv"
        write_pdh_csv(path, args.rows, args.columns)
        size = path.stat().st_size / 2**20

        ours = perfcounters.read_log(path).to_pandas()
        theirs = pd.read_csv(path, na_values=[" "], parse_dates=[0], date_format="%m/%d/%Y %H:%M:%S.%f")
        # The same values (the time column: ours is UTC, pandas' the wall clock).
        assert ours.shape == theirs.shape
        assert ours.iloc[:, 1:].equals(theirs.iloc[:, 1:].set_axis(ours.columns[1:], axis=1))

        t_ours = best(lambda: perfcounters.read_log(path).to_pandas(), args.repeat)
        t_pandas = best(
            lambda: pd.read_csv(path, na_values=[" "], parse_dates=[0], date_format="%m/%d/%Y %H:%M:%S.%f"),
            args.repeat,
        )
        print(f"PDH-CSV: {args.rows} rows x {args.columns} columns, {size:.1f} MiB, best of {args.repeat}")
        print()
        print("| reader | seconds | MiB/s |")
        print("|---|---|---|")
        print(f"| perfcounters.read_log(csv).to_pandas() | {t_ours:.3f} | {size / t_ours:.0f} |")
        print(f"| pandas.read_csv | {t_pandas:.3f} | {size / t_pandas:.0f} |")

    for blg in sorted((DATA / "blg").glob("*.blg")):
        mib = blg.stat().st_size / 2**20
        t = best(lambda: perfcounters.read_log(blg), args.repeat)
        print(f"| perfcounters.read_log({blg.name}) | {t:.3f} | {mib / t:.0f} |")


if __name__ == "__main__":
    main()
