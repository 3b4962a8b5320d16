#!/usr/bin/env bash
# Measures the CPU time used by `perfcounters watch` with the default counters at a 1 s interval.
#
# Usage: scripts/watch-cpu.sh [SECONDS] [BINARY]
#   SECONDS  measurement window (default 60)
#   BINARY   the perfcounters binary (default: target/release/perfcounters, built if needed)
#
# The command runs with `--format csv --output /dev/null`. After a 3 s warm-up (start-up and the
# priming collection), the process's CPU time is read at the start and the end of the window: in
# nanoseconds from /proc/<pid>/schedstat (time on a CPU, user and kernel), and in clock ticks from
# utime + stime of /proc/<pid>/stat. The script prints the CPU time used in the window as a
# percentage of one core, and the peak resident set size. Linux only.
set -euo pipefail

secs=${1:-60}
root=$(cd "$(dirname "$0")/.." && pwd)
bin=${2:-}
if [[ -z $bin ]]; then
    (cd "$root" && cargo build --release --quiet -p perfcounters-cli)
    bin=$root/target/release/perfcounters
fi
hz=$(getconf CLK_TCK)

# utime + stime of a process, in clock ticks. The command name may contain spaces and parentheses,
# so the fields are counted from the last ')'.
ticks() {
    local stat
    stat=$(<"/proc/$1/stat")
    stat=${stat##*) }
    awk '{ print $12 + $13 }' <<<"$stat"
}

# Time on a CPU in nanoseconds (first field of schedstat; 0 if the kernel has no schedstats).
run_ns() {
    local s
    s=$(cat "/proc/$1/schedstat" 2>/dev/null || echo 0)
    echo "${s%% *}"
}

now_ns() { date +%s%N; }

"$bin" watch --interval 1s --format csv --output /dev/null &
pid=$!
trap 'kill "$pid" 2>/dev/null || true' EXIT

sleep 3
kill -0 "$pid" 2>/dev/null || { echo "watch-cpu: $bin exited early" >&2; exit 1; }
t0=$(now_ns)
c0=$(ticks "$pid")
r0=$(run_ns "$pid")
sleep "$secs"
r1=$(run_ns "$pid")
c1=$(ticks "$pid")
t1=$(now_ns)
peak_kb=$(awk '/^VmHWM:/ { print $2 }' "/proc/$pid/status")
kill "$pid"
wait "$pid" 2>/dev/null || true
trap - EXIT

awk -v c="$((c1 - c0))" -v hz="$hz" -v run="$((r1 - r0))" -v ns="$((t1 - t0))" -v secs="$secs" \
    -v kb="$peak_kb" -v load="$(cut -d' ' -f1-3 /proc/loadavg)" 'BEGIN {
    wall = ns / 1e9
    printf "window %.1f s (about %d collections)\n", wall, secs
    printf "schedstat: %.1f ms on a CPU = %.4f %% of one core, %.0f us per collection\n",
        run / 1e6, 100 * run / ns, run / 1e3 / secs
    printf "stat:      %d ticks of 1/%d s = %.3f %% of one core\n", c, hz, 100 * c / hz / wall
    printf "peak RSS %d kB; load average %s\n", kb, load
}'
