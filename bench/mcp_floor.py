#!/usr/bin/env python3
"""The floor of the MCP benchmark: how long each MCP server of the peer-bench scenarios takes
from spawn to answering `initialize`, with no client work to speak of (stdlib only).

    PEER_BENCH_DIR=/work/shared/peer-bench python3 bench/mcp_floor.py [--runs 10]

stdio servers (python `tiny`, node `everything`) are spawned fresh for every run and timed until
their `initialize` answer arrives; the streamable-HTTP server (`tinyhttp`) is started once (the
bench starts it before the runs, too) and each run times one `initialize` POST. Runs alternate
between the servers alone and all three at once (as in e_mcp_parallel), since on a 2-core
machine starting python and node together is slower than either alone.

With `--cli PATH` every round also runs that CLI on the peer-bench scenarios d_mcp_tiny and
e_mcp_parallel exactly as bench.py does (fresh HOME from the kit's template, fresh workspace,
the kit's fake Gemini server, `-p PROMPT -o json -m gemini-2.5-flash`), right after the floor
measurements of the same round, and reports each CLI run's wall time minus the floor of its own
round (`tiny` alone for d_mcp_tiny, `slowest of all 3` for e_mcp_parallel). On a shared, noisy
machine that per-round difference is the figure to quote: the floor and the CLI see the same load.

    PEER_BENCH_DIR=/work/shared/peer-bench python3 bench/mcp_floor.py --runs 10 \
        --cli target/release/gemini-desktop-cli
"""
import argparse
import concurrent.futures
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
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


class CliRunner:
    """Runs a CLI on a peer-bench scenario the way bench.py does (see the module docstring)."""

    def __init__(self, cli, kit, python, everything, http_port, trace=None):
        self.cli = os.path.abspath(cli)
        self.trace = trace
        self.runs = 0
        self.kit = kit
        self.vars = {"KIT": kit, "PYTHON_MCP": python, "EVERYTHING_JS": everything,
                     "MCP_HTTP_PORT": str(http_port)}
        self.dir = tempfile.mkdtemp(prefix="mcp-floor-")
        port_file = os.path.join(self.dir, "port")
        self.fake = subprocess.Popen(
            [sys.executable, os.path.join(kit, "fake_gemini.py"), "--port", "0", "--port-file", port_file,
             "--log", os.path.join(self.dir, "requests.jsonl")],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(200):
            if os.path.exists(port_file) and open(port_file).read().strip():
                break
            time.sleep(0.05)
        self.base = f"http://127.0.0.1:{open(port_file).read().strip()}"

    def close(self):
        self.fake.kill()
        self.fake.wait()
        shutil.rmtree(self.dir, ignore_errors=True)

    def run(self, name):
        scenario_path = os.path.join(self.kit, "scenarios", f"{name}.json")
        scenario = json.load(open(scenario_path))
        run_dir = tempfile.mkdtemp(dir=self.dir)
        home = os.path.join(run_dir, "home")
        ws = os.path.join(run_dir, "ws")
        shutil.copytree(os.path.join(self.kit, "homes", scenario["home"]), home)
        settings = os.path.join(home, ".gemini", "settings.json")
        text = open(settings).read()
        for k, v in self.vars.items():
            text = text.replace("{{%s}}" % k, v)
        open(settings, "w").write(text)
        shutil.copytree(os.path.join(self.kit, "workspace"), ws)
        os.makedirs(os.path.join(run_dir, "tmp"))
        body = json.dumps({"scenario": scenario_path, "log": os.path.join(run_dir, "requests.jsonl"),
                           "vars": {"WORKSPACE": ws}}).encode()
        urllib.request.urlopen(urllib.request.Request(self.base + "/__admin/reset", data=body,
                                                      method="POST"), timeout=10).read()
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": home, "TERM": "dumb",
               "LANG": "C.UTF-8", "GEMINI_API_KEY": "fake-key", "GOOGLE_GEMINI_BASE_URL": self.base,
               "TMPDIR": os.path.join(run_dir, "tmp")}
        argv = [self.cli, "-p", scenario["prompt"], "-o", "json", "-m", "gemini-2.5-flash",
                *scenario.get("cli_args", [])]
        stderr = subprocess.DEVNULL
        if self.trace:
            # The CLI's own timestamped log of each run, to see where the time went.
            os.makedirs(self.trace, exist_ok=True)
            self.runs += 1
            env["RUST_LOG"] = "debug"
            stderr = open(os.path.join(self.trace, f"{self.runs:02}-{name}.log"), "w")
        started = time.perf_counter()
        p = subprocess.Popen(argv, cwd=ws, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                             stderr=stderr, start_new_session=True)
        out, _ = p.communicate(timeout=120)
        elapsed = time.perf_counter() - started
        try:
            os.killpg(p.pid, 9)  # stray MCP servers, as bench.py does
        except ProcessLookupError:
            pass
        shutil.rmtree(run_dir, ignore_errors=True)
        ok = p.returncode == 0 and json.loads(out or b"{}").get("response") == scenario["expect_response"]
        if not ok:
            raise RuntimeError(f"{name}: the CLI failed (exit {p.returncode}): {out[:400]!r}")
        return elapsed


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=10)
    default_kit = os.environ.get("PEER_BENCH_DIR") or os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "..", "shared", "peer-bench")
    ap.add_argument("--kit", default=default_kit, help="the peer-bench kit (PEER_BENCH_DIR)")
    ap.add_argument("--cli", help="also run this CLI on d_mcp_tiny and e_mcp_parallel, interleaved")
    ap.add_argument("--trace", help="with --cli: run it with RUST_LOG=debug, its log of each run in this folder")
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
    cli = CliRunner(args.cli, kit, python, everything, port, args.trace) if args.cli else None
    if cli:
        for name in ["d_mcp_tiny", "e_mcp_parallel"]:
            cli.run(name)  # warm-up (page cache), not measured
        for k in ["d_mcp_tiny (CLI)", "d_mcp_tiny - floor (tiny)", "e_mcp_parallel (CLI)",
                  "e_mcp_parallel - floor (slowest of all 3)"]:
            results[k] = []
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
            if cli:
                d = cli.run("d_mcp_tiny")
                results["d_mcp_tiny (CLI)"].append(d)
                results["d_mcp_tiny - floor (tiny)"].append(d - results["tiny"][-1])
                e = cli.run("e_mcp_parallel")
                results["e_mcp_parallel (CLI)"].append(e)
                results["e_mcp_parallel - floor (slowest of all 3)"].append(e - max(ta, tb, h))
    finally:
        if cli:
            cli.close()
        http.kill()
        http.wait()
    print(f"| server | runs | median (ms) | min (ms) | max (ms) |")
    print(f"|---|---|---|---|---|")
    for name, values in results.items():
        ms = [v * 1000 for v in values]
        print(f"| {name} | {len(ms)} | {statistics.median(ms):.0f} | {min(ms):.0f} | {max(ms):.0f} |")


if __name__ == "__main__":
    sys.exit(main())
