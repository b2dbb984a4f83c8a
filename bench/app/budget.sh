#!/usr/bin/env bash
# The performance budget's desktop figures (issue 15) in one run: start → content of the app
# and of a blank WebKitGTK window, idle memory over that window, and the web process with a
# stored 200-message conversation open over the blank window's (see bench/app/budget.rs).
#
#   bench/app/budget.sh [--app PATH] [--json] [--runs 5] [--idle-secs 5] [--messages 200]
#
# Which app binary is measured: --app PATH, else $APP, else the installed package's
# /usr/bin/gemini-desktop when there is one (what users run: scripts/test-package.sh measures
# it), else the build tree's target/release/gemini-desktop. The binary is printed on stderr and
# recorded in the JSON's meta.app.
#
# With --json the last line of stdout is {"figures": {...}, "meta": {...}}. Builds the harness
# first, and the UI and the release app too when the build tree's app is measured (SKIP_BUILD=1
# reuses them). Needs what bench/app/run.sh needs (Xvfb, WebKitWebDriver, tauri-driver) and, for
# the blank window, Debian's python3-gi with gir1.2-webkit2-4.1. About 25 s per round.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
target=${CARGO_TARGET_DIR:-$root/target}
app=${APP:-}
if [ "${1:-}" = "--app" ]; then
  [ -n "${2:-}" ] || { echo "budget.sh: --app needs the path of a gemini-desktop binary" >&2; exit 1; }
  app=$2
  shift 2
fi
if [ -z "$app" ]; then
  if [ -x /usr/bin/gemini-desktop ]; then app=/usr/bin/gemini-desktop; else app=$target/release/gemini-desktop; fi
fi
if [ "${SKIP_BUILD:-0}" != 1 ]; then
  if [ "$app" = "$target/release/gemini-desktop" ]; then
    "$root/scripts/build-ui.sh" >&2
    CARGO_INCREMENTAL=0 cargo build --release -p gemini-desktop >&2
  fi
  CARGO_INCREMENTAL=0 cargo build --release -p gd-e2e --example app-perf >&2
fi
[ -x "$app" ] || { echo "budget.sh: no app binary at $app (build it, install the package, or pass --app PATH)" >&2; exit 1; }
echo "budget.sh: measuring $app" >&2
/usr/bin/python3 -c 'import gi; gi.require_version("WebKit2", "4.1")' 2>/dev/null ||
  { echo "the blank window needs Debian's python3-gi and gir1.2-webkit2-4.1 (apt-get install python3-gi)" >&2; exit 1; }
GD_E2E_APP="$app" \
  "$target/release/examples/app-perf" --budget "$@"
