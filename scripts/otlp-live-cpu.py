#!/usr/bin/env python3
"""CPU time of `perfcounters serve` per OTLP push and per /metrics scrape, the same counters.

    scripts/otlp-live-cpu.py target/release/perfcounters [N] [serve flags...]

Runs serve twice: once scraped N times (gzip, as Prometheus asks), once pushing N times to a
receiver here that accepts everything (`--otlp-only`); prints the serve process's CPU time (every
thread's, from the scheduler) per scrape and per push. Both collect the same counters each time.

The CPU time of a few hundred collections varies by a tenth from run to run on a virtual machine:
PERFCOUNTERS_ROUNDS=R repeats the pair R times, alternating, and prints each round and the medians;
PERFCOUNTERS_INTERVAL=S sets the seconds between collections (0.2).
"""

import http.client
import http.server
import os
import socket
import subprocess
import sys
import threading
import time

BIN = sys.argv[1]
N = int(sys.argv[2]) if len(sys.argv) > 2 else 100
EXTRA = sys.argv[3:]
INTERVAL = float(os.environ.get("PERFCOUNTERS_INTERVAL", "0.2"))
ROUNDS = int(os.environ.get("PERFCOUNTERS_ROUNDS", "1"))


def cpu(pid):
    """Seconds on a CPU of every thread of `pid` (the scheduler's nanoseconds, /proc/PID/task/*/
    schedstat; /proc/PID/stat counts whole clock ticks, too coarse for a few hundred milliseconds).
    serve's threads live as long as it does, so no thread's time is lost by its ending."""
    total = 0
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{task}/schedstat") as f:
                total += int(f.read().split()[0])
        except FileNotFoundError:
            pass
    return total / 1e9


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


def scrape_mode():
    port = free_port()
    p = subprocess.Popen([BIN, "serve", "--listen", f"127.0.0.1:{port}", *EXTRA],
                         stderr=subprocess.DEVNULL)
    wait_listening(port)
    # One kept-alive connection, as Prometheus scrapes (and as the push below posts).
    conn = http.client.HTTPConnection("127.0.0.1", port)

    def get():
        conn.request("GET", "/metrics", headers={"Accept-Encoding": "gzip"})
        return conn.getresponse().read()

    get()  # the first collection builds the plan's state
    c0 = cpu(p.pid)
    size = 0
    for _ in range(N):
        size = len(get())
        time.sleep(INTERVAL)
    c1 = cpu(p.pid)
    conn.close()
    p.terminate()
    p.wait()
    return (c1 - c0) / N, size


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


def push_mode():
    server = http.server.HTTPServer(("127.0.0.1", 0), Sink)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}"
    p = subprocess.Popen([BIN, "serve", "--otlp-only", "--otlp", url, "--otlp-interval",
                          str(INTERVAL), *EXTRA], stderr=subprocess.DEVNULL)
    while Sink.count < 1:
        time.sleep(0.01)
    c0, n0 = cpu(p.pid), Sink.count
    while Sink.count < n0 + N:
        time.sleep(0.01)
    c1, n1 = cpu(p.pid), Sink.count
    p.terminate()
    p.wait()
    server.shutdown()
    return (c1 - c0) / (n1 - n0), Sink.size


scrapes, pushes = [], []
for r in range(ROUNDS):
    scrape, scrape_bytes = scrape_mode()
    push, push_bytes = push_mode()
    scrapes.append(scrape)
    pushes.append(push)
    print(f"/metrics scrape: {scrape * 1000:.2f} ms CPU each ({scrape_bytes} bytes gzip), {N} scrapes")
    print(f"OTLP push:       {push * 1000:.2f} ms CPU each ({push_bytes} bytes gzip), {N} pushes")
if ROUNDS > 1:
    med = lambda v: sorted(v)[len(v) // 2]
    print(f"medians of {ROUNDS} rounds: scrape {med(scrapes) * 1000:.2f} ms, push {med(pushes) * 1000:.2f} ms,"
          f" push/scrape {med([p / s for p, s in zip(pushes, scrapes)]):.3f}")
