#!/usr/bin/env bash
# Installs the system dependencies, builds Gemini Desktop and launches it on a folder.
#
#   scripts/run-app.sh [FOLDER]      # FOLDER defaults to the current directory
#
# It builds and starts the RELEASE app (what the packages ship: the budget's start and memory
# figures are of this build). The first build takes 15-20 minutes on 2 cores; later runs are
# incremental. The CLI is built too (target/release/gemini-desktop-cli), the same build
# scripts/package.sh uses. Developers who want the faster-to-compile debug build run
# `cargo build -p gemini-desktop` and target/debug/gemini-desktop FOLDER.
#
# The agent needs credentials: GEMINI_API_KEY in the environment or in a .env file
# (e.g. FOLDER/.gemini/.env), as with Gemini CLI.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
folder=$(cd "${1:-$PWD}" && pwd)

"$root/scripts/install-deps.sh"
"$root/scripts/build-ui.sh" # only when the UI changed: a rebuilt UI makes cargo re-embed it
cargo build --manifest-path "$root/Cargo.toml" --release -p gemini-desktop -p gd-cli
exec "${CARGO_TARGET_DIR:-$root/target}/release/gemini-desktop" "$folder"
