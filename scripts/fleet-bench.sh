#!/usr/bin/env bash
# The fleet report's speed and memory, as a user runs it: 12 generated `.blg` logs of 12 machines
# (BENCH01 … BENCH12, 16 MB and 500 columns each; PERFCOUNTERS_FLEET_MB sets another size) and
# the analysis benchmarks' rules (bench.xml, one analysis per object), then, interleaved, ROUNDS
# rounds (3 by default) of
#
#   singles: 12 runs of `perfcounters analyze BENCHnn.blg --rules bench.xml -o single.html`
#   fleet:   1 run of `perfcounters analyze BENCH01.blg … BENCH12.blg --rules bench.xml -o fleet.html`
#
# each timed by /usr/bin/time: wall time, CPU time (user + system), the peak resident memory of
# the fleet run. Prints one line per round with the fleet's time over the singles'.
#
# Usage: scripts/fleet-bench.sh [ROUNDS]
#   BIN=path       the perfcounters binary to time (default: a release build made first)
#   BEFORE=path    another binary (an earlier commit's) timed in the same rounds, marked "before"
#   NO_BUILD=1     do not build (BIN and the generator must exist)
#   GEN=path       the generator of the logs (default: the release build of the bench_blg example)
#   DIR=path       where the reports go (default target/fleet-bench)
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-3}
target=${CARGO_TARGET_DIR:-target}
if [[ -z "${NO_BUILD:-}" ]]; then
    cargo build --release -q -p perfcounters-cli --bin perfcounters
    cargo build --release -q -p perfcounters --example bench_blg
fi
bin=${BIN:-$target/release/perfcounters}
mapfile -t paths < <("${GEN:-$target/release/examples/bench_blg}" fleet 12)
rules=${paths[-1]}
unset 'paths[-1]'
dir=${DIR:-$target/fleet-bench}
mkdir -p "$dir"

# One timed run: prints "wall cpu maxrss_kb".
timed() {
    local out
    out=$(/usr/bin/time -f '%e %U %S %M' "$@" 2>&1 >/dev/null | tail -n 1)
    awk '{ printf "%.2f %.2f %d\n", $1, $2 + $3, $4 }' <<<"$out"
}

# Singles then fleet of one binary: prints "singles_wall singles_cpu fleet_wall fleet_cpu fleet_rss".
round() {
    local b=$1 sw=0 sc=0 w c m
    for p in "${paths[@]}"; do
        read -r w c m < <(timed "$b" analyze "$p" --rules "$rules" -o "$dir/single.html" -y)
        sw=$(awk -v a="$sw" -v b="$w" 'BEGIN { print a + b }')
        sc=$(awk -v a="$sc" -v b="$c" 'BEGIN { print a + b }')
    done
    read -r w c m < <(timed "$b" analyze "${paths[@]}" --rules "$rules" -o "$dir/fleet.html" -y)
    echo "$sw $sc $w $c $m"
}

report() {
    awk -v who="$1" -v r="$2" '{ printf "%-7s round %d: singles %.2f s (CPU %.2f s), fleet %.2f s (CPU %.2f s, peak RSS %.0f MB): %.2fx\n", who, r, $1, $2, $3, $4, $5 / 1024, $3 / $1 }'
}

echo "$(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "12 logs: ${paths[0]} … ($(du -m "${paths[0]}" | cut -f1) MB each), rules $rules"
for r in $(seq 1 "$rounds"); do
    if [[ -n "${BEFORE:-}" ]]; then
        round "$BEFORE" | report before "$r"
    fi
    round "$bin" | report after "$r"
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
