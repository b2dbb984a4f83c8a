#!/bin/bash
# Resume a ~100 MB chat: gemini-cli 0.61 vs gemini-desktop-cli (debug build), same fake server.
# Needs peer-bench's gemini-cli (../shared/peer-bench/setup.sh) and `cargo build -p gd-cli`.
#   bench/history/resume_vs_gemini_cli.sh          # MB=100 by default
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
KIT=${KIT:-$HERE/../../../shared/peer-bench}
OURS=${OURS:-$HERE/../../target/debug/gemini-desktop-cli}
GJS=$("$KIT/setup.sh" --print | sed -n 's/^gemini_js=//p')
D=${D:-/tmp/gd-history-peer}; rm -rf $D; mkdir -p $D
cp -r $KIT/workspace $D/ws; WS=$(cd $D/ws && pwd -P)
for who in g o; do mkdir -p $D/home-$who/.gemini; cp $KIT/homes/plain/.gemini/settings.json $D/home-$who/.gemini/; done
python3 "$HERE/gen_gemini_cli_session.py" "$WS" $D/home-g ${MB:-100}
python3 "$HERE/gen_gemini_cli_session.py" "$WS" $D/home-o ${MB:-100}
cat > $D/scenario.json <<'J'
{"name": "resume", "steps": [{"text": "Resumed."}], "after_steps": {"text": "Resumed."}}
J
python3 $KIT/fake_gemini.py --port 0 --port-file $D/port --scenario $D/scenario.json --log $D/requests.jsonl > $D/fake.log 2>&1 &
FAKE=$!; sleep 1; PORT=$(cat $D/port)
run() { # label home argv...
  local label=$1 home=$2; shift 2
  ( cd $WS && env -i PATH=$PATH HOME=$home TERM=dumb LANG=C.UTF-8 GEMINI_API_KEY=fake-key GEMINI_CLI_NO_RELAUNCH=true \
      GOOGLE_GEMINI_BASE_URL=http://127.0.0.1:$PORT /usr/bin/time -f "%e s wall, %M KB max RSS" "$@" > $D/$label.out 2> $D/$label.err )
  echo "$label: rc=$? $(tail -1 $D/$label.err)"
}
run gemini-list $D/home-g node $GJS --list-sessions
run ours-list-before-import $D/home-o $OURS --list-sessions
run gemini-resume $D/home-g node $GJS -r latest -p "continue" -o json -m gemini-2.5-flash
run ours-resume-import $D/home-o $OURS -r latest -p "continue" -o json -m gemini-2.5-flash
run ours-resume-stored $D/home-o $OURS -r latest -p "continue" -o json -m gemini-2.5-flash
python3 - <<P
import json
for l in open("$D/requests.jsonl"):
    q=json.loads(l); print(q.get("kind"), q.get("source"), len(json.dumps(q.get("body") or {})))
P
kill $FAKE
