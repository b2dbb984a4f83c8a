#!/usr/bin/env bash
# The performance budget's desktop figures (issue 15) in one run: start → content of the app
# and of a blank WebKitGTK window, idle memory over that window, and the web process with a
# stored 200-message conversation open over the blank window's (see bench/app/budget.rs).
#
#   bench/app/budget.sh [--json] [--runs 5] [--idle-secs 5] [--messages 200]
#
# With --json the last line of stdout is {"figures": {...}, "meta": {...}}. Builds the UI, the
# release app and the harness first (SKIP_BUILD=1 reuses them; APP=path measures another app
# binary). Needs what bench/app/run.sh needs (Xvfb, WebKitWebDriver, tauri-driver) and, for
# the blank window, Debian's python3-gi with gir1.2-webkit2-4.1. About 25 s per round.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
target=${CARGO_TARGET_DIR:-$root/target}
if [ "${SKIP_BUILD:-0}" != 1 ]; then
  if [ ! -d ui/node_modules ]; then npm --prefix ui ci >&2; fi
  npm --prefix ui run build >&2
  CARGO_INCREMENTAL=0 cargo build --release -p gemini-desktop >&2
  CARGO_INCREMENTAL=0 cargo build --release -p gd-e2e --example app-perf >&2
fi
/usr/bin/python3 -c 'import gi; gi.require_version("WebKit2", "4.1")' 2>/dev/null ||
  { echo "the blank window needs Debian's python3-gi and gir1.2-webkit2-4.1 (apt-get install python3-gi)" >&2; exit 1; }
GD_E2E_APP="${APP:-$target/release/gemini-desktop}" \
  "$target/release/examples/app-perf" --budget "$@"
