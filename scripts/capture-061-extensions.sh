#!/usr/bin/env bash
# Records what the real Gemini CLI 0.61 makes of the three public extensions' fixtures in
# tests/fixtures/extensions (installed from the local folders, into a temporary HOME): the
# install messages, `extensions list` (user-wide and after a workspace-scope disable), the
# enablement file, and the request a headless prompt sends with them enabled (context files,
# excluded tools). Paths are replaced by $HOME / $FIXTURES / $WORKSPACE so the files compare
# on any machine. Needs ../shared/peer-bench/setup.sh to have installed 0.61.
#
#   scripts/capture-061-extensions.sh   # rewrites tests/fixtures/extensions/gemini-cli-0.61/
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
fixtures=$root/tests/fixtures/extensions
out=$fixtures/gemini-cli-0.61
gemini=${GEMINI_061_JS:-$HOME/.cache/peer-bench/gemini-cli-0.61.0/node_modules/@google/gemini-cli/bundle/gemini.js}
fake=${FAKE_GEMINI_PY:-$root/../shared/peer-bench/fake_gemini.py}
[ -f "$gemini" ] || { echo "Gemini CLI 0.61 not found at $gemini (run ../shared/peer-bench/setup.sh)" >&2; exit 1; }

tmp=$(mktemp -d)
trap 'kill $fake_pid 2>/dev/null || true; rm -rf "$tmp"' EXIT
home=$tmp/home; ws=$tmp/home/ws
mkdir -p "$ws" "$home/.gemini"
cp "$root/../shared/peer-bench/homes/plain/.gemini/settings.json" "$home/.gemini/settings.json"
normalize() { sed -e "s#$fixtures#\$FIXTURES#g" -e "s#$ws#\$WORKSPACE#g" -e "s#$home#\$HOME#g" \
  -e 's#^\( *\)\(ID\|name\): [0-9a-f]\{64\}$#\1\2: <sha256>#'; }
g() { (cd "$ws" && HOME=$home GEMINI_CLI_NO_RELAUNCH=true GEMINI_CLI_TRUST_WORKSPACE=true \
  NO_COLOR=1 timeout 120 node "$gemini" "$@" </dev/null 2>&1) | normalize; }

: > "$out/install.txt"
for e in gemini-cli-security conductor google-workspace; do
  g extensions install "$fixtures/$e" --consent >> "$out/install.txt"
done
g extensions list > "$out/list.txt"
normalize < "$home/.gemini/extensions/extension-enablement.json" > "$out/enablement-user.json"
normalize < "$home/.gemini/extensions/conductor/.gemini-extension-install.json" > "$out/install-metadata.json"
g extensions disable conductor --scope workspace > "$out/disable-workspace.txt"
normalize < "$home/.gemini/extensions/extension-enablement.json" > "$out/enablement-workspace-disabled.json"
g extensions list > "$out/list-workspace-disabled.txt"
# Without --consent and without a terminal: what 0.61 says and does.
g extensions uninstall google-workspace > "$out/uninstall.txt"
g extensions install "$fixtures/google-workspace" > "$out/install-no-consent.txt" || true
ls "$home/.gemini/extensions" > "$out/installed-after-no-consent.txt"

# One headless prompt with the extensions present: what reaches the model.
port_file=$tmp/port
echo '{"name":"ext","steps":[],"after_steps":{"text":"ok"}}' > "$tmp/scenario.json"
python3 "$fake" --port 0 --port-file "$port_file" --log "$tmp/requests.jsonl" \
  --scenario "$tmp/scenario.json" > "$tmp/fake.log" 2>&1 &
fake_pid=$!
for _ in $(seq 50); do [ -s "$port_file" ] && break; sleep 0.1; done
(cd "$ws" && HOME=$home GEMINI_CLI_NO_RELAUNCH=true GEMINI_CLI_TRUST_WORKSPACE=true NO_COLOR=1 \
  GEMINI_API_KEY=fake GOOGLE_GEMINI_BASE_URL=http://127.0.0.1:$(cat "$port_file") \
  timeout 120 node "$gemini" -p "hello" -o json -m gemini-2.5-flash </dev/null > "$tmp/run.json" 2>"$tmp/run.err") || true
python3 - "$tmp/requests.jsonl" "$out/main-request.json" <<'PY'
import json, sys
reqs = [json.loads(l) for l in open(sys.argv[1])]
main = [r for r in reqs if r.get("kind") == "main"]
body = main[-1]["body"] if main else {}
sysi = " ".join(p.get("text", "") for p in body.get("systemInstruction", {}).get("parts", []))
first = " ".join(p.get("text", "") for p in (body.get("contents") or [{}])[0].get("parts", []))
tools = sorted(d["name"] for t in body.get("tools", []) for d in t.get("functionDeclarations", []))
json.dump({"tools": tools,
           "context_markers_in_system_instruction": [m for m in ["Security extension context", "Conductor context", "Workspace context"] if m in sysi],
           "context_markers_in_first_message": [m for m in ["Security extension context", "Conductor context", "Workspace context"] if m in first]},
          open(sys.argv[2], "w"), indent=2)
PY
normalize < "$tmp/run.err" | grep -v '^\s*$' > "$out/run-stderr.txt" || true
echo "wrote $out"
