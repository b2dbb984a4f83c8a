#!/usr/bin/env bash
# The performance budget check: builds what it measures (release), then bench/check.py.
#
#   bench/check.sh --quick            # the quick subset (CI runs it after the tests), < 5 min
#   bench/check.sh --full [--record]  # everything (the desktop app and Gemini CLI too); with
#                                     # --record it appends to bench/history.jsonl and redraws
#                                     # bench/RESULTS.md's budget table and charts
#
# Installs its tools (ripgrep, fd, valgrind, strace, ...) with scripts/install-deps.sh --bench.
# Exit status 1 with a table when a figure leaves bench/budget.toml.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
mode=${1:---quick}

scripts/install-deps.sh --bench
echo "building the release CLI and the fake server (timed separately from the check)" >&2
build_start=$(date +%s)
CARGO_INCREMENTAL=0 cargo build --release --quiet -p gd-cli -p gd-fake-gemini
if [ "$mode" = "--full" ]; then
  npm --prefix ui ci --no-audit --no-fund --silent
  npm --prefix ui run build --silent
  CARGO_INCREMENTAL=0 cargo build --release --quiet -p gemini-desktop
  CARGO_INCREMENTAL=0 cargo build --release --quiet -p gd-e2e --example app-perf
fi
echo "built in $(( $(date +%s) - build_start )) s" >&2

check_start=$(date +%s)
status=0
python3 bench/check.py "$@" || status=$?
echo "measured in $(( $(date +%s) - check_start )) s" >&2
if [ "$mode" = "--full" ] && [[ " $* " == *" --record "* ]]; then
  bench/charts.sh
fi
exit $status
