#!/usr/bin/env bash
# Runs the keyring tests (crates/auth/tests/it/keyring.rs, and gd-core's
# tests/it/extensions_keyring.rs: an extension's sensitive setting) against a real Secret Service: a private
# D-Bus session with a throwaway gnome-keyring, unlocked with a dummy password. Its data and
# control socket live in a temporary directory, so the developer's own keyring is never touched.
# Needs gnome-keyring, dbus-x11 (dbus-run-session) and libsecret-tools (secret-tool); see
# scripts/install-deps.sh --test. The tests run single-threaded: the Secret Service dislikes
# concurrent access from one client.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

for tool in dbus-run-session gnome-keyring-daemon secret-tool; do
  command -v "$tool" >/dev/null || { echo "error: $tool is missing; run scripts/install-deps.sh --test" >&2; exit 1; }
done

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/data" "$tmp/run"
chmod 700 "$tmp/run"

# The tests are `#[ignore]`d, so a plain `cargo test` never reaches a keyring; here they run with
# `--ignored`. `--workspace` keeps the features `cargo test --workspace` built with, so after
# scripts/test.sh's run nothing is compiled again (a `-p` build would resolve features anew and
# rebuild gd-core and its dependencies: minutes). Build first (outside the session) so the
# session only runs tests.
tests=(--workspace --test it)
cargo test "${tests[@]}" --no-run

# The ignored tests of the `it` binaries are the keyring ones; the filter names them (gd-auth:
# keyring::, gd-core: extensions_keyring::). The run must have run some: a filter or a quoting
# slip that selects nothing would otherwise pass in silence.
XDG_DATA_HOME="$tmp/data" XDG_RUNTIME_DIR="$tmp/run" GD_KEYRING_TEST_SESSION=1 dbus-run-session -- bash -c '
  set -euo pipefail
  echo -n throwaway-test-password | gnome-keyring-daemon --unlock --components=secrets >/dev/null
  cargo test "$@" -- --ignored --test-threads=1 keyring::
' bash "${tests[@]}" "$@" 2>&1 | tee "$tmp/log"
ran=$(awk '/^test result: ok\. [0-9]+ passed/ { n += $4 } END { print n + 0 }' "$tmp/log")
if [ "${ran:-0}" -eq 0 ]; then
  echo "error: no keyring test ran" >&2
  exit 1
fi
echo "keyring tests: $ran passed"
