#!/usr/bin/env python3
"""Measures the performance budget (bench/budget.toml) and fails when a figure leaves it.

    bench/check.py --quick             # the quick subset (CI, < 5 min once built)
    bench/check.py --full [--record]   # everything; --record appends to bench/history.jsonl
    bench/check.py --quick --only agent_search

Each source in the budget is a command whose last stdout line is
`{"figures": {...}, "meta": {...}}`; each figure names its source, its target and its
tolerance. A figure passes when it is at most target × (1 + tolerance) (all our figures are
"lower is better": times, memory, ratios against a peer, counts) and, when the budget records
a `baseline` (the last accepted figure), at most baseline × (1 + drift): a figure well under its
target still fails when it doubles. A source that fails to run
fails every figure it owes: a budget that silently skips is no budget.

Wall times on the project's 2-core machines drift by ±30 %, so the budget prefers ratios
against a peer measured in the same run (ripgrep, fd, Gemini CLI, a blank WebKit window) and,
where no peer exists, counts that do not drift (instructions under valgrind, syscalls, fsyncs).
"""

import argparse
import datetime as dt
import json
import os
import shlex
import subprocess
import sys
import time
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BUDGET = ROOT / "bench" / "budget.toml"
HISTORY = ROOT / "bench" / "history.jsonl"


def load_budget(path):
    try:
        budget = tomllib.loads(path.read_text())
    except (OSError, tomllib.TOMLDecodeError) as e:
        raise SystemExit(f"cannot read the budget {path}: {e}")
    sources, figures = budget.get("source", {}), budget.get("figure", [])
    for f in figures:
        missing = {"id", "source", "what", "target", "tolerance"} - f.keys()
        if missing:
            raise SystemExit(f"budget figure {f.get('id', '?')} lacks {sorted(missing)}")
        if f["source"] not in sources:
            raise SystemExit(f"budget figure {f['id']} names an unknown source {f['source']!r}")
    return sources, figures


def run_source(name, command):
    """Runs one measurement; returns (figures, meta, error)."""
    print(f"--- {name}: {command}", file=sys.stderr, flush=True)
    started = time.monotonic()
    try:
        done = subprocess.run(
            ["bash", "-c", command], cwd=ROOT, stdout=subprocess.PIPE, text=True, timeout=1800
        )
    except subprocess.TimeoutExpired:
        return {}, {}, "timed out after 30 min"
    took = time.monotonic() - started
    print(f"--- {name}: {took:.0f} s, exit {done.returncode}", file=sys.stderr, flush=True)
    lines = [line for line in done.stdout.splitlines() if line.strip()]
    if done.returncode != 0:
        return {}, {}, f"exit {done.returncode}"
    try:
        result = json.loads(lines[-1])
        return result["figures"], {**result.get("meta", {}), "seconds": round(took, 1)}, None
    except (IndexError, ValueError, KeyError, TypeError):
        return {}, {}, "no JSON result line"


def limit_of(figure):
    """The promise (target × (1 + tolerance)), tightened by the last accepted figure when the
    budget records one: a figure far under its target must not double unnoticed."""
    limit = figure["target"] * (1 + figure["tolerance"])
    if "baseline" in figure:
        limit = min(limit, figure["baseline"] * (1 + figure.get("drift", 0.5)))
    return limit


def judge(figure, value):
    limit = limit_of(figure)
    if value is None:
        return limit, "MISSING"
    return limit, "ok" if value <= limit else "OVER"


def fmt(x):
    if x is None:
        return "—"
    if abs(x) >= 1e6:
        return f"{x / 1e6:.2f} M"
    if abs(x) >= 100:
        return f"{x:.0f}"
    return f"{x:.3g}"


def git_rev():
    try:
        rev = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
        return rev + ("+dirty" if dirty else "")
    except OSError:
        return "unknown"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    mode = ap.add_mutually_exclusive_group(required=True)
    mode.add_argument("--quick", action="store_true")
    mode.add_argument("--full", action="store_true")
    ap.add_argument("--only", action="append", help="run only these sources (repeatable)")
    ap.add_argument("--record", action="store_true", help="append the run to bench/history.jsonl")
    ap.add_argument("--budget", type=Path, default=BUDGET)
    args = ap.parse_args()
    kind = "quick" if args.quick else "full"

    sources, figures = load_budget(args.budget)
    wanted = [f for f in figures if args.full or f.get("quick", False)]
    if args.only:
        wanted = [f for f in wanted if f["source"] in args.only]
    names = list(dict.fromkeys(f["source"] for f in wanted))

    measured, metas, errors = {}, {}, {}
    load_before = os.getloadavg()[0]
    for name in names:
        command = sources[name].get(kind) or sources[name].get("full")
        values, meta, error = run_source(name, command)
        measured.update(values)
        metas[name] = meta
        if error:
            errors[name] = error

    rows, failed = [], []
    for f in wanted:
        value = measured.get(f["id"])
        limit, status = judge(f, value)
        if status != "ok":
            failed.append(f["id"])
        rows.append((f, value, limit, status))

    print(f"\nPerformance budget ({kind}, {git_rev()}, load average {load_before:.2f} → {os.getloadavg()[0]:.2f})\n")
    print("| figure | measured | target | baseline | limit | status | what |")
    print("|---|---|---|---|---|---|---|")
    for f, value, limit, status in rows:
        unit = f.get("unit", "")
        mark = status if status == "ok" else f"**{status}**"
        print(f"| {f['id']} | {fmt(value)} {unit} | {fmt(f['target'])} | {fmt(f.get('baseline'))} | {fmt(limit)} | {mark} | {f['what']} |")
    for name, error in errors.items():
        print(f"\nsource {name} failed: {error} (command: {shlex.quote(sources[name].get(kind) or '')})")

    stamp = dt.datetime.now(dt.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    record = {
        "date": stamp,
        "kind": kind,
        "rev": git_rev(),
        "load_average": round(load_before, 2),
        # Everything the sources measured, budgeted or not (e.g. the floor's own start).
        "figures": measured,
        "meta": metas,
    }
    out = ROOT / "bench" / "out"
    out.mkdir(parents=True, exist_ok=True)
    (out / f"check-{kind}-{stamp}.json").write_text(json.dumps(record, indent=1))
    if args.record:
        with HISTORY.open("a") as h:
            h.write(json.dumps(record) + "\n")

    if failed:
        print(f"\nFAILED: {len(failed)} figure(s) outside the budget: {', '.join(failed)}")
        print("Each row says what was measured; the source's command above reproduces it. A real")
        print("regression is fixed, not budgeted away; a deliberate trade changes bench/budget.toml")
        print("with the reason in the commit.")
        return 1
    print(f"\nAll {len(rows)} figures within the budget.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
