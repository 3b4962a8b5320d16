#!/usr/bin/env bash
# The workspace's `rust-version` (and the Python crate's) must be at least the newest `rust-version` that a
# locked dependency declares: a toolchain older than that cannot build the locked dependencies, whatever
# our own code needs. Clippy's `incompatible_msrv` lint checks our own code against the same number.
# Also fails when a lock file is out of date (`--locked`).
set -euo pipefail
cd "$(dirname "$0")/.."
check() {
    local manifest=$1 declared
    declared=$(grep -m1 '^rust-version' "$manifest" | sed 's/.*"\(.*\)".*/\1/')
    cargo metadata --format-version 1 --locked --manifest-path "$manifest" |
        python3 -c '
import json, sys
declared = tuple(int(x) for x in sys.argv[1].split("."))
meta = json.load(sys.stdin)
need = max(
    ((tuple(int(x) for x in p["rust_version"].split(".")), p["name"], p["version"])
     for p in meta["packages"] if p.get("rust_version")),
    default=((0,), "", ""),
)
ok = need[0] <= declared
version = ".".join(map(str, need[0]))
print(f"{sys.argv[2]}: rust-version {sys.argv[1]}; newest needed by a locked dependency: "
      f"{version} ({need[1]} {need[2]})" + ("" if ok else "  <-- too old"))
sys.exit(0 if ok else 1)
' "$declared" "$manifest"
}
check Cargo.toml
check crates/perfcounters-py/Cargo.toml
# The documents state the same minimum.
declared=$(grep -m1 '^rust-version' Cargo.toml | sed 's/.*"\(.*\)".*/\1/')
grep -q "(stable, $declared or newer" README.md || { echo "README.md does not state Rust $declared"; exit 1; }
grep -q "Rust ($declared or newer" docs/python.md || { echo "docs/python.md does not state Rust $declared"; exit 1; }
