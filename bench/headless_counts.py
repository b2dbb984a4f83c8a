#!/usr/bin/env python3
"""Counts that do not drift, for a headless one-answer turn (peer-bench's `a_text`).

    bench/headless_counts.py [--json] [--runs N]

No peer runs here (Gemini CLI's figures are ratios in bench/peer.sh, a full-run source), so
the quick check needs figures that a 2-core machine's noise cannot move: the instructions the
CLI executes (valgrind's callgrind, all threads), its system calls and fsyncs (strace -f -c),
and its peak resident memory. Each run gets a fresh HOME (a first launch: the history database
is created) and a fresh workspace, against the workspace's fake Gemini server.

Figures: headless.a_text_instructions, headless.a_text_syscalls, headless.a_text_fsyncs,
headless.a_text_peak_rss_mb.
"""

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import tempfile
from pathlib import Path

from benchlib import FakeGemini, cargo_target, log, result_line

SCENARIO = {"steps": [{"text": "Hello."}]}


def fresh_dirs():
    home = Path(tempfile.mkdtemp(prefix="gd-bench-home-"))
    ws = Path(tempfile.mkdtemp(prefix="gd-bench-ws-"))
    (ws / "hello.txt").write_text("hello\n")
    return home, ws


def run(prefix, cli, env_base):
    """One turn, under `prefix` (e.g. valgrind), with a fresh HOME and workspace; fails unless
    the answer is the scripted one. Returns the child's rusage (its peak RSS without a prefix)."""
    home, ws = fresh_dirs()
    env = {**env_base, "HOME": str(home)}
    cmd = prefix + [str(cli), "-p", "Say hello", "-o", "json", "-m", "gemini-2.5-flash", "--skip-trust"]
    proc = subprocess.Popen(cmd, cwd=ws, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    # Small outputs: read both, then reap the child with wait4 for its resource usage.
    out, err = proc.stdout.read(), proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    shutil.rmtree(home, ignore_errors=True)
    shutil.rmtree(ws, ignore_errors=True)
    if proc.returncode != 0 or json.loads(out).get("response") != "Hello.":
        raise SystemExit(f"turn failed: {' '.join(cmd)}\n{err.decode()[-2000:]}")
    return usage


def peak_rss_mb(cli, env):
    """Peak RSS of the CLI alone (ru_maxrss of the waited child, in MB)."""
    return run([], cli, env).ru_maxrss / 1024


def instructions(cli, env, tmp):
    out = tmp / "callgrind.out"
    run(["valgrind", "--tool=callgrind", "--quiet", f"--callgrind-out-file={out}"], cli, env)
    text = out.read_text(errors="replace")
    match = re.search(r"^(?:summary|totals):\s+(\d+)", text, re.M)
    if not match:
        raise SystemExit("callgrind wrote no totals")
    out.unlink()
    return int(match.group(1))


def syscalls(cli, env, tmp):
    out = tmp / "strace.txt"
    run(["strace", "-f", "-c", "-o", str(out)], cli, env)
    calls, fsyncs = 0, 0
    for line in out.read_text().splitlines():
        cols = line.split()
        if len(cols) >= 5 and cols[-1] == "total":
            calls = int(cols[3])
        elif len(cols) >= 5 and cols[-1] in ("fsync", "fdatasync"):
            fsyncs += int(cols[3])
    out.unlink()
    return calls, fsyncs


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--cli", type=Path, default=cargo_target() / "release" / "gemini-desktop-cli")
    args = ap.parse_args()
    for tool in ("valgrind", "strace"):
        if not shutil.which(tool):
            raise SystemExit(f"{tool} is missing (apt-get install {tool})")
    tmp = Path(tempfile.mkdtemp(prefix="gd-bench-counts-"))
    scenario = tmp / "a_text.json"
    scenario.write_text(json.dumps(SCENARIO))
    with FakeGemini(scenario) as fake:
        env = {
            "PATH": os.environ["PATH"],
            "LANG": "C.UTF-8",
            "GEMINI_API_KEY": "fake-key",
            "GOOGLE_GEMINI_BASE_URL": fake.base_url,
        }
        run([], args.cli, env)  # warm the page cache
        ins = [instructions(args.cli, env, tmp) for _ in range(args.runs)]
        sys_ = [syscalls(args.cli, env, tmp) for _ in range(args.runs)]
        rss = [peak_rss_mb(args.cli, env) for _ in range(max(args.runs, 5))]
    shutil.rmtree(tmp, ignore_errors=True)
    figures = {
        "headless.a_text_instructions": statistics.median(ins),
        "headless.a_text_syscalls": statistics.median(c for c, _ in sys_),
        "headless.a_text_fsyncs": statistics.median(f for _, f in sys_),
        "headless.a_text_peak_rss_mb": round(statistics.median(rss), 2),
    }
    log(f"instructions {ins}, syscalls/fsyncs {sys_}, peak RSS MB {[round(r, 1) for r in rss]}")
    if args.json:
        print(result_line(figures, {"runs": args.runs, "instructions": ins, "syscalls": sys_, "rss_mb": rss}))


if __name__ == "__main__":
    main()
