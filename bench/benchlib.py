"""Shared pieces of the Python benchmarks (bench/*.py): the fake Gemini server, paths, medians.

Standard library only, so the quick check runs on any python3 ≥ 3.11 without a venv.
"""

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def log(message):
    """Human-readable progress goes to stderr: stdout's last line is the JSON result."""
    print(message, file=sys.stderr, flush=True)


def cargo_target():
    """The cargo target directory (CARGO_TARGET_DIR or the workspace's target/)."""
    return Path(os.environ.get("CARGO_TARGET_DIR") or ROOT / "target").resolve()


def median_ms(samples_ns):
    return round(statistics.median(samples_ns) / 1e6, 2)


def result_line(figures, meta):
    """The JSON object bench/check.py reads from a measurement's last stdout line."""
    return json.dumps({"figures": figures, "meta": meta})


# The peer-bench kit's `plain` HOME settings: an API key, no trust dialog, no telemetry or update checks.
SETTINGS = {
    "security": {"auth": {"selectedType": "gemini-api-key"}, "folderTrust": {"enabled": False}},
    "privacy": {"usageStatisticsEnabled": False},
    "telemetry": {"enabled": False},
    "general": {"enableAutoUpdate": False, "enableAutoUpdateNotification": False},
    "ide": {"enabled": False, "hasSeenNudge": True},
}


def peer_kit():
    """The peer-bench kit's folder (PEER_BENCH_DIR, default ../shared/peer-bench)."""
    return Path(os.environ.get("PEER_BENCH_DIR") or ROOT.parent / "shared" / "peer-bench")


def peer_command(kit):
    """Gemini CLI 0.61 from the kit: [node, gemini.js], or None."""
    if not (kit / "setup.sh").exists():
        return None
    done = subprocess.run([str(kit / "setup.sh"), "--print"], capture_output=True, text=True)
    paths = dict(line.split("=", 1) for line in done.stdout.splitlines() if "=" in line)
    gemini_js = paths.get("gemini_js")
    node = shutil.which("node")
    if done.returncode != 0 or not gemini_js or not Path(gemini_js).exists() or not node:
        return None
    return [node, gemini_js]


def cli_kinds(cli, no_peer):
    """The CLIs a same-run comparison runs: ours (`cli`) and, unless `no_peer` or the kit is
    missing, Gemini CLI 0.61 from the peer-bench kit; name -> (command, extra environment)."""
    kinds = {"ours": ([cli, "--skip-trust"], {})}
    peer = None if no_peer else peer_command(peer_kit())
    if peer:
        kinds["gemini_cli"] = (peer, {"GEMINI_CLI_NO_RELAUNCH": "true"})
    elif not no_peer:
        log(f"Gemini CLI 0.61 not found (peer-bench kit at {peer_kit()}): our figures only")
    return kinds


def interleaved(keys, runs, measure, describe=str):
    """`measure(key)` for every key, `runs` rounds, every other round in reverse order so that a
    machine's drift favours no key; key -> samples. A `None` from `measure` stops the bench."""
    samples = {key: [] for key in keys}
    for round_ in range(runs):
        order = list(samples)
        if round_ % 2:
            order.reverse()
        for key in order:
            value = measure(key)
            if value is None:
                raise SystemExit(f"failed: {describe(key)}")
            samples[key].append(value)
            log(f"round {round_ + 1} {describe(key):28} {value * 1000:9.1f} ms")
    return samples


class FakeGemini:
    """The workspace's fake Gemini server (`fake-gemini`, release build if present) on a free
    port, for the lifetime of a `with` block. `reset(path)` switches its scenario."""

    def __init__(self, scenario=None):
        target = cargo_target()
        candidates = [target / "release" / "fake-gemini", target / "debug" / "fake-gemini"]
        binary = next((c for c in candidates if c.exists()), None)
        if binary is None:
            raise SystemExit("fake-gemini is not built: cargo build --release -p gd-fake-gemini")
        self.dir = Path(tempfile.mkdtemp(prefix="gd-bench-fake-"))
        port_file = self.dir / "port"
        cmd = [str(binary), "--port", "0", "--port-file", str(port_file)]
        if scenario:
            cmd += ["--scenario", str(scenario)]
        self.process = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 30
        while not port_file.exists():
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise SystemExit("fake-gemini did not start")
            time.sleep(0.01)
        self.base_url = f"http://127.0.0.1:{port_file.read_text().strip()}"

    def reset(self, scenario, log=None):
        body = {"scenario": str(scenario)}
        if log is not None:
            body["log"] = str(log)
        request = urllib.request.Request(
            f"{self.base_url}/__admin/reset", data=json.dumps(body).encode(), method="POST"
        )
        with urllib.request.urlopen(request) as answer:
            if answer.status != 200:
                raise SystemExit(f"fake-gemini reset failed: {answer.read()!r}")

    def requests(self):
        with urllib.request.urlopen(f"{self.base_url}/__admin/requests") as answer:
            return json.load(answer)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.process.terminate()
        self.process.wait()
        for f in self.dir.iterdir():
            f.unlink()
        self.dir.rmdir()
