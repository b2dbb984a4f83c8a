#!/usr/bin/env python3
"""gemini-desktop-cli against Gemini CLI 0.61 (the peer-bench kit), as budget figures.

    bench/peer_ratios.py [--json] [--repeats N] [--scenarios a_text,b_list_dir,c_shell]

Runs the kit's bench.py in compare mode (both CLIs interleaved in one run, fresh HOME and
workspace per run) and turns its results into ratios B/A of medians, B = ours, A = Gemini CLI
with GEMINI_CLI_NO_RELAUNCH=true (its faster variant). The kit lives outside the repository
(PEER_BENCH_DIR, default ../shared/peer-bench), so this is a full-run source.

Figures: headless.wall_vs_gemini_cli, headless.rss_vs_gemini_cli (geomeans over the scenarios),
and per scenario headless.<scenario>.wall_vs_gemini_cli.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from benchlib import ROOT, cargo_target, log, result_line


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--repeats", type=int, default=10)
    ap.add_argument("--scenarios", default="a_text,b_list_dir,c_shell")
    args = ap.parse_args()
    kit = Path(os.environ.get("PEER_BENCH_DIR") or ROOT.parent / "shared" / "peer-bench")
    if not (kit / "bench.py").exists():
        raise SystemExit(f"the peer-bench kit is not at {kit} (set PEER_BENCH_DIR)")
    subprocess.run([str(kit / "setup.sh")], check=True, stdout=subprocess.DEVNULL)
    out = Path(tempfile.mkdtemp(prefix="gd-peer-"))
    cli = cargo_target() / "release" / "gemini-desktop-cli"
    done = subprocess.run(
        [sys.executable, str(kit / "bench.py"), "--compare", "gemini-cli-norelaunch", str(cli),
         "--label", "gemini-cli", "--label", "ours", "--scenarios", args.scenarios,
         "--repeats", str(args.repeats), "--out", str(out)],
        stdout=sys.stderr,
    )
    results = json.loads((out / "bench_results.json").read_text())["results"]
    if done.returncode != 0 or not all(r["ok"] for r in results):
        raise SystemExit(f"peer-bench had failing runs (results in {out})")
    figures, meta, walls, rsss = {}, {"results": str(out), "scenarios": {}}, [], []
    for name in args.scenarios.split(","):
        med = lambda label, key: statistics.median(r[key] for r in results if r["scenario"] == name and r["label"] == label)
        wall = med("ours", "wall_s") / med("gemini-cli", "wall_s")
        rss = med("ours", "max_rss_mb") / med("gemini-cli", "max_rss_mb")
        walls.append(wall)
        rsss.append(rss)
        figures[f"headless.{name}.wall_vs_gemini_cli"] = round(wall, 4)
        meta["scenarios"][name] = {
            "wall_s": [med("gemini-cli", "wall_s"), med("ours", "wall_s")],
            "rss_mb": [med("gemini-cli", "max_rss_mb"), med("ours", "max_rss_mb")],
            "first_request_s": [med("gemini-cli", "first_req_after_s"), med("ours", "first_req_after_s")],
        }
        log(f"{name}: wall {wall:.3f}×, RSS {rss:.3f}×")
    figures["headless.wall_vs_gemini_cli"] = round(statistics.geometric_mean(walls), 4)
    figures["headless.rss_vs_gemini_cli"] = round(statistics.geometric_mean(rsss), 4)
    if args.json:
        print(result_line(figures, meta))


if __name__ == "__main__":
    main()
