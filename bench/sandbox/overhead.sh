#!/usr/bin/env bash
# The sandbox's per-command overhead (issue 36): `true`, `git status` in a real repository and
# `ls -R` of a folder, each run plainly and in the sandbox.
#
#   bench/sandbox/overhead.sh [RUNS]
#
# 1. The app's path, end to end (crates/sandbox/examples/overhead.rs, release build): prepare
#    the policy (mounts, git folders, seccomp descriptor), spawn bubblewrap, wait — against
#    spawning the command itself. The workspace is a local clone of this repository.
# 2. With hyperfine, when installed: the same commands against the exact bubblewrap command
#    line the app builds (printed by examples/sandboxed.rs --print), which leaves out
#    `prepare` and this binary's own process start.
set -euo pipefail

runs=${1:-200}
root=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/gd-sandbox-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT

cargo build --release -q -p gd-sandbox --example overhead --example sandboxed --manifest-path "$root/Cargo.toml"
bin="${CARGO_TARGET_DIR:-$root/target}/release/examples"

# A real repository: a clone of this one (objects shared, a checkout of its own).
git clone -q --shared "$root" "$work/repo"
repo="$work/repo"

echo "## Machine"
echo
echo "- $(uname -srm), $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
echo "- $(bwrap --version), $(git --version)"
echo "- load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "- $(date -u '+%Y-%m-%d %H:%M UTC'), $runs runs per case"
echo
echo "## The app's path (prepare + spawn + wait)"
echo
"$bin/overhead" "$repo" "$runs"

if command -v hyperfine >/dev/null; then
    echo
    echo "## hyperfine: plain vs the bubblewrap command line"
    echo
    cd "$repo"
    list="$repo/crates"
    [ -d "$list" ] || list="$repo"
    seccomp="$work/seccomp.bpf"
    line() { "$bin/sandboxed" -w "$repo" --print "$seccomp" -- "$@"; }
    hyperfine -N --warmup 10 --runs "$runs" --style none --export-markdown "$work/plain.md" \
        'true' 'git status --short' "ls -R $list" >/dev/null
    hyperfine --warmup 10 --runs "$runs" --style none --export-markdown "$work/boxed.md" \
        "$(line true)" "$(line git status --short)" "$(line ls -R "$list")" >/dev/null
    echo "Plain (\`hyperfine -N\`):"
    echo
    sed 's/|:---|/|:---|/' "$work/plain.md"
    echo
    echo "Sandboxed (the shell hyperfine starts them with is subtracted):"
    echo
    # The command lines are long: name the rows by the command they run.
    awk -F'|' 'NR<=2 {print; next} {cmd=$2; sub(/.* -- /, "", cmd); sub(/ 3<.*/, "", cmd); $2=" `bwrap … -- " cmd "` "; print}' OFS='|' "$work/boxed.md"
fi
