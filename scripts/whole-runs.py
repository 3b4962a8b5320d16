#!/usr/bin/env python3
"""Whole runs: the conversions and reads as a user runs them, file to file, in one run.

Usage: scripts/whole-runs.py [--runs N] [--rows R] [--no-build] [--no-python] [--no-blg]
                             [--blg-mb MB] [--dir DIR] [--python PATH] [--before BINARY]

Builds the release binary (`cargo build --release -p perfcounters-cli`), the generator of the
benchmarks' binary log (`--example bench_blg`) and, unless --no-python, a release wheel of the
Python package (`maturin build --release`, unpacked into DIR, never installed). Then writes fresh
inputs into DIR (default target/whole-runs):

* float.csv: relog's shape, 300 `\\\\BENCH\\Processor(N)\\% Processor Time`-like columns × R rows
  (default 20,000), values with six decimals (`12.345678`), uniformly random in [0, 100): about
  72 MB, and 26.6 bits of information per value, so no encoding stores it below 20 MB;
* int.csv: 200 `\\\\BENCH\\Process(pN)\\Working Set` columns × R rows: whole pages, 10^7..10^10,
  unchanged two samples in three, else moved by up to ±2,048 pages;
* the benchmarks' generated `.blg` (`--blg-mb`, 200 MB by default), written again before each run.

and times whole processes, interleaved (one run of every case, then the next round), each after
`sync` (the previous runs' outputs and the fresh `.blg` written back first, not during the run:
on this 2-core virtual machine the writeback of the run before took the first pass of a `.blg` from
60 to 90 ms), `runs` rounds
(default 5): best and median wall time, MB/s of input (10^6 bytes per second, on the best time),
the child's CPU time (user + system, median; for Python the whole interpreter, imports and warm-up
included), its peak RSS (`ru_maxrss` from `wait4`), the output's size over the input's, and for
Parquet its size over relog's CSV of the same input:

* `perfcounters relog float.csv -o out.csv`, the same for int.csv and the `.blg`;
* `perfcounters relog X -o out.parquet` for float.csv, int.csv and the `.blg`;
* Python, one interpreter per run that imports its library and reads a 50-row copy first (not
  timed), then one timed read of the file: `perfcounters.read_log(csv)` (a `pyarrow.Table`),
  `pandas.read_csv`, `pyarrow.csv.read_csv`, `polars.read_csv`, on float.csv.

`--before BINARY` times another build of the CLI (an earlier commit's) beside this one, in the same
rounds: its rows are marked "(before)".

Prints the machine, the date, the load average before and after, and one Markdown table. Run it with the
venv's Python (/work/venv-pl/bin/python here) or one that has pandas, pyarrow and polars.
"""

import argparse
import os
import platform
import shutil
import statistics
import subprocess
import sys
import time
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def target_dir() -> Path:
    return Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))


def write_float_log(path: Path, rows: int, columns: int = 300) -> None:
    """relog's PDH-CSV shape with six-decimal values like a `% Processor Time` log."""
    x = 0x9E3779B97F4A7C15
    mask = (1 << 64) - 1
    tmp = path.with_suffix(".partial")
    with open(tmp, "w", newline="") as w:
        head = ['"(PDH-CSV 4.0) (Pacific Standard Time)(480)"']
        head += [f'"\\\\BENCH\\Processor({c})\\% Processor Time"' for c in range(columns)]
        w.write(",".join(head) + "\r\n")
        for r in range(rows):
            cells = [f'"02/01/2014 {r // 3600 % 24:02}:{r // 60 % 60:02}:{r % 60:02}.718"']
            for _ in range(columns):
                x ^= (x << 13) & mask
                x ^= x >> 7
                x ^= (x << 17) & mask
                cells.append(f'"{(x % 100_000_000) / 1_000_000:.6f}"')
            w.write(",".join(cells) + "\r\n")
    tmp.rename(path)


def write_int_log(path: Path, rows: int, columns: int = 200) -> None:
    """relog's PDH-CSV shape with `Working Set` columns as processes show them: bytes in whole 4 KiB
    pages, 10^7..10^10, unchanged from one sample to the next two times in three, else moved by up to
    ±2,048 pages."""
    x = 0x2545F4914F6CDD1D
    mask = (1 << 64) - 1
    tmp = path.with_suffix(".partial")
    with open(tmp, "w", newline="") as w:
        head = ['"(PDH-CSV 4.0) (Pacific Standard Time)(480)"']
        head += [f'"\\\\BENCH\\Process(p{c})\\Working Set"' for c in range(columns)]
        w.write(",".join(head) + "\r\n")
        pages = [2_500 + c * 12_000 for c in range(columns)]
        for r in range(rows):
            cells = [f'"02/01/2014 {r // 3600 % 24:02}:{r // 60 % 60:02}:{r % 60:02}.718"']
            for c in range(columns):
                x ^= (x << 13) & mask
                x ^= x >> 7
                x ^= (x << 17) & mask
                if x % 3 == 0:
                    pages[c] = max(256, pages[c] + (x >> 8) % 4097 - 2048)
                cells.append(f'"{pages[c] * 4096}"')
            w.write(",".join(cells) + "\r\n")
    tmp.rename(path)


def head_copy(src: Path, dst: Path, lines: int = 51) -> None:
    """The first `lines` lines of `src` (the header and 50 rows by default) into `dst`."""
    with open(src, "rb") as r, open(dst, "wb") as w:
        for _ in range(lines):
            line = r.readline()
            if not line:
                break
            w.write(line)


def run_child(argv, env=None):
    """Runs argv; returns (wall seconds, peak RSS in MB, stdout, CPU seconds: user + system)."""
    t0 = time.perf_counter()
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    out = p.stdout.read()
    err = p.stderr.read()
    _, status, usage = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t0
    p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode != 0:
        sys.exit(f"{' '.join(map(str, argv))} failed ({p.returncode}): {err.decode(errors='replace')}")
    return wall, usage.ru_maxrss / 1024, out.decode(), usage.ru_utime + usage.ru_stime


PY_READ = {
    "perfcounters.read_log": ("import perfcounters as m", "m.read_log(P)"),
    "pandas.read_csv": ("import pandas as m", "m.read_csv(P)"),
    "pyarrow.csv.read_csv": ("import pyarrow.csv as m", "m.read_csv(P)"),
    "polars.read_csv": ("import polars as m", "m.read_csv(P)"),
}


def fresh_read_code(setup: str, call: str, path: Path, small: Path) -> str:
    """Python code for an interpreter of its own: runs `setup` (the imports), evaluates `call` with
    `P` the path of `small` (not timed: the first call of an interpreter loads what it needs), then
    with `P` the path of `path`, and prints the seconds that second call took. Also used by
    scripts/pandas-compare.py."""
    return (
        f"import time\n{setup}\nP = {str(small)!r}\n{call}\nP = {str(path)!r}\n"
        f"t = time.perf_counter()\n{call}\nprint(time.perf_counter() - t)\n"
    )


def python_child(python: str, lib: str, path: Path, small: Path) -> list:
    imp, call = PY_READ[lib]
    return [python, "-c", fresh_read_code(imp, call, path, small)]


def build(args, dirs: Path) -> Path:
    env = dict(os.environ)
    subprocess.run(["cargo", "build", "--release", "-p", "perfcounters-cli"], cwd=ROOT, check=True)
    wheel_dir = dirs / "wheel"
    if not args.no_python:
        shutil.rmtree(wheel_dir, ignore_errors=True)
        maturin = Path(args.python).parent / "maturin"
        subprocess.run(
            [str(maturin), "build", "--release", "-o", str(wheel_dir / "dist")],
            cwd=ROOT / "crates" / "perfcounters-py",
            check=True,
            env=env,
        )
        wheel = next((wheel_dir / "dist").glob("*.whl"))
        with zipfile.ZipFile(wheel) as z:
            z.extractall(wheel_dir / "pkg")
    return wheel_dir / "pkg"


def blg_input(args) -> Path:
    """The benchmarks' `.blg`, written (again) by the `bench_blg` example: the built example when
    there is one (--no-build), else through `cargo run`."""
    env = dict(os.environ, PERFCOUNTERS_BLG_BENCH_MB=str(args.blg_mb))
    built = target_dir() / "release" / "examples" / "bench_blg"
    if args.no_build and built.exists():
        argv = [str(built)]
    else:
        argv = ["cargo", "run", "--release", "-q", "-p", "perfcounters", "--example", "bench_blg"]
    out = subprocess.run(argv, cwd=ROOT, check=True, env=env, capture_output=True, text=True).stdout
    return Path(out.split("\t")[0])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--rows", type=int, default=20_000)
    ap.add_argument("--blg-mb", type=int, default=200)
    ap.add_argument("--dir", type=Path, default=target_dir() / "whole-runs")
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--no-build", action="store_true")
    ap.add_argument("--no-python", action="store_true")
    ap.add_argument("--no-blg", action="store_true")
    ap.add_argument("--before", help="another perfcounters binary to time beside this build")
    args = ap.parse_args()

    d = args.dir
    d.mkdir(parents=True, exist_ok=True)
    pkg = d / "wheel" / "pkg"
    if not args.no_build:
        pkg = build(args, d)
    exe = str(target_dir() / "release" / "perfcounters")
    load_before = os.getloadavg()

    inputs = {"float": d / "float.csv", "int": d / "int.csv"}
    write_float_log(inputs["float"], args.rows)
    write_int_log(inputs["int"], args.rows)
    small = d / "float-small.csv"
    head_copy(inputs["float"], small)
    blg = None if args.no_blg else blg_input(args)

    cases = []  # (name, input path, argv, output path or None)
    sources = [(key, inputs[key]) for key in ("float", "int")]
    if blg is not None:
        sources.append(("blg", blg))
    binaries = [("", exe)] + ([(" (before)", args.before)] if args.before else [])
    for key, src in sources:
        for what, out in (("CSV", d / "out.csv"), ("Parquet", d / "out.parquet")):
            for label, binary in binaries:
                argv = [binary, "relog", str(src), "-y", "-o", str(out)]
                cases.append((f"{src.name} → {what}{label}", src, argv, out))
    env = dict(os.environ, PYTHONPATH=str(pkg))
    if not args.no_python:
        for lib in PY_READ:
            cases.append((f"Python {lib}(float.csv)", inputs["float"], python_child(args.python, lib, inputs["float"], small), None))

    times = {c[0]: [] for c in cases}
    cpu = {c[0]: [] for c in cases}
    rss = {c[0]: 0.0 for c in cases}
    sizes = {}
    for _ in range(args.runs):
        if blg is not None:
            blg_input(args)  # written again: read from a freshly written file
        for name, src, argv, out in cases:
            if out is not None and out.exists():
                out.unlink()
            # The outputs of the runs before (and the freshly written `.blg`) are on their way to
            # the disk: flushed now, they are not written back during this run, on its cores.
            # The input stays in the page cache, as a log just written or copied is.
            os.sync()
            wall, peak, stdout, used = run_child(argv, env if name.startswith("Python") else None)
            cpu[name].append(used)
            if name.startswith("Python"):
                wall = float(stdout.strip().splitlines()[-1])
            times[name].append(wall)
            rss[name] = max(rss[name], peak)
            if out is not None:
                sizes[name] = out.stat().st_size
                out.unlink()
    load_after = os.getloadavg()

    print(f"Machine: {platform.node()}, {os.cpu_count()} cores, {platform.platform()}")
    print(f"Date: {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; runs: {args.runs}, interleaved")
    print(f"Load average before: {load_before[0]:.2f} {load_before[1]:.2f} {load_before[2]:.2f}; "
          f"after: {load_after[0]:.2f} {load_after[1]:.2f} {load_after[2]:.2f}")
    print()
    print("| case | input MB | best s | median s | MB/s (best) | CPU s (median) | peak RSS MB | output / input | Parquet / relog's CSV |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name, src, _, _ in cases:
        mb = src.stat().st_size / 1e6
        best = min(times[name])
        med = statistics.median(times[name])
        ratio = f"{sizes[name] / src.stat().st_size:.3f}" if name in sizes else ""
        csv_name = name.replace("→ Parquet", "→ CSV")
        vs_csv = ""
        if "→ Parquet" in name and csv_name in sizes:
            vs_csv = f"{sizes[name] / sizes[csv_name]:.3f}"
        used = statistics.median(cpu[name])
        print(f"| {name} | {mb:.1f} | {best:.3f} | {med:.3f} | {mb / best:.0f} | {used:.2f} | {rss[name]:.0f} | {ratio} | {vs_csv} |")

if __name__ == "__main__":
    main()
