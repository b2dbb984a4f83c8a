#!/usr/bin/env bash
# grep_search and glob (our tool code, release build) against ripgrep and fd,
# measured side by side with hyperfine on a warm cache.
#
#   bench/search.sh [TREE...]
#
# Default trees: ~/.cargo/registry/src and a generated 100k-file tree
# (/tmp/search-bench-tree, written by bench/gen_tree.py when missing).
# Needs: apt-get install ripgrep fd-find hyperfine
set -euo pipefail
cd "$(dirname "$0")/.."

RUNS=${RUNS:-10}
WARMUP=${WARMUP:-2}
OUT=${OUT:-target/search-bench}
GEN=/tmp/search-bench-tree

if [ $# -eq 0 ]; then
  [ -d "$GEN" ] || python3 bench/gen_tree.py "$GEN"
  set -- "$(echo ~/.cargo/registry/src)" "$GEN"
fi

cargo build --release -p gd-core --example search_bench
BENCH=$(pwd)/target/release/examples/search_bench
mkdir -p "$OUT"

tree_size() {
  find "$1" -type f -printf '%s\n' | awk '{n++; s+=$1} END {printf "%d files, %.1f MB", n, s/1e6}'
}

# hyperfine label, our command, their command (both parsed as shell words)
compare() {
  local label=$1 ours=$2 theirs=$3
  echo "== $label"
  echo "   ours:   $ours  -> $(sh -c "$ours")"
  echo "   theirs: $theirs  -> $(sh -c "$theirs" | wc -l) lines"
  # -i: rg exits 1 when nothing matches.
  hyperfine -N -i --warmup "$WARMUP" --runs "$RUNS" \
    --export-json "$OUT/$label.json" --export-markdown "$OUT/$label.md" \
    -n ours "$ours" -n theirs "$theirs"
}

i=0
for tree in "$@"; do
  i=$((i + 1))
  echo "## $tree: $(tree_size "$tree")"
  # Case-insensitive on both sides: grep_search ignores case by default.
  # Our grep formats every matching line (no limits); rg only counts them.
  compare "t${i}-grep-rare" "$BENCH grep $tree catch_unwind" \
    "rg -i -c --no-messages catch_unwind $tree"
  compare "t${i}-grep-common" "$BENCH grep $tree 'unsafe impl'" \
    "rg -i -c --no-messages 'unsafe impl' $tree"
  compare "t${i}-grep-regex" "$BENCH grep $tree 'fn [a-z]+_[a-z]+\\(self'" \
    "rg -i -c --no-messages 'fn [a-z]+_[a-z]+\\(self' $tree"
  # glob lists hidden files too, so fd gets -H (it skips .git either way).
  compare "t${i}-glob" "$BENCH glob $tree '**/*.rs'" \
    "fdfind -H -g '**/*.rs' $tree"
done
