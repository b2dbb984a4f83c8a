#!/usr/bin/env bash
# Runs the whole test suite: installs what it needs, builds and tests the UI, builds the app, then runs
# every Rust test (unit, integration against the fake Gemini server, the headless CLI as a
# process, and the real app in WebKit under Xvfb), the keyring tests against a throwaway
# gnome-keyring in a private D-Bus session, and checks that the TypeScript protocol types
# generated from the Rust ones are committed.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

# Each phase's time goes to the log, so a slow CI run says where its minutes went.
start=$(date +%s)
phase_start=$start
phase() {
  local now
  now=$(date +%s)
  echo "== test.sh: $1 took $(( now - phase_start )) s (total $(( now - start )) s)" >&2
  phase_start=$now
}

scripts/install-deps.sh --test
phase "installing dependencies"
# The MCP tests' servers (installed by install-deps.sh --test).
export GD_TEST_MCP_PYTHON="${GD_TEST_MCP_PYTHON:-$root/target/test-deps/venv-mcp/bin/python}"
export GD_TEST_MCP_EVERYTHING="${GD_TEST_MCP_EVERYTHING:-$root/target/test-deps/mcp-node/node_modules/@modelcontextprotocol/server-everything/dist/index.js}"
npm --prefix ui ci --no-audit --no-fund
npm --prefix ui run build              # type-checks the UI, then bundles it into ui/dist
npm --prefix ui test                   # the UI's components in Debian's Chromium (Playwright)
phase "the UI (install, build, tests)"

# The end-to-end tests drive the built app binary, so build it (and the CLI) first.
cargo build --workspace --all-targets
phase "building the workspace"
cargo test --workspace --no-fail-fast
phase "the workspace's tests"

# The real keyring (Secret Service): `cargo test --workspace` built these tests and left them
# ignored; the script runs them inside its own D-Bus session with a throwaway keyring.
scripts/test-keyring.sh
phase "the keyring tests"

# ts-rs regenerates ui/src/protocol during `cargo test` (gd-auth's, gd-store's and gd-worktree's
# types too: their `ts` feature is on in the workspace's build, since the app enables it, so
# their `export_bindings` tests ran above), and gemini-desktop's tests write the UI's IPC client
# ui/src/protocol/commands.ts from src-tauri/src/command_list.rs: both must match what is
# committed.
if ! git diff --quiet -- ui/src/protocol || [ -n "$(git ls-files --others --exclude-standard ui/src/protocol)" ]; then
  echo "error: ui/src/protocol is out of date with the Rust protocol types; commit the regenerated files" >&2
  git status --short -- ui/src/protocol >&2
  exit 1
fi
echo "All tests passed."
