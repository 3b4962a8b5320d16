#!/usr/bin/env python3
"""CPU time of `perfcounters serve` per OTLP push and per /metrics scrape, the same counters.

    scripts/otlp-live-cpu.py target/release/perfcounters [N] [serve flags...]

Runs serve twice: once scraped N times (gzip, as Prometheus asks), once pushing N times to a
receiver here that accepts everything (`--otlp-only`); prints the serve process's user + system
CPU (from /proc/PID/stat) per scrape and per push. Both collect the same counters each time.
"""

import http.server
import os
import socket
import subprocess
import sys
import threading
import time
import urllib.request

BIN = sys.argv[1]
N = int(sys.argv[2]) if len(sys.argv) > 2 else 100
EXTRA = sys.argv[3:]
INTERVAL = 0.2
TICK = os.sysconf("SC_CLK_TCK")


def cpu(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


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
    url = f"http://127.0.0.1:{port}/metrics"
    get = lambda: urllib.request.urlopen(urllib.request.Request(
        url, headers={"Accept-Encoding": "gzip"})).read()
    get()  # the first collection builds the plan's state
    c0 = cpu(p.pid)
    size = 0
    for _ in range(N):
        size = len(get())
        time.sleep(INTERVAL)
    c1 = cpu(p.pid)
    p.terminate()
    p.wait()
    return (c1 - c0) / N, size


class Sink(http.server.BaseHTTPRequestHandler):
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
    http.server.HTTPServer.protocol_version = "HTTP/1.1"
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


scrape, scrape_bytes = scrape_mode()
push, push_bytes = push_mode()
print(f"/metrics scrape: {scrape * 1000:.2f} ms CPU each ({scrape_bytes} bytes gzip), {N} scrapes")
print(f"OTLP push:       {push * 1000:.2f} ms CPU each ({push_bytes} bytes gzip), {N} pushes")
