#!/usr/bin/env bash
# Runs the end-to-end suite (the real app in WebKit under Xvfb: the gd-e2e crate's `e2e` tests)
# N times while a CPU burner keeps every core busy, and reports each failure with its test name.
# A test that passes only on a quiet machine is reporting a defect (in the product or the test):
# this is how to find it before CI does. Issue 32.
#
#   scripts/soak-tests.sh [N] [--ui] [-- extra cargo test filter args]
#
#   N       rounds (default 5)
#   --ui    each round also runs the UI suite (Playwright in Chromium, ui/tests) under the burner
#
# Builds what it runs first (the UI bundle, the app, the e2e tests), with the burner off. The
# burner is one busy loop per core (`nproc`), at the tests' own priority. (`--workspace --test
# e2e` rather than `-p gd-e2e`: the workspace's feature set, so nothing is compiled twice.) Exit status 1 when any
# round failed; the summary counts the failures of each test. Logs: target/soak/round-K.log.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

rounds=5
with_ui=false
filter=()
while [ $# -gt 0 ]; do
  case "$1" in
    --ui) with_ui=true ;;
    --) shift; filter=("$@"); break ;;
    *[!0-9]*|'') echo "usage: $0 [N] [--ui] [-- filter]" >&2; exit 2 ;;
    *) rounds=$1 ;;
  esac
  shift
done

# The MCP tests' servers, as scripts/test.sh finds them (installed by install-deps.sh --test).
export GD_TEST_MCP_PYTHON="${GD_TEST_MCP_PYTHON:-$root/target/test-deps/venv-mcp/bin/python}"
export GD_TEST_MCP_EVERYTHING="${GD_TEST_MCP_EVERYTHING:-$root/target/test-deps/mcp-node/node_modules/@modelcontextprotocol/server-everything/dist/index.js}"

out="$root/target/soak"
mkdir -p "$out"
rm -f "$out"/round-*.log "$out"/failures.txt

echo "building the UI, the app and the e2e tests (burner off)" >&2
npm --prefix ui run build --silent >/dev/null
cargo build --workspace --all-targets --quiet
cargo test --workspace --test e2e --no-run --quiet

burners=()
stop_burners() {
  for pid in "${burners[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
}
trap stop_burners EXIT
for _ in $(seq "$(nproc)"); do
  # A pure CPU loop: no I/O, no memory, just a core kept busy.
  bash -c 'while :; do :; done' &
  burners+=($!)
done
echo "burner: ${#burners[@]} busy loops (pids ${burners[*]})" >&2

failed_rounds=0
for k in $(seq "$rounds"); do
  log="$out/round-$k.log"
  start=$(date +%s)
  status=0
  cargo test --workspace --test e2e --no-fail-fast -- "${filter[@]}" >"$log" 2>&1 || status=$?
  if $with_ui; then
    node ui/tests/run.mjs --no-build >>"$log" 2>&1 || status=$?
  fi
  # Rust tests print `test NAME ... FAILED`; node's runner `✖ NAME (…ms)` (its summary repeats
  # each, hence sort -u).
  { grep -E '^test .* \.\.\. FAILED$' "$log" | sed -E 's/^test (.*) \.\.\. FAILED$/e2e: \1/'
    grep -E '^✖ ' "$log" | grep -v 'failing tests' | sed -E 's/^✖ (.*) \([0-9.]+ms\)$/ui: \1/'
  } | sort -u >"$out/round-$k.failed" || true
  took=$(( $(date +%s) - start ))
  if [ "$status" -ne 0 ] || [ -s "$out/round-$k.failed" ]; then
    failed_rounds=$((failed_rounds + 1))
    echo "round $k/$rounds: FAILED in ${took} s (log: $log)"
    if [ -s "$out/round-$k.failed" ]; then
      sed 's/^/  /' "$out/round-$k.failed"
    else
      echo "  (no test named: exit status $status; see the log)"
    fi
    cat "$out/round-$k.failed" >>"$out/failures.txt"
  else
    passed=$(grep -Eo '^test result: ok\. [0-9]+ passed' "$log" | grep -Eo '[0-9]+' | head -1)
    echo "round $k/$rounds: ok in ${took} s (${passed:-?} e2e tests passed)"
  fi
  rm -f "$out/round-$k.failed"
done

echo
if [ "$failed_rounds" -eq 0 ]; then
  echo "soak: $rounds/$rounds rounds passed under the burner"
  exit 0
fi
echo "soak: $failed_rounds of $rounds rounds failed; failures by test:"
sort "$out/failures.txt" | uniq -c | sort -rn
exit 1
