#!/usr/bin/env bash
# Desktop app benchmark under Xvfb: startup to content, idle memory of all app processes, and
# the on-screen lag of a fast stream (see bench/app/README.md).
#
#   bench/app/run.sh [--runs 5] [--idle-secs 5] [--stream-secs 10] [--rate 2000] [--chunk-chars 5]
#
# Builds the UI and a release app first (set SKIP_BUILD=1 to reuse them). Needs what the
# end-to-end tests need: Xvfb, WebKitWebDriver, tauri-driver (see tests/src/lib.rs).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
target=${CARGO_TARGET_DIR:-$root/target}
if [ "${SKIP_BUILD:-0}" != 1 ]; then
  if [ ! -d ui/node_modules ]; then npm --prefix ui ci; fi
  npm --prefix ui run build
  cargo build --release -p gemini-desktop
  cargo build --release -p gd-e2e --example app-perf
fi
mkdir -p bench/out
out="bench/out/app-perf-$(date -u +%Y%m%dT%H%M%SZ).json"
GD_E2E_APP="$target/release/gemini-desktop" \
  "$target/release/examples/app-perf" --report "$out" "$@"
