#!/usr/bin/env bash
# Records how the real Gemini CLI 0.61 runs hooks, as the contract our hooks follow: the JSON
# every event's hook receives on standard input (one hook per event that logs its input), what
# 0.61 prints and what the model receives when a BeforeTool hook blocks a write with exit 2, when
# an AfterTool hook adds context, and when a hook times out. Temporary HOME and workspace, the
# peer-bench fake server; paths replaced by $HOME / $WORKSPACE / $HOOKS, ids and times by
# placeholders. Needs ../shared/peer-bench/setup.sh to have installed 0.61.
#
#   scripts/capture-061-hooks.sh   # rewrites tests/fixtures/hooks/gemini-cli-0.61/
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=$root/tests/fixtures/hooks/gemini-cli-0.61
gemini=${GEMINI_061_JS:-$HOME/.cache/peer-bench/gemini-cli-0.61.0/node_modules/@google/gemini-cli/bundle/gemini.js}
fake=${FAKE_GEMINI_PY:-$root/../shared/peer-bench/fake_gemini.py}
[ -f "$gemini" ] || { echo "Gemini CLI 0.61 not found at $gemini (run ../shared/peer-bench/setup.sh)" >&2; exit 1; }
mkdir -p "$out"
tmp=$(mktemp -d)
fake_pid=
trap 'kill $fake_pid 2>/dev/null || true; rm -rf "$tmp"' EXIT
home=$tmp/home; ws=$tmp/home/ws; hooks=$tmp/hooks
mkdir -p "$ws" "$home/.gemini" "$hooks/log"

# A hook that logs its input (one JSON line per run) and answers {}.
cat > "$hooks/log.sh" <<'SH'
#!/bin/sh
cat >> "$HOOK_LOG_DIR/$1.jsonl"; echo >> "$HOOK_LOG_DIR/$1.jsonl"
env | grep -E '^(GEMINI|CLAUDE)_' | sort > "$HOOK_LOG_DIR/$1.env"
echo '{}'
SH
cat > "$hooks/block.sh" <<'SH'
#!/bin/sh
cat > /dev/null; echo "writes are blocked by policy" >&2; exit 2
SH
cat > "$hooks/context.sh" <<'SH'
#!/bin/sh
cat > /dev/null
echo '{"hookSpecificOutput":{"hookEventName":"AfterTool","additionalContext":"HOOK-CONTEXT-42"},"systemMessage":"context hook ran"}'
SH
cat > "$hooks/slow.sh" <<'SH'
#!/bin/sh
cat > /dev/null; echo "slow hook started" >&2; sleep 30; echo '{}'
SH
chmod +x "$hooks"/*.sh

normalize() { sed -e "s#$hooks#\$HOOKS#g" -e "s#$ws#\$WORKSPACE#g" -e "s#$home#\$HOME#g" \
  -e 's#"session_id": *"[^"]*"#"session_id": "<id>"#g' -e 's#"timestamp": *"[^"]*"#"timestamp": "<time>"#g' \
  -e 's#\(GEMINI_SESSION_ID=\).*#\1<id>#' -e 's#/tmp/ws/[^"]*\.json#/tmp/ws/<transcript>.json#g' \
  -e 's#"id": "write_file_[0-9_]*"#"id": "<call id>"#g' -e 's#total duration: [0-9]*ms#total duration: <n>ms#g' \
  -e 's#"totalLatencyMs": [0-9]*#"totalLatencyMs": 0#g' -e 's#"\(totalDurationMs\|durationMs\)": [0-9]*#"\1": 0#g'; }

port_file=$tmp/port
python3 "$fake" --port 0 --port-file "$port_file" --log "$tmp/requests.jsonl" > "$tmp/fake.log" 2>&1 &
fake_pid=$!
for _ in $(seq 50); do [ -s "$port_file" ] && break; sleep 0.1; done
base=http://127.0.0.1:$(cat "$port_file")

# settings <hooks JSON>: the peer-bench plain home's settings plus hooks.
settings() {
  python3 - "$root/../shared/peer-bench/homes/plain/.gemini/settings.json" "$home/.gemini/settings.json" "$1" <<'PY'
import json, sys
s = json.load(open(sys.argv[1])); s["hooks"] = json.loads(sys.argv[3])
json.dump(s, open(sys.argv[2], "w"), indent=2)
PY
}
# run <name> <scenario JSON> <extra args...>: one headless prompt; keeps stdout, stderr, the requests.
run() {
  local name=$1 scenario=$2; shift 2
  echo "$scenario" > "$tmp/scenario.json"
  curl -s -X POST "$base/__admin/reset" -d "{\"scenario\": \"$tmp/scenario.json\", \"log\": \"$tmp/$name.requests.jsonl\", \"vars\": {\"WORKSPACE\": \"$ws\"}}" > /dev/null
  (cd "$ws" && HOME=$home GEMINI_CLI_NO_RELAUNCH=true GEMINI_CLI_TRUST_WORKSPACE=true NO_COLOR=1 \
    GEMINI_API_KEY=fake GOOGLE_GEMINI_BASE_URL=$base HOOK_LOG_DIR=$hooks/log \
    timeout 180 node "$gemini" -p "write the file" -m gemini-2.5-flash "$@" </dev/null \
    > "$tmp/$name.stdout" 2> "$tmp/$name.stderr"; echo "exit $?" >> "$tmp/$name.stdout") || true
  normalize < "$tmp/$name.stdout" > "$out/$name.stdout.txt"
  normalize < "$tmp/$name.stderr" | grep -v -e '256-color' -e 'Ripgrep is not available' -e '^\[STARTUP\]' > "$out/$name.stderr.txt" || true
  python3 - "$tmp/$name.requests.jsonl" "$out/$name.function-responses.json" <<'PY'
import json, sys
out = []
for line in open(sys.argv[1]):
    r = json.loads(line)
    if r.get("kind") != "main": continue
    last = (r["body"].get("contents") or [])[-1]
    out.append([p.get("functionResponse") or {"text": p.get("text")} for p in last.get("parts", [])])
json.dump(out, open(sys.argv[2], "w"), indent=2)
PY
  normalize < "$out/$name.function-responses.json" | sed -e 's#Today.s date is [^(]*(#Today is <date> (#' > "$tmp/fr" && mv "$tmp/fr" "$out/$name.function-responses.json"
}
write='{"name":"w","steps":[{"functionCalls":[{"name":"write_file","args":{"file_path":"{{WORKSPACE}}/out.txt","content":"hi\n"}}]}],"after_steps":{"text":"done"}}'

# 1. Every event's input.
all='{}'
for ev in SessionStart SessionEnd BeforeAgent AfterAgent BeforeModel AfterModel BeforeToolSelection BeforeTool AfterTool PreCompress Notification; do
  all=$(python3 -c 'import json,sys; d=json.loads(sys.argv[1]); d[sys.argv[2]]=[{"matcher":"*" if sys.argv[2] in ("BeforeTool","AfterTool") else "","hooks":[{"type":"command","name":"log-"+sys.argv[2],"command":sys.argv[3]+" "+sys.argv[2]}]}]; print(json.dumps(d))' "$all" "$ev" "$hooks/log.sh")
done
settings "$all"
run inputs "$write" --yolo
for f in "$hooks"/log/*.jsonl; do
  ev=$(basename "$f" .jsonl)
  python3 - "$f" <<'PY' | normalize > "$out/input-$ev.json"
import json, sys
runs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
# The first run of each event, with long request/response bodies cut to their keys.
r = runs[0]
for k in ("llm_request", "llm_response"):
    if isinstance(r.get(k), dict):
        r[k] = {kk: (vv if kk in ("model", "config", "toolConfig") else f"<{type(vv).__name__}>") for kk, vv in r[k].items()}
r["_runs_in_this_prompt"] = len(runs)
print(json.dumps(r, indent=2, sort_keys=True))
PY
  normalize < "$hooks/log/$ev.env" > "$out/env-$ev.txt"
done
rm -f "$hooks"/log/* "$ws/out.txt"

# 2. A BeforeTool hook blocks the write with exit 2.
settings "{\"BeforeTool\":[{\"matcher\":\"write_file\",\"hooks\":[{\"type\":\"command\",\"name\":\"no-writes\",\"command\":\"$hooks/block.sh\"}]}]}"
run block "$write" --yolo
[ -e "$ws/out.txt" ] && echo "written" > "$out/block.file.txt" || echo "not written" > "$out/block.file.txt"
rm -f "$ws/out.txt"
run block-json "$write" --yolo -o json
rm -f "$ws/out.txt"

# 3. An AfterTool hook adds context.
settings "{\"AfterTool\":[{\"matcher\":\"write_file\",\"hooks\":[{\"type\":\"command\",\"name\":\"add-context\",\"command\":\"$hooks/context.sh\"}]}]}"
run context "$write" --yolo
rm -f "$ws/out.txt"

# 4. A BeforeTool hook times out (timeout 1000 ms).
settings "{\"BeforeTool\":[{\"matcher\":\"write_file\",\"hooks\":[{\"type\":\"command\",\"name\":\"slow\",\"command\":\"$hooks/slow.sh\",\"timeout\":1000}]}]}"
run timeout "$write" --yolo
[ -e "$ws/out.txt" ] && echo "written" > "$out/timeout.file.txt" || echo "not written" > "$out/timeout.file.txt"
echo "wrote $out"
