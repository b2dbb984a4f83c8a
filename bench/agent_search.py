#!/usr/bin/env python3
"""grep_search and glob through the agent, against ripgrep and fd, in one interleaved run.

    bench/agent_search.py [--json] [--runs N] [--files N] [--tree DIR]

What a user waits for is the whole agent path: the headless CLI starts, asks the (fake) model,
gets a `grep_search` (or `glob`) call, walks and searches the workspace, builds the
functionResponse, sends it and prints the answer. The tool's own cost on that path is the run
on the tree minus the same run on an empty folder (start-up, HTTP round trips and history
writes cancel out); it is compared with ripgrep / fd doing the same search from the command
line. All four commands (run on the tree, run on the empty folder, the peer, and the next
pattern's) are interleaved round by round, so machine noise hits them alike; the figures are
ratios of medians.

The tree is bench/gen_tree.py's deterministic one (`--files` source files plus 5 % ignored
under target/, a .gitignore and hidden files), written once under /tmp; `--tree` uses any
other folder. `--real` searches a real source tree instead: the cargo registry's sources that
building this workspace downloaded (`$CARGO_HOME/registry/src`, ~25k files, ~300 MB: larger
files, generated C and data files, hundreds of .gitignore files), grep cases only, with the
figures named agent.real_grep_*: the generated tree alone once read 0.85× where the real one
read 1.5× on another machine (issue 32).

Figures (`--json`, last line): agent.grep_none_vs_rg (a pattern that matches nothing: the
walk and the search), agent.grep_some_vs_rg (a pattern with thousands of matching lines: plus
output building and a large functionResponse), agent.glob_vs_fd ('**/*.rs', fd listing names)
and agent.glob_vs_fd_mtime (fd also reading each match's modification time, which glob's
newest-first answer needs).
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchlib import FakeGemini, cargo_target, log, median_ms, result_line

ROOT = Path(__file__).resolve().parent.parent


def scenario(call):
    """One tool call, then a short answer (the fake's scenario format)."""
    return {"steps": [{"functionCalls": [call]}, {"text": "done"}]}


FD = shutil.which("fdfind") or "fd"
# Each case: the model's call, and the peers it is compared with (figure id → command).
CASES = {
    "grep_none": (
        {"name": "grep_search", "args": {"pattern": "zebra_quux_nowhere"}},
        {"agent.grep_none_vs_rg": ["rg", "-i", "-n", "--no-messages", "zebra_quux_nowhere", "."]},
    ),
    "grep_some": (
        {"name": "grep_search", "args": {"pattern": "fn main"}},
        {"agent.grep_some_vs_rg": ["rg", "-i", "-n", "--no-messages", "fn main", "."]},
    ),
    "glob": (
        {"name": "glob", "args": {"pattern": "**/*.rs"}},
        {
            # fd lists names only. glob answers newest first (Gemini CLI's contract), which
            # costs one statx per match; fd pays the same once asked about modification times.
            "agent.glob_vs_fd": [FD, "-H", "-g", "**/*.rs", "."],
            "agent.glob_vs_fd_mtime": [FD, "-H", "-g", "**/*.rs", "--changed-before", "100y", "."],
        },
    ),
}


def registry_tree():
    """The cargo registry's unpacked sources (what `cargo build` downloaded)."""
    home = Path(os.environ.get("CARGO_HOME", Path.home() / ".cargo"))
    src = home / "registry" / "src"
    if not src.is_dir() or not any(src.iterdir()):
        raise SystemExit(f"no cargo registry sources at {src}: build the workspace first")
    return src


def ensure_tree(files):
    tree = Path(tempfile.gettempdir()) / f"gd-bench-tree-{files}"
    if not (tree / ".gitignore").exists():
        log(f"writing {files} files to {tree} (once)")
        subprocess.run([sys.executable, str(ROOT / "bench" / "gen_tree.py"), str(tree), str(files)], check=True)
    return tree


def timed(cmd, cwd, env):
    start = time.perf_counter_ns()
    out = subprocess.run(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    elapsed = time.perf_counter_ns() - start
    return elapsed, out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--runs", type=int, default=11)
    ap.add_argument("--files", type=int, default=25_000)
    ap.add_argument("--tree", type=Path)
    ap.add_argument("--real", action="store_true", help="the cargo registry's sources, grep only (agent.real_grep_*)")
    ap.add_argument("--cli", type=Path, default=cargo_target() / "release" / "gemini-desktop-cli")
    args = ap.parse_args()

    cases = CASES
    if args.real:
        tree = registry_tree()
        cases = {
            name: (call, {fig.replace("agent.", "agent.real_", 1): cmd for fig, cmd in peers.items()})
            for name, (call, peers) in CASES.items()
            if name.startswith("grep")
        }
    else:
        tree = args.tree.resolve() if args.tree else ensure_tree(args.files)
    empty = Path(tempfile.mkdtemp(prefix="gd-bench-empty-"))
    home = Path(tempfile.mkdtemp(prefix="gd-bench-home-"))
    scen_dir = Path(tempfile.mkdtemp(prefix="gd-bench-scen-"))
    for name, (call, _) in cases.items():
        (scen_dir / f"{name}.json").write_text(json.dumps(scenario(call)))

    samples = {name: {"tree": [], "empty": [], **{fig: [] for fig in peers}} for name, (_, peers) in cases.items()}
    with FakeGemini() as fake:
        env = {
            "PATH": os.environ["PATH"],
            "HOME": str(home),
            "LANG": "C.UTF-8",
            "GEMINI_API_KEY": "fake-key",
            "GOOGLE_GEMINI_BASE_URL": fake.base_url,
        }
        agent = [str(args.cli), "-p", "search", "-o", "json", "-m", "gemini-2.5-flash", "--yolo", "--skip-trust"]

        def agent_run(name, cwd):
            fake.reset(scen_dir / f"{name}.json")
            elapsed, out = timed(agent, cwd, env)
            if out.returncode != 0 or json.loads(out.stdout).get("response") != "done":
                raise SystemExit(f"agent run failed ({name} in {cwd}): {out.stderr.decode()[-2000:]}")
            return elapsed

        # One unmeasured round warms the page cache and the CLI's HOME.
        for round_no in range(args.runs + 1):
            for name, (_, peers) in cases.items():
                # Rotate the order within a round so no command always runs first.
                order = [("tree", tree), ("empty", empty), *((fig, tree) for fig in peers)]
                shift = round_no % len(order)
                for kind, cwd in order[shift:] + order[:shift]:
                    if kind in peers:
                        elapsed, _ = timed(peers[kind], cwd, env)
                    else:
                        elapsed = agent_run(name, cwd)
                    if round_no > 0:
                        samples[name][kind].append(elapsed)

    figures, meta = {}, {"tree": str(tree), "runs": args.runs, "medians_ms": {}}
    log(f"tree {tree}, {args.runs} rounds, medians (ms):")
    log(f"{'figure':<24} {'agent':>8} {'empty':>8} {'cost':>8} {'peer':>8} {'ratio':>6}")
    for name, (_, peers) in cases.items():
        s = samples[name]
        run, base = median_ms(s["tree"]), median_ms(s["empty"])
        cost = run - base
        meta["medians_ms"][name] = {"agent": run, "empty": base, "cost": round(cost, 2)}
        for fig in peers:
            peer = median_ms(s[fig])
            figures[fig] = round(cost / peer, 3)
            meta["medians_ms"][name][fig] = peer
            log(f"{fig:<24} {run:8.1f} {base:8.1f} {cost:8.1f} {peer:8.1f} {cost / peer:6.2f}")
    shutil.rmtree(empty, ignore_errors=True)
    shutil.rmtree(home, ignore_errors=True)
    shutil.rmtree(scen_dir, ignore_errors=True)
    if args.json:
        print(result_line(figures, meta))


if __name__ == "__main__":
    main()
