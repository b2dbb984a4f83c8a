#!/usr/bin/env python3
"""Records what Gemini CLI 0.61 sends when its model hands a task to the built-in
`codebase_investigator`, into tests/fixtures/gemini-cli-0.61/subagent_investigator_req0N_*.json.

Runs the real 0.61 (installed by ../shared/peer-bench/setup.sh) headless with --yolo against our
fake server (`fake-gemini`, which can script a subagent's own requests through `branches`), on a
copy of the peer-bench workspace, then redacts prose as the other fixtures are: the system
instruction, every "description", and 0.61's own text in the subagent's first message; paths
become {{WORKSPACE}} / {{HOME}}.

    cargo build -p gd-fake-gemini --bin fake-gemini
    python3 scripts/capture-061-subagent.py
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests/fixtures/gemini-cli-0.61"
SCENARIO = FIXTURES / "subagent_investigator_scenario.json"
CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "peer-bench"
GEMINI = CACHE / "gemini-cli-0.61.0/node_modules/.bin/gemini"
FAKE = ROOT / "target/debug/fake-gemini"


def redact(value, key=None):
    if isinstance(value, dict):
        return {k: redact(v, k) for k, v in value.items()}
    if isinstance(value, list):
        return [redact(v, key) for v in value]
    if isinstance(value, str) and key == "description":
        return f"<redacted: {len(value)} chars>"
    return value


def main():
    if not GEMINI.exists() or not FAKE.exists():
        sys.exit(f"needs {GEMINI} (peer-bench setup.sh) and {FAKE} (cargo build)")
    tmp = Path(tempfile.mkdtemp(prefix="cap061-"))
    work, home = tmp / "work", tmp / "home"
    shutil.copytree(ROOT / "tests/fixtures/peer-bench/workspace", work)
    (home / ".gemini").mkdir(parents=True)
    (home / ".gemini/settings.json").write_text('{"security":{"auth":{"selectedType":"gemini-api-key"}}}')
    log, port_file = tmp / "requests.jsonl", tmp / "port"
    fake = subprocess.Popen([FAKE, "--port", "0", "--port-file", port_file, "--scenario", SCENARIO,
                             "--var", f"WORKSPACE={work}", "--log", log])
    try:
        while not port_file.exists():
            time.sleep(0.05)
        env = {"PATH": os.environ["PATH"], "HOME": str(home), "TERM": "dumb", "LANG": "C.UTF-8",
               "GEMINI_API_KEY": "fake-key", "GEMINI_CLI_NO_RELAUNCH": "true",
               "GEMINI_CLI_TRUST_WORKSPACE": "true",
               "GOOGLE_GEMINI_BASE_URL": f"http://127.0.0.1:{port_file.read_text()}"}
        subprocess.run([GEMINI, "-p", "Where is the greeting printed?", "-o", "json",
                        "-m", "gemini-2.5-flash", "--yolo"], cwd=work, env=env, check=True,
                       stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, timeout=180)
    finally:
        fake.terminate()
        fake.wait()
    records = [json.loads(line) for line in log.read_text().splitlines()]
    n = 0
    for record in records:
        body = record["body"]
        n += 1
        body["systemInstruction"]["parts"][0]["text"] = (
            f"<redacted: {len(body['systemInstruction']['parts'][0]['text'])} chars>")
        first = body["contents"][0]["parts"][0]
        if "<objective>" in first.get("text", ""):
            # 0.61's query template around the task: kept as its length, the task kept.
            task = re.search(r"<objective>\n(.*)\n</objective>", first["text"], re.S).group(1)
            first["text"] = f"<redacted: {len(first['text'])} chars, objective: {task}>"
        elif first.get("text", "").startswith("<session_context>"):
            first["text"] = "<session_context: see a_text_req01>"
        headers = {k: v for k, v in record["headers"].items()
                   if k not in ("host", "content-length", "x-gemini-api-privileged-user-id")}
        out = {"path": record["path"], "query": record["query"], "headers": headers,
               "body": redact(body), "fake_reply_parts": record.get("reply_parts")}
        text = json.dumps(out, indent=2, ensure_ascii=False) + "\n"
        text = text.replace(str(work), "{{WORKSPACE}}").replace(str(home), "{{HOME}}")
        kind = "subagent" if "gemini-2.5-pro" in record["path"] else "main"
        (FIXTURES / f"subagent_investigator_req{n:02d}_{kind}.json").write_text(text)
        print(f"req{n:02d} {kind} {record['path']}")
    shutil.rmtree(tmp)


if __name__ == "__main__":
    main()
