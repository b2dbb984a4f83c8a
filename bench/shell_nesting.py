#!/usr/bin/env python3
"""Deeply nested shell commands through the headless CLI, against Gemini CLI 0.61 (issue 33).

    bench/shell_nesting.py [--json] [--runs N] [--no-peer] [--cli PATH]

The model (a fake server) asks to run one command with `run_shell_command`; the user's policy
allows only `echo` and `cat` (default mode, headless, so what is not allowed is refused). The
time measured is the path a user waits on: from the fake's arrival time of the first request
(the prompt) to that of the second (the tool's answer), i.e. the shell analysis, the policy
decision and the next request. Commands, each refused by both CLIs:

- baseline: `touch ../x` (no rule allows it);
- expansion: `echo ${x:-` 8,000 deep (issue 33: a stack overflow, exit 134, before);
- arithmetic: `echo $((` 8,000 deep (the same);
- substitution: `echo $(` 10,000 deep (issue 33: ~49 s; 0.61 ~7 s).

Each command costs its median gap minus the baseline's, per CLI; the figure is ours over 0.61's,
measured in the same run, interleaved round by round. A run that crashes, hangs (300 s) or lets
the command run fails the bench. Gemini CLI 0.61 comes from the peer-bench kit (PEER_BENCH_DIR,
default ../shared/peer-bench) and runs with GEMINI_CLI_NO_RELAUNCH=true.

Figures: shell_nesting.<command>.ours_ms, shell_nesting.<command>.gemini_cli_ms,
shell_nesting.ratio_vs_gemini_cli (the deepest `$(`, the case the issue timed).
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

ECHO_CAT_POLICY = """[[rule]]
toolName = "run_shell_command"
commandPrefix = ["echo", "cat"]
decision = "allow"
priority = 100
"""

COMMANDS = {
    "baseline": "touch ../x",
    "expansion": "echo " + "${x:-" * 8000 + "a" + "}" * 8000,
    "arithmetic": "echo " + "$((" * 8000 + "1" + "))" * 8000,
    "substitution": "echo " + "$(" * 10000 + "a" + ")" * 10000,
}


def scenario(base, name, command):
    """A scenario file whose model runs `command`, then answers."""
    path = base / f"{name}.json"
    path.write_text(json.dumps({"steps": [
        {"functionCalls": [{"name": "run_shell_command", "args": {"command": command}}]},
        {"text": "Done."},
    ]}))
    return path


def one_run(fake, command, scenario_path, extra_env, base):
    """Seconds from the first request to the second, or None when the run went wrong."""
    work = Path(tempfile.mkdtemp(prefix="gd-nesting-", dir=base))
    home, ws = work / "home", work / "ws"
    (home / ".gemini/policies").mkdir(parents=True)
    ws.mkdir()
    (home / ".gemini/settings.json").write_text(json.dumps(SETTINGS))
    (home / ".gemini/policies/echo-cat.toml").write_text(ECHO_CAT_POLICY)
    fake.reset(scenario_path)
    env = {
        "PATH": os.environ.get("PATH", ""), "HOME": str(home), "TERM": "dumb", "LANG": "C.UTF-8",
        "TMPDIR": str(work), "GEMINI_API_KEY": "fake-key", "GOOGLE_GEMINI_BASE_URL": fake.base_url,
        **extra_env,
    }
    done = subprocess.run(command + ["-p", "Run it.", "-o", "json", "-m", "gemini-2.5-flash"],
                          cwd=ws, env=env, stdin=subprocess.DEVNULL, capture_output=True, timeout=300)
    times = sorted(r["ts"] for r in fake.requests()["requests"])
    escaped = (work / "x").exists()
    shutil.rmtree(work, ignore_errors=True)
    if done.returncode != 0 or len(times) < 2 or escaped:
        log(f"failed run ({command[-1]}): exit {done.returncode}, {len(times)} request(s), "
            f"ran the command: {escaped}\n{done.stderr.decode(errors='replace')[-2000:]}")
        return None
    return times[1] - times[0]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--no-peer", action="store_true")
    ap.add_argument("--cli", default=str(cargo_target() / "release" / "gemini-desktop-cli"))
    args = ap.parse_args()
    base = Path(tempfile.mkdtemp(prefix="gd-nesting-bench-"))
    scenarios = {name: scenario(base, name, text) for name, text in COMMANDS.items()}
    kinds = cli_kinds(args.cli, args.no_peer)

    def measure(key):
        kind, name = key
        command, env = kinds[kind]
        return one_run(fake, command, scenarios[name], env, base)

    with FakeGemini() as fake:
        samples = interleaved([(k, c) for k in kinds for c in COMMANDS], args.runs, measure,
                              lambda key: f"{key[0]:10} {key[1]}")
    shutil.rmtree(base, ignore_errors=True)
    med = {key: statistics.median(values) for key, values in samples.items()}
    figures, meta = {}, {"runs": args.runs, "gap_s": {}}
    for kind in kinds:
        meta["gap_s"][kind] = {name: round(med[(kind, name)], 4) for name in COMMANDS}
        for name in COMMANDS:
            if name == "baseline":
                continue
            cost = max(med[(kind, name)] - med[(kind, "baseline")], 0.0)
            figures[f"shell_nesting.{name}.{kind}_ms"] = round(cost * 1000, 1)
            log(f"{kind}: {name} costs {cost * 1000:.0f} ms over the baseline "
                f"({med[(kind, 'baseline')] * 1000:.0f} ms)")
    if "gemini_cli" in kinds:
        ours = figures["shell_nesting.substitution.ours_ms"]
        theirs = max(figures["shell_nesting.substitution.gemini_cli_ms"], 1.0)
        figures["shell_nesting.ratio_vs_gemini_cli"] = round(ours / theirs, 4)
        log(f"$( 10,000 deep, ours ÷ Gemini CLI 0.61: {ours / theirs:.3f}×")
    if args.json:
        print(result_line(figures, meta))


if __name__ == "__main__":
    main()
