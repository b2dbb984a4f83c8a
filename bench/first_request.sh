#!/usr/bin/env bash
# Spawn -> first model request of the headless CLI with a fresh HOME (the
# history database is created) and a warm one, interleaved, N=20 each, plus
# strace counts (fsyncs, bytes written, syscalls) before the request is sent.
#
#   bench/first_request.sh [--json] [--runs N] [--no-strace] [--callgrind] [--cli PATH]
#
# Builds the release CLI and the fake server first (SKIP_BUILD=1: use what is
# built in the cargo target directory). About 10 s; --callgrind adds one run
# under valgrind (~5 s). Needs python3 and strace (valgrind for --callgrind).
# See bench/first_request.py.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
if [ -z "${SKIP_BUILD:-}" ]; then
  CARGO_INCREMENTAL=0 cargo build --release -p gd-cli -p gd-fake-gemini \
    --manifest-path "$root/Cargo.toml" >&2
fi
exec python3 "$root/bench/first_request.py" "$@"
