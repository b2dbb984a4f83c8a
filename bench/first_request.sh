#!/usr/bin/env bash
# Spawn -> first model request of the headless CLI with a fresh HOME (the
# history database is created) and a warm one, interleaved, N=20 each, plus
# strace counts (fsyncs, bytes written, syscalls) before the request is sent.
#
#   bench/first_request.sh [--json] [--runs N] [--no-strace] [--callgrind]
#
# Builds the release CLI and the fake server first; CLI=... FAKE=... use given
# binaries instead (e.g. to compare two builds). About 15 s without
# --callgrind (which adds one run under valgrind, ~20 s). Needs python3 and
# strace (valgrind for --callgrind). See bench/first_request.py.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
target=${CARGO_TARGET_DIR:-$root/target}
if [ -z "${CLI:-}" ] || [ -z "${FAKE:-}" ]; then
  CARGO_INCREMENTAL=0 cargo build --release -p gd-cli -p gd-fake-gemini \
    --manifest-path "$root/Cargo.toml" >&2
fi
CLI=${CLI:-$target/release/gemini-desktop-cli}
FAKE=${FAKE:-$target/release/fake-gemini}
exec python3 "$root/bench/first_request.py" "$CLI" "$FAKE" "$@"
