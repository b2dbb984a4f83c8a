#!/usr/bin/env python3
"""A user policy file with 10,000 rules: what it costs the headless CLI to start, against Gemini
CLI 0.61 loading the same file (issue 33).

    bench/policy_load.py [--json] [--runs N] [--rules N] [--no-peer] [--cli PATH]
    bench/policy_load.py --write FILE [--rules N]     # only write the policy file

Each run spawns `CLI -p PROMPT -o json -m gemini-2.5-flash` in a small workspace with a fresh
HOME against a fake server (scenario a_text: one text answer) and times spawn -> first model
request (the fake's arrival time of the request minus the wall clock just before the spawn; the
policy is loaded before the first request). Four kinds of run, interleaved round by round:
ours and Gemini CLI 0.61 (GEMINI_CLI_NO_RELAUNCH=true, the kit's faster variant), each with
`~/.gemini/policies/big.toml` and without it. The cost of the file is the median with it minus
the median without it; the figure is our cost over 0.61's, measured in the same run.

The rules are varied the way real files are: `commandPrefix` and `commandRegex` shell rules,
`argsPattern` rules for file tools, MCP rules (`mcpName`), tool lists, modes, deny messages,
priorities spread over 1..999 and all three decisions. Both CLIs accept the file as it is
(its regexes use only syntax JavaScript and Rust share).

Ours runs against the workspace's fake server (bench/benchlib.py), 0.61 against the same one;
0.61 comes from the peer-bench kit (PEER_BENCH_DIR, default ../shared/peer-bench; its setup.sh
installs it). With --no-peer, or without the kit, only our figures are measured.

Figures: policy_load.ours_ms, policy_load.gemini_cli_ms (the file's cost, medians),
policy_load.ratio_vs_gemini_cli.
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from benchlib import ROOT, SETTINGS, FakeGemini, cargo_target, cli_kinds, interleaved, log, result_line

SCENARIO = ROOT / "tests/fixtures/peer-bench/scenarios/a_text.json"
PROMPT = "What is 2+2?"
EXPECTED = "Hello from the fake model. 2+2=4."
DECISIONS = ["allow", "deny", "ask_user"]


def policy_text(count):
    """`count` varied [[rule]] tables, the same text on every call."""
    out = [f"# {count} generated rules (bench/policy_load.py)\n"]
    for i in range(count):
        decision = DECISIONS[i % 3]
        priority = 1 + (i * 37) % 999
        kind = i % 8
        lines = ["[[rule]]"]
        if kind == 0:
            lines += ['toolName = "run_shell_command"', f'commandPrefix = "tool{i} sub"']
        elif kind == 1:
            lines += ['toolName = "run_shell_command"',
                      f"commandRegex = '^tool{i} (build|test|check)( --release)?$'"]
        elif kind == 2:
            lines += ['toolName = "read_file"',
                      f"argsPattern = '\"file_path\":\"[^\"]*secret{i}\\.txt\"'"]
        elif kind == 3:
            lines += [f'mcpName = "server{i % 50}"', f'toolName = "tool_{i}"']
        elif kind == 4:
            lines += ['toolName = ["write_file", "replace"]',
                      f"argsPattern = '\"file_path\":\"[^\"]*/gen{i}/[^\"]*\"'",
                      'modes = ["autoEdit", "yolo"]']
        elif kind == 5:
            lines += ['toolName = "run_shell_command"', f'commandPrefix = ["lint{i}", "fmt{i} --check"]']
        elif kind == 6:
            lines += [f'toolName = "custom_tool_{i}"']
        else:
            lines += ['toolName = "web_fetch"', f"argsPattern = 'example{i}\\.com'", 'modes = ["default"]']
        lines += [f'decision = "{decision}"', f"priority = {priority}"]
        if decision == "deny":
            lines.append(f'deny_message = "Rule {i} says no."')
        out.append("\n".join(lines) + "\n")
    return "\n".join(out)


def one_run(fake, command, policy, extra_env, base):
    """Seconds from spawn to the first request, and whether the answer was right."""
    work = Path(tempfile.mkdtemp(prefix="gd-policy-load-", dir=base))
    home, ws = work / "home", work / "ws"
    (home / ".gemini").mkdir(parents=True)
    ws.mkdir()
    (ws / "hello.txt").write_text("hello\n")
    (home / ".gemini/settings.json").write_text(json.dumps(SETTINGS))
    if policy is not None:
        (home / ".gemini/policies").mkdir()
        shutil.copy(policy, home / ".gemini/policies/big.toml")
    fake.reset(SCENARIO)
    env = {
        "PATH": os.environ.get("PATH", ""), "HOME": str(home), "TERM": "dumb", "LANG": "C.UTF-8",
        "TMPDIR": str(work), "GEMINI_API_KEY": "fake-key", "GOOGLE_GEMINI_BASE_URL": fake.base_url,
        **extra_env,
    }
    start = time.time()
    done = subprocess.run(command + ["-p", PROMPT, "-o", "json", "-m", "gemini-2.5-flash"],
                          cwd=ws, env=env, stdin=subprocess.DEVNULL, capture_output=True, timeout=300)
    requests = fake.requests()["requests"]
    shutil.rmtree(work, ignore_errors=True)
    try:
        ok = done.returncode == 0 and json.loads(done.stdout)["response"] == EXPECTED
    except (ValueError, KeyError):
        ok = False
    if not ok or not requests:
        log(f"failed run ({' '.join(command[-1:])}): exit {done.returncode}\n{done.stderr.decode()[-2000:]}")
        return None
    return min(r["ts"] for r in requests) - start


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--rules", type=int, default=10_000)
    ap.add_argument("--no-peer", action="store_true")
    ap.add_argument("--cli", default=str(cargo_target() / "release" / "gemini-desktop-cli"))
    ap.add_argument("--write", help="write the policy file here and stop")
    args = ap.parse_args()
    if args.write:
        Path(args.write).write_text(policy_text(args.rules))
        return
    base = Path(tempfile.mkdtemp(prefix="gd-policy-bench-"))
    policy = base / "big.toml"
    policy.write_text(policy_text(args.rules))
    kinds = cli_kinds(args.cli, args.no_peer)

    def measure(key):
        kind, with_policy = key
        command, env = kinds[kind]
        return one_run(fake, command, policy if with_policy else None, env, base)

    def describe(key):
        return f"{key[0]:10} {'10k rules' if key[1] else 'no file'}"

    with FakeGemini() as fake:
        samples = interleaved([(k, p) for k in kinds for p in (False, True)], args.runs,
                              measure, describe)
    shutil.rmtree(base, ignore_errors=True)
    med = {key: statistics.median(values) for key, values in samples.items()}
    figures, meta = {}, {"rules": args.rules, "runs": args.runs, "first_request_s": {}}
    for kind in kinds:
        cost = med[(kind, True)] - med[(kind, False)]
        figures[f"policy_load.{kind}_ms"] = round(cost * 1000, 1)
        meta["first_request_s"][kind] = {"without": round(med[(kind, False)], 4), "with": round(med[(kind, True)], 4)}
        log(f"{kind}: first request {med[(kind, False)] * 1000:.0f} ms without, {med[(kind, True)] * 1000:.0f} ms with the file: the file costs {cost * 1000:.0f} ms")
    if "gemini_cli" in kinds:
        ratio = figures["policy_load.ours_ms"] / max(figures["policy_load.gemini_cli_ms"], 1.0)
        figures["policy_load.ratio_vs_gemini_cli"] = round(ratio, 4)
        log(f"ours ÷ Gemini CLI 0.61: {ratio:.3f}×")
    if args.json:
        print(result_line(figures, meta))


if __name__ == "__main__":
    main()
