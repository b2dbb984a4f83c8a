#!/usr/bin/env python3
"""The floor of the MCP benchmark: how long each MCP server of the peer-bench scenarios takes
from spawn to answering `initialize`, with no client work to speak of (stdlib only).

    PEER_BENCH_DIR=/work/shared/peer-bench python3 bench/mcp_floor.py [--runs 10]

stdio servers (python `tiny`, node `everything`) are spawned fresh for every run and timed until
their `initialize` answer arrives; the streamable-HTTP server (`tinyhttp`) is started once (the
bench starts it before the runs, too) and each run times one `initialize` POST. Runs alternate
between the servers alone and all three at once (as in e_mcp_parallel), since on a 2-core
machine starting python and node together is slower than either alone.
"""
import argparse
import concurrent.futures
import json
import os
import socket
import statistics
import subprocess
import sys
import time
import urllib.request

INIT = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {"roots": {"listChanged": True}},
        "clientInfo": {"name": "floor", "version": "1"},
    },
}


def cache_dir():
    return os.path.join(os.environ.get("XDG_CACHE_HOME", os.path.expanduser("~/.cache")), "peer-bench")


def spawn_stdio(cmd):
    started = time.perf_counter()
    p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                         text=True, start_new_session=True)
    p.stdin.write(json.dumps(INIT) + "\n")
    p.stdin.flush()
    return p, started


def wait_stdio(p, started):
    while True:
        line = p.stdout.readline()
        if not line:
            raise RuntimeError("server exited before answering initialize")
        msg = json.loads(line)
        if msg.get("id") == 0:
            elapsed = time.perf_counter() - started
            break
    os.killpg(p.pid, 9)
    p.wait()
    return elapsed


def http_init(url):
    started = time.perf_counter()
    req = urllib.request.Request(url, data=json.dumps(INIT).encode(), method="POST", headers={
        "Content-Type": "application/json", "Accept": "application/json, text/event-stream"})
    with urllib.request.urlopen(req, timeout=30) as r:
        r.read()
    return time.perf_counter() - started


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=10)
    default_kit = os.environ.get("PEER_BENCH_DIR") or os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "..", "shared", "peer-bench")
    ap.add_argument("--kit", default=default_kit, help="the peer-bench kit (PEER_BENCH_DIR)")
    args = ap.parse_args()
    kit = os.path.abspath(args.kit)
    python = os.path.join(cache_dir(), "venv-mcp", "bin", "python")
    everything = os.path.join(cache_dir(), "mcp-node", "node_modules", "@modelcontextprotocol",
                              "server-everything", "dist", "index.js")
    tiny = [python, os.path.join(kit, "mcp_tiny.py"), "stdio"]
    node = ["node", everything, "stdio"]
    port = free_port()
    http = subprocess.Popen([python, os.path.join(kit, "mcp_tiny.py"), "http", str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}/mcp"
    for _ in range(300):
        try:
            http_init(url)
            break
        except Exception:
            time.sleep(0.05)
    results = {k: [] for k in ["tiny", "everything", "tinyhttp", "tiny (all 3)", "everything (all 3)",
                               "tinyhttp (all 3)", "slowest of all 3"]}
    try:
        for _ in range(args.runs):
            results["tiny"].append(wait_stdio(*spawn_stdio(tiny)))
            results["everything"].append(wait_stdio(*spawn_stdio(node)))
            results["tinyhttp"].append(http_init(url))
            a = spawn_stdio(tiny)
            b = spawn_stdio(node)
            h = http_init(url)
            with concurrent.futures.ThreadPoolExecutor(2) as pool:
                fa = pool.submit(wait_stdio, *a)
                fb = pool.submit(wait_stdio, *b)
                ta, tb = fa.result(), fb.result()
            results["tiny (all 3)"].append(ta)
            results["everything (all 3)"].append(tb)
            results["tinyhttp (all 3)"].append(h)
            results["slowest of all 3"].append(max(ta, tb, h))
    finally:
        http.kill()
        http.wait()
    print(f"| server | runs | median (ms) | min (ms) | max (ms) |")
    print(f"|---|---|---|---|---|")
    for name, values in results.items():
        ms = [v * 1000 for v in values]
        print(f"| {name} | {len(ms)} | {statistics.median(ms):.0f} | {min(ms):.0f} | {max(ms):.0f} |")


if __name__ == "__main__":
    sys.exit(main())
