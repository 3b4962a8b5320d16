#!/usr/bin/env python3
"""Reading a PDH-CSV: pandas beside perfcounters, in one run on the same file.

Usage: scripts/pandas-compare.py [--runs N] [--rows R] [--columns C] [--binary PATH] [--file PATH]
                                 [--package NAME=DIR ...]

Runs with a Python that has pandas (and pyarrow for pandas' pyarrow engine; the `perfcounters`
package too for the `read_log` line, skipped otherwise). The file is generated once into the
temporary directory: relog's output shape, `rows` × `columns` (default 20,000 × 300, about
100 MB) of `\\\\BENCH\\Process(pN)\\Counter K`, the cells of `benches/logs.rs`'s generator (one in
16 blank `" "`, integers, 20-significant-digit values, three-digit exponents).

Timed, alternating, `runs` times each (median and best printed, wall clock):
* pandas `read_csv` (C engine, then pyarrow engine) + min/mean/max of every column;
* `perfcounters relog FILE --stats csv` (every value read and summarized, output discarded);
* `perfcounters relog FILE -o OUT.csv` (CSV → CSV, unfiltered, into the temporary directory);
* `perfcounters.read_log(FILE).to_pandas()` beside `pandas.read_csv(FILE)` (values only).
The binary is target/release/perfcounters unless --binary is given (build it first:
`cargo build --release -p perfcounters-cli`).

`--package NAME=DIR` (repeatable) adds `read_log(FILE).to_pandas() [NAME]` with the `perfcounters` package
found in DIR (an unpacked wheel: `python -m zipfile -e WHEEL DIR`), and `pandas.read_csv(FILE)` beside it,
each timed in an interpreter of its own that has imported pandas and the package and read a 50-row copy
of the file first (the first call of an interpreter imports pandas): two builds A/B in one run.
"""

import argparse
import importlib.util
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parent.parent

# The whole-run timing of a read in an interpreter of its own, shared with scripts/whole-runs.py.
_spec = importlib.util.spec_from_file_location("whole_runs", Path(__file__).with_name("whole-runs.py"))
whole_runs = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(whole_runs)


def precise(v: float) -> str:
    """printf("%.20g") of the Microsoft C runtime: three-digit exponents."""
    s = "%.20g" % v
    if "e" in s:
        mantissa, exp = s.split("e")
        s = f"{mantissa}e{exp[0]}{exp[1:].zfill(3)}"
    return s


def generate(path: Path, rows: int, columns: int) -> None:
    """The generator of benches/logs.rs (same xorshift, same cell mix)."""
    mask = (1 << 64) - 1
    x = 0x9E3779B97F4A7C15
    tmp = path.with_suffix(".partial")
    with open(tmp, "w", newline="") as w:
        head = ['"(PDH-CSV 4.0) (Pacific Standard Time)(480)"']
        head += [f'"\\\\BENCH\\Process(p{c // 20})\\Counter {c % 20}"' for c in range(columns)]
        w.write(",".join(head) + "\r\n")
        for r in range(rows):
            cells = [f'"02/01/2014 {r // 3600 % 24:02}:{r // 60 % 60:02}:{r % 60:02}.718"']
            for c in range(columns):
                x ^= (x << 13) & mask
                x ^= x >> 7
                x ^= (x << 17) & mask
                k = c % 20
                if x % 16 == 0:
                    cells.append('" "')
                elif k <= 9:
                    cells.append(f'"{x >> 40}"')
                elif k <= 17:
                    cells.append(f'"{precise((x >> 11) / 9.1e12)}"')
                else:
                    cells.append(f'"{precise((x >> 11) * 1e-21)}"')
            w.write(",".join(cells) + "\r\n")
    os.replace(tmp, path)


def timed(f):
    t = time.perf_counter()
    f()
    return time.perf_counter() - t


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--rows", type=int, default=20_000)
    ap.add_argument("--columns", type=int, default=300)
    ap.add_argument("--binary", default=str(ROOT / "target/release/perfcounters"))
    ap.add_argument("--file")
    ap.add_argument("--package", action="append", default=[], metavar="NAME=DIR")
    args = ap.parse_args()
    tmpdir = Path(tempfile.gettempdir())
    path = Path(args.file) if args.file else tmpdir / f"perfcounters-pandas-{args.columns}cols-{args.rows}rows.csv"
    if not path.is_file():
        print(f"generating {path} …", file=sys.stderr)
        generate(path, args.rows, args.columns)
    size = path.stat().st_size
    out = tmpdir / f"perfcounters-pandas-compare-{os.getpid()}.csv"

    def pandas_stats(engine):
        def run():
            df = pd.read_csv(path, na_values=[" "], engine=engine)
            values = df.iloc[:, 1:]
            return values.min(), values.mean(), values.max()
        return run

    def relog(*extra):
        def run():
            subprocess.run([args.binary, "relog", str(path), *extra], check=True,
                           stdout=subprocess.DEVNULL)
        return run

    cases = {
        "pandas read_csv (C engine) + min/mean/max": pandas_stats("c"),
        "pandas read_csv (pyarrow engine) + min/mean/max": pandas_stats("pyarrow"),
        "perfcounters relog --stats": relog("--stats", "csv"),
        "perfcounters relog CSV -> CSV (unfiltered)": relog("-o", str(out), "-y"),
    }
    try:
        import perfcounters
        cases["pandas.read_csv(FILE)"] = lambda: pd.read_csv(path, na_values=[" "])
        cases["perfcounters.read_log(FILE).to_pandas()"] = lambda: perfcounters.read_log(str(path)).to_pandas()
    except ImportError:
        print("(no perfcounters package in this Python: read_log not measured)", file=sys.stderr)

    if args.package:
        small = tmpdir / f"perfcounters-pandas-compare-small-{os.getpid()}.csv"
        whole_runs.head_copy(path, small)

        def fresh(setup, call, pythonpath):
            code = whole_runs.fresh_read_code(f"import pandas as pd\n{setup}", call, path, small)

            def run():
                env = dict(os.environ)
                if pythonpath:
                    env["PYTHONPATH"] = os.pathsep.join([pythonpath, env.get("PYTHONPATH", "")])
                _, _, out, _ = whole_runs.run_child([sys.executable, "-c", code], env)
                return float(out.strip().splitlines()[-1])
            return run

        for spec in args.package:
            name, _, pkg = spec.partition("=")
            cases[f"read_log(FILE).to_pandas() [{name}]"] = fresh(
                "import perfcounters", "perfcounters.read_log(P).to_pandas()", pkg)
        cases["pandas.read_csv(FILE) [own interpreter]"] = fresh(
            "", "pd.read_csv(P, na_values=[' '])", None)

    times = {name: [] for name in cases}
    for _ in range(args.runs):
        for name, f in cases.items():
            if name.endswith("]"):
                times[name].append(f())
            else:
                times[name].append(timed(f))
    out.unlink(missing_ok=True)
    if args.package:
        small.unlink(missing_ok=True)
    load = os.getloadavg()
    print(f"file: {path} ({size / 1e6:.1f} MB, {args.rows} rows x {args.columns} counters), "
          f"{args.runs} runs alternating, load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}, "
          f"{os.cpu_count()} cores, pandas {pd.__version__}")
    print(f"{'case':<50} {'median s':>9} {'best s':>8} {'MB/s (median)':>14}")
    for name, t in times.items():
        m = statistics.median(t)
        print(f"{name:<50} {m:9.3f} {min(t):8.3f} {size / 1e6 / m:14.0f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
