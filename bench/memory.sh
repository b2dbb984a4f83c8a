#!/usr/bin/env bash
# Memory loading (GEMINI.md discovery + imports) on a generated 150,000-file
# tree: the default bounded discovery (context.discoveryMaxDirs = 200) and an
# unbounded one that visits every directory.
#
#   bench/memory.sh [TREE]
#
# The tree (default /tmp/memory-bench-tree) is written by bench/gen_tree.py
# when missing; a few GEMINI.md files (one with an import) are added to it.
# Debug build (the shared machine forbids release builds); a release build
# is faster still.
set -euo pipefail
cd "$(dirname "$0")/.."

TREE=${1:-/tmp/memory-bench-tree}
RUNS=${RUNS:-10}
[ -d "$TREE" ] || python3 bench/gen_tree.py "$TREE" 150000
printf 'Root rules.\n@./docs/style.md\n' > "$TREE/GEMINI.md"
mkdir -p "$TREE/docs" && printf 'Style.\n' > "$TREE/docs/style.md"
printf 'Crate rules.\n' > "$TREE/crate_00/GEMINI.md"
printf 'Deep rules.\n' > "$TREE/crate_29/mod_49/GEMINI.md"
printf 'Ignored.\n' > "$TREE/target/GEMINI.md"

cargo build -p gd-core --example memory_bench
BENCH=target/debug/examples/memory_bench
echo "tree: $(find "$TREE" -type f | wc -l) files, $(find "$TREE" -type d | wc -l) directories"
"$BENCH" "$TREE" 200 "$RUNS"
"$BENCH" "$TREE" all "$RUNS"
