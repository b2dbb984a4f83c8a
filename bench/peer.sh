#!/usr/bin/env bash
# Side-by-side benchmark of gemini-desktop-cli against Gemini CLI 0.61 with the
# peer-bench kit (a fake Gemini server, the real gemini-cli from npm, and a
# harness that interleaves both CLIs on the same scenarios and prints B/A ratios).
#
#   bench/peer.sh                       # a_text,b_list_dir, 10 repeats
#   SCENARIOS=a_text,b_list_dir,c_shell REPEATS=5 bench/peer.sh
#
# PEER_BENCH_DIR points at the kit (default: ../shared/peer-bench beside the repo).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
kit=${PEER_BENCH_DIR:-$root/../shared/peer-bench}
scenarios=${SCENARIOS:-a_text,b_list_dir}
repeats=${REPEATS:-10}

if [ ! -f "$kit/bench.py" ]; then
  echo "peer-bench kit not found at $kit (set PEER_BENCH_DIR)" >&2
  exit 2
fi
"$kit/setup.sh" >/dev/null
cargo build --release -p gd-cli --manifest-path "$root/Cargo.toml"
mkdir -p "$root/bench/out"
python3 "$kit/bench.py" \
  --compare gemini-cli-norelaunch "$root/target/release/gemini-desktop-cli" \
  --label gemini-cli --label gemini-desktop-cli \
  --scenarios "$scenarios" --repeats "$repeats" \
  --out "$root/bench/out/$(date -u +%Y%m%dT%H%M%SZ)"
