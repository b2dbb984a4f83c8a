#!/usr/bin/env bash
# Refreshes the README's screenshots (docs/screenshots/*.png) from the real app under Xvfb
# (tests/tests/e2e/docs_screenshots.rs). Builds the UI and the app first.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
npm --prefix ui run build
cargo build -p gemini-desktop
mkdir -p docs/screenshots
GD_DOCS_SCREENSHOTS="$root/docs/screenshots" \
  cargo test -p gd-e2e --test e2e -- --ignored --nocapture docs_screenshots:: docs_review::
echo "docs/screenshots/ refreshed"
