#!/usr/bin/env bash
# Installs the system dependencies, builds Gemini Desktop and launches it on a folder.
#
#   scripts/run-app.sh [FOLDER]      # FOLDER defaults to the current directory
#
# The agent needs credentials: GEMINI_API_KEY in the environment or in a .env file
# (e.g. FOLDER/.gemini/.env), as with Gemini CLI.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
folder=$(cd "${1:-$PWD}" && pwd)

"$root/scripts/install-deps.sh"
npm --prefix "$root/ui" ci --no-audit --no-fund
npm --prefix "$root/ui" run build
cargo build --manifest-path "$root/Cargo.toml" -p gemini-desktop -p gd-cli
exec "$root/target/debug/gemini-desktop" "$folder"
