#!/usr/bin/env bash
# CPU cost per scrape of `perfcounters serve` (default set) and of node_exporter restricted to the same
# areas, measured in the same run, plus the idle CPU of both. Linux only; everything on 127.0.0.1.
#
# Usage: scripts/serve-cost.sh [SCRAPES] [IDLE_SECONDS] [BINARY]
#   SCRAPES       scrapes of each exporter (default 300), one at a time, alternating
#   IDLE_SECONDS  window for the idle measurement (default 60)
#   BINARY        the perfcounters binary (default: target/release/perfcounters, built if needed)
#
# node_exporter (Debian's prometheus-node-exporter) runs with --collector.disable-defaults and the
# collectors that cover the same areas: cpu, meminfo, diskstats, netdev, filesystem, stat, loadavg;
# --web.disable-exporter-metrics leaves out its go_*/process_* self-metrics, so both answer with their
# collectors only. Scrapes send `Accept-Encoding: gzip` as Prometheus does. CPU time is read from
# /proc/<pid>/task/*/schedstat (nanoseconds on a CPU, every thread) and /proc/<pid>/stat (utime + stime,
# clock ticks, every thread) before and after.
set -euo pipefail

scrapes=${1:-300}
idle=${2:-60}
root=$(cd "$(dirname "$0")/.." && pwd)
bin=${3:-}
if [[ -z $bin ]]; then
    (cd "$root" && cargo build --release --quiet -p perfcounters-cli)
    bin=$root/target/release/perfcounters
fi
ne=$(command -v prometheus-node-exporter || command -v node_exporter || true)
[[ -n $ne ]] || { echo "serve-cost: prometheus-node-exporter is not installed" >&2; exit 1; }
hz=$(getconf CLK_TCK)

port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
ticks() { local s; s=$(<"/proc/$1/stat"); s=${s##*) }; awk '{ print $12 + $13 }' <<<"$s"; }
run_ns() { cat /proc/"$1"/task/*/schedstat 2>/dev/null | awk '{ t += $1 } END { print t + 0 }'; }

p1=$(port); p2=$(port)
"$bin" serve --listen "127.0.0.1:$p1" 2>/dev/null &
pc=$!
"$ne" --web.listen-address="127.0.0.1:$p2" --collector.disable-defaults --collector.cpu \
    --collector.meminfo --collector.diskstats --collector.netdev --collector.filesystem \
    --collector.stat --collector.loadavg --web.disable-exporter-metrics 2>/dev/null &
pn=$!
trap 'kill $pc $pn 2>/dev/null || true' EXIT
sleep 2
for u in "127.0.0.1:$p1" "127.0.0.1:$p2"; do
    for _ in 1 2 3 4 5; do curl -s -o /dev/null -H 'Accept-Encoding: gzip' "http://$u/metrics"; done
done

samples() { curl -s "http://$1/metrics" | grep -vc '^#'; }
bytes() { curl -s -H 'Accept-Encoding: gzip' -o /dev/null -w '%{size_download}' "http://$1/metrics"; }
echo "perfcounters $("$bin" --version | awk '{print $2}'): $(samples "127.0.0.1:$p1") samples, $(bytes "127.0.0.1:$p1") bytes gzipped"
echo "node_exporter $("$ne" --version 2>&1 | awk 'NR==1{print $3}'): $(samples "127.0.0.1:$p2") samples, $(bytes "127.0.0.1:$p2") bytes gzipped"

c1=$(ticks $pc); n1=$(ticks $pn); rc1=$(run_ns $pc); rn1=$(run_ns $pn)
t0=$(date +%s%N)
for _ in $(seq "$scrapes"); do
    curl -s -o /dev/null -H 'Accept-Encoding: gzip' "http://127.0.0.1:$p1/metrics"
    curl -s -o /dev/null -H 'Accept-Encoding: gzip' "http://127.0.0.1:$p2/metrics"
done
t1=$(date +%s%N)
c2=$(ticks $pc); n2=$(ticks $pn); rc2=$(run_ns $pc); rn2=$(run_ns $pn)
awk -v n="$scrapes" -v a="$((rc2 - rc1))" -v b="$((rn2 - rn1))" -v ta="$((c2 - c1))" -v tb="$((n2 - n1))" \
    -v hz="$hz" -v w="$((t1 - t0))" 'BEGIN {
    printf "%d scrapes each in %.1f s\n", n, w / 1e9
    printf "perfcounters serve: %.3f ms CPU per scrape (schedstat), %.3f ms (stat ticks)\n", a / n / 1e6, ta * 1000 / hz / n
    printf "node_exporter:      %.3f ms CPU per scrape (schedstat), %.3f ms (stat ticks)\n", b / n / 1e6, tb * 1000 / hz / n
    printf "node_exporter / perfcounters: %.2fx\n", b / a
}'

rc1=$(run_ns $pc); rn1=$(run_ns $pn); c1=$(ticks $pc); n1=$(ticks $pn)
sleep "$idle"
rc2=$(run_ns $pc); rn2=$(run_ns $pn); c2=$(ticks $pc); n2=$(ticks $pn)
awk -v s="$idle" -v a="$((rc2 - rc1))" -v b="$((rn2 - rn1))" -v ta="$((c2 - c1))" -v tb="$((n2 - n1))" -v hz="$hz" 'BEGIN {
    printf "idle %d s: perfcounters serve %.4f %% of a core (%d ticks), node_exporter %.4f %% (%d ticks)\n", s, a / (s * 1e9) * 100, ta, b / (s * 1e9) * 100, tb
}'
echo "RSS: perfcounters serve $(awk '/^VmRSS:/{print $2}' /proc/$pc/status) kB, node_exporter $(awk '/^VmRSS:/{print $2}' /proc/$pn/status) kB"
