#!/usr/bin/env python3
"""A command through the headless CLI with the tool sandbox on and off, against Gemini CLI 0.61
doing the same (issue 36).

    bench/sandbox_agent.py [--json] [--runs N] [--no-peer] [--cli PATH]

The model (a fake server) asks to run `git status --short` in a small git repository; the run is
`-p ... --yolo` (nothing is asked) with `security.toolSandboxing` true or false in the user's
settings. The time measured is the path a user waits on: from the fake's arrival time of the
first request (the prompt) to that of the second (the command's answer): the decision, the
sandbox's setup, the command, the next request. The sandbox's cost is the median gap with it
minus the median without it, per CLI; the figures are ours over 0.61's, measured in the same run,
interleaved round by round. A run that fails, or whose command did not run (its output is not in
the second request), fails the bench. Gemini CLI 0.61 comes from the peer-bench kit
(PEER_BENCH_DIR, default ../shared/peer-bench) and runs with GEMINI_CLI_NO_RELAUNCH=true.

Figures: sandbox_agent.<cli>.plain_ms, sandbox_agent.<cli>.sandboxed_ms (gaps, medians),
sandbox_agent.<cli>.cost_ms, sandbox_agent.ratio_vs_gemini_cli (sandboxed gap, ours ÷ 0.61).
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import tempfile
from pathlib import Path

from benchlib import SETTINGS, FakeGemini, cargo_target, cli_kinds, interleaved, log, result_line

COMMAND = "git status --short"
MARKER = "untracked.txt"


def scenario(base):
    path = base / "sandbox.json"
    path.write_text(json.dumps({"steps": [
        {"functionCalls": [{"name": "run_shell_command", "args": {"command": COMMAND}}]},
        {"text": "Done."},
    ]}))
    return path


def one_run(fake, command, scenario_path, extra_env, sandboxed, base):
    """Seconds from the first request to the second, or None when the run went wrong."""
    work = Path(tempfile.mkdtemp(prefix="gd-sandbox-agent-", dir=base))
    home, ws = work / "home", work / "ws"
    (home / ".gemini").mkdir(parents=True)
    ws.mkdir()
    settings = json.loads(json.dumps(SETTINGS))
    settings["security"]["toolSandboxing"] = sandboxed
    (home / ".gemini/settings.json").write_text(json.dumps(settings))
    subprocess.run(["git", "init", "-q"], cwd=ws, check=True)
    (ws / "README.md").write_text("# bench\n")
    subprocess.run(["git", "add", "-A"], cwd=ws, check=True)
    subprocess.run(["git", "-c", "user.name=b", "-c", "user.email=b@b", "commit", "-qm", "one"],
                   cwd=ws, check=True)
    (ws / MARKER).write_text("x\n")
    fake.reset(scenario_path)
    env = {
        "PATH": os.environ.get("PATH", ""), "HOME": str(home), "TERM": "dumb", "LANG": "C.UTF-8",
        "TMPDIR": str(work), "GEMINI_API_KEY": "fake-key", "GOOGLE_GEMINI_BASE_URL": fake.base_url,
        **extra_env,
    }
    done = subprocess.run(command + ["-p", "Run it.", "--yolo", "-o", "json", "-m", "gemini-2.5-flash"],
                          cwd=ws, env=env, stdin=subprocess.DEVNULL, capture_output=True, timeout=300)
    requests = fake.requests()["requests"]
    times = sorted(r["ts"] for r in requests)
    answered = len(requests) >= 2 and MARKER in json.dumps(requests[-1])
    shutil.rmtree(work, ignore_errors=True)
    if done.returncode != 0 or len(times) < 2 or not answered:
        log(f"failed run ({command[-1]}, sandboxed={sandboxed}): exit {done.returncode}, "
            f"{len(times)} request(s), command output seen: {answered}\n"
            f"{done.stderr.decode(errors='replace')[-2000:]}")
        return None
    return times[1] - times[0]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--no-peer", action="store_true")
    ap.add_argument("--cli", default=str(cargo_target() / "release" / "gemini-desktop-cli"))
    args = ap.parse_args()
    base = Path(tempfile.mkdtemp(prefix="gd-sandbox-agent-bench-"))
    path = scenario(base)
    kinds = cli_kinds(args.cli, args.no_peer)

    def measure(key):
        kind, sandboxed = key
        command, env = kinds[kind]
        gap = one_run(fake, command, path, env, sandboxed, base)
        if gap is None:
            raise SystemExit(f"{kind} (sandboxed={sandboxed}) failed")
        return gap

    with FakeGemini() as fake:
        samples = interleaved([(k, s) for k in kinds for s in (False, True)], args.runs, measure,
                              lambda key: f"{key[0]:10} {'sandboxed' if key[1] else 'plain'}")
    shutil.rmtree(base, ignore_errors=True)
    med = {key: statistics.median(values) for key, values in samples.items()}
    figures, meta = {}, {"runs": args.runs, "command": COMMAND}
    for kind in kinds:
        plain, boxed = med[(kind, False)], med[(kind, True)]
        figures[f"sandbox_agent.{kind}.plain_ms"] = round(plain * 1000, 1)
        figures[f"sandbox_agent.{kind}.sandboxed_ms"] = round(boxed * 1000, 1)
        figures[f"sandbox_agent.{kind}.cost_ms"] = round((boxed - plain) * 1000, 1)
        log(f"{kind}: {plain * 1000:.1f} ms plain, {boxed * 1000:.1f} ms sandboxed "
            f"({(boxed - plain) * 1000:+.1f} ms)")
    if "gemini_cli" in kinds:
        ratio = med[("ours", True)] / med[("gemini_cli", True)]
        figures["sandbox_agent.ratio_vs_gemini_cli"] = round(ratio, 4)
        log(f"sandboxed command, ours ÷ Gemini CLI 0.61: {ratio:.3f}×")
    if args.json:
        print(result_line(figures, meta))


if __name__ == "__main__":
    main()
