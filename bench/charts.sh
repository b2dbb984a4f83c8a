#!/usr/bin/env bash
# Draws bench/charts/*.png and rewrites bench/RESULTS.md's budget section from
# bench/history.jsonl, with matplotlib from a private venv (target/bench-venv, made once).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
venv=${CARGO_TARGET_DIR:-$root/target}/bench-venv
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c 'import matplotlib' 2>/dev/null; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet 'matplotlib>=3.8,<4'
fi
exec "$venv/bin/python" "$root/bench/charts.py"
