#!/usr/bin/env bash
# Refreshes the README's screenshots (docs/screenshots/*.png) from the real app under Xvfb
# (tests/tests/e2e/docs_screenshots.rs). Builds the UI and the app first.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
npm --prefix ui run build
# --workspace, not -p: the workspace's feature set, which the tests' build already compiled
cargo build --workspace --bins
mkdir -p docs/screenshots
GD_DOCS_SCREENSHOTS="$root/docs/screenshots" \
  cargo test --workspace --test e2e -- --ignored --nocapture docs_screenshots:: docs_review:: docs_truth:: updater::docs_updates sandbox::docs_sandbox
echo "docs/screenshots/ refreshed"
