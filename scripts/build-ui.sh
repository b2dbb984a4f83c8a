#!/usr/bin/env bash
# Builds the UI (ui/dist) only when something it is built from changed since the last build,
# and runs `npm ci` only when ui/package-lock.json changed since the last install.
#
#   scripts/build-ui.sh           # used by scripts/run-app.sh and scripts/package.sh
#   scripts/build-ui.sh --force   # build anyway
#
# Why: the app embeds ui/dist, and its build script recompiles the app whenever a file there is
# rewritten. An unconditional `npm run build` made every run-app.sh / package.sh recompile and
# re-link the release app (minutes) even when nothing changed.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
ui=$root/ui
command -v npm >/dev/null || { echo "build-ui.sh: error: Node.js 20.19+ with npm is required" >&2; exit 1; }

# npm writes node_modules/.package-lock.json on every install: older than the lock file means
# the lock changed since.
if [ ! -f "$ui/node_modules/.package-lock.json" ] || [ "$ui/package-lock.json" -nt "$ui/node_modules/.package-lock.json" ]; then
  npm --prefix "$ui" ci --no-audit --no-fund
fi

stamp=$ui/dist/index.html
if [ "${1:-}" != "--force" ] && [ -f "$stamp" ] && ! grep -q 'gemini-desktop-placeholder' "$stamp"; then
  # Any source, config or installed package newer than the last build? (ui/tests is not built.)
  newer=$(find "$ui/src" "$ui/public" "$ui/index.html" "$ui/package.json" "$ui/package-lock.json" \
    "$ui/svelte.config.js" "$ui/tsconfig.json" "$ui/vite.config.ts" "$ui/node_modules/.package-lock.json" \
    -newer "$stamp" -print -quit)
  if [ -z "$newer" ]; then
    echo "build-ui.sh: ui/dist is up to date" >&2
    exit 0
  fi
fi
npm --prefix "$ui" run build
