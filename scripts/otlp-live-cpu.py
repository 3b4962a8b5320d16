#!/usr/bin/env python3
"""CPU time of `perfcounters serve` per OTLP push and per /metrics scrape, the same counters.

    scripts/otlp-live-cpu.py target/release/perfcounters [N] [--before OLD_BINARY] [serve flags...]

Runs serve twice: once scraped N times (gzip, as Prometheus asks), once pushing N times to a
receiver here that accepts everything (`--otlp-only`); prints the serve process's CPU time (every
thread's, from the scheduler) per scrape and per push, in all and per thread (`runtime`: the
thread of the HTTP server, the push and its delivery; `collector`: the collections). Both collect
the same counters each time.

The CPU time of a few hundred collections varies by a tenth from run to run on a virtual machine:
PERFCOUNTERS_ROUNDS=R repeats the pair R times, alternating, and prints each round and the medians;
PERFCOUNTERS_INTERVAL=S sets the seconds between collections (0.2). `--before OLD_BINARY` measures
another build in the same rounds, the two alternating (A/B), and prints its figures first.
"""

import http.client
import http.server
import os
import socket
import subprocess
import sys
import threading
import time

ARGS = sys.argv[1:]
BEFORE = None
if "--before" in ARGS:
    i = ARGS.index("--before")
    BEFORE = ARGS[i + 1]
    del ARGS[i:i + 2]
BIN = ARGS[0]
N = int(ARGS[1]) if len(ARGS) > 1 else 100
EXTRA = ARGS[2:]
INTERVAL = float(os.environ.get("PERFCOUNTERS_INTERVAL", "0.2"))
ROUNDS = int(os.environ.get("PERFCOUNTERS_ROUNDS", "1"))


def cpu_threads(pid):
    """Seconds on a CPU of each thread of `pid`, by name (the main thread is `runtime`): the
    scheduler's nanoseconds, /proc/PID/task/*/schedstat (/proc/PID/stat counts whole clock ticks,
    too coarse for a few hundred milliseconds). serve's threads live as long as it does, so no
    thread's time is lost by its ending."""
    out = {}
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{task}/comm") as f:
                name = "runtime" if task == str(pid) else f.read().strip()
            with open(f"/proc/{pid}/task/{task}/schedstat") as f:
                out[name] = out.get(name, 0) + int(f.read().split()[0]) / 1e9
        except FileNotFoundError:
            pass
    return out


def per(c0, c1, n):
    """ms per collection of each thread from two `cpu_threads` readings."""
    return {k: (c1[k] - c0.get(k, 0)) / n * 1000 for k in c1}


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def wait_listening(port):
    for _ in range(200):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.1).close()
            return
        except OSError:
            time.sleep(0.05)
    raise SystemExit(f"nothing listens on {port}")


def scrape_mode(binary):
    port = free_port()
    p = subprocess.Popen([binary, "serve", "--listen", f"127.0.0.1:{port}", *EXTRA],
                         stderr=subprocess.DEVNULL)
    wait_listening(port)
    # One kept-alive connection, as Prometheus scrapes (and as the push below posts).
    conn = http.client.HTTPConnection("127.0.0.1", port)

    def get():
        conn.request("GET", "/metrics", headers={"Accept-Encoding": "gzip"})
        return conn.getresponse().read()

    get()  # the first collection builds the plan's state
    c0 = cpu_threads(p.pid)
    size = 0
    for _ in range(N):
        size = len(get())
        time.sleep(INTERVAL)
    c1 = cpu_threads(p.pid)
    conn.close()
    p.terminate()
    p.wait()
    return per(c0, c1, N), size


class Sink(http.server.BaseHTTPRequestHandler):
    # HTTP/1.1: the connection is kept alive between pushes, as an OTLP receiver keeps it.
    protocol_version = "HTTP/1.1"
    count = 0
    size = 0

    def do_POST(self):
        body = self.rfile.read(int(self.headers["Content-Length"]))
        Sink.count += 1
        Sink.size = len(body)
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


def push_mode(binary):
    Sink.count = 0  # a round's receiver starts afresh: its first push builds the plan's state
    server = http.server.HTTPServer(("127.0.0.1", 0), Sink)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}"
    p = subprocess.Popen([binary, "serve", "--otlp-only", "--otlp", url, "--otlp-interval",
                          str(INTERVAL), *EXTRA], stderr=subprocess.DEVNULL)
    while Sink.count < 1:
        time.sleep(0.01)
    c0, n0 = cpu_threads(p.pid), Sink.count
    while Sink.count < n0 + N:
        time.sleep(0.01)
    c1, n1 = cpu_threads(p.pid), Sink.count
    p.terminate()
    p.wait()
    server.shutdown()
    return per(c0, c1, n1 - n0), Sink.size


def threads(ms):
    return ", ".join(f"{k} {v:.3f}" for k, v in sorted(ms.items()))


builds = ([("before", BEFORE)] if BEFORE else []) + [("this" if BEFORE else "", BIN)]
figures = {label: ([], []) for label, _ in builds}
for r in range(ROUNDS):
    for label, binary in builds:
        scrape, scrape_bytes = scrape_mode(binary)
        push, push_bytes = push_mode(binary)
        figures[label][0].append(sum(scrape.values()))
        figures[label][1].append(sum(push.values()))
        head = f"{label}: " if label else ""
        print(f"{head}/metrics scrape: {sum(scrape.values()):.3f} ms CPU each ({threads(scrape)};"
              f" {scrape_bytes} bytes gzip), {N} scrapes")
        print(f"{head}OTLP push:       {sum(push.values()):.3f} ms CPU each ({threads(push)};"
              f" {push_bytes} bytes gzip), {N} pushes", flush=True)
med = lambda v: sorted(v)[len(v) // 2]
for label, (scrapes, pushes) in figures.items():
    if ROUNDS > 1:
        head = f"{label}: " if label else ""
        print(f"{head}medians of {ROUNDS} rounds: scrape {med(scrapes):.3f} ms, push {med(pushes):.3f} ms,"
              f" push/scrape {med([p / s for p, s in zip(pushes, scrapes)]):.3f}")
