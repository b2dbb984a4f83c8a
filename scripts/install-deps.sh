#!/usr/bin/env bash
# Installs what building and testing Gemini Desktop needs on Debian 12 / Ubuntu 22.04+:
# the WebKitGTK/GTK development packages Tauri builds against, and with --test the tools the
# end-to-end tests use (Xvfb, WebKitWebDriver, tauri-driver) and the keyring tests use (a
# gnome-keyring Secret Service in a private D-Bus session, libsecret's secret-tool). Idempotent: packages already
# present are not reinstalled, and apt-get runs only when something is missing.
#
#   scripts/install-deps.sh          # build + run the app
#   scripts/install-deps.sh --test   # also everything the test suite needs
#   scripts/install-deps.sh --bench  # also the peers and counters of bench/check.sh
#   scripts/install-deps.sh --package  # also what scripts/package.sh and test-package.sh use
#
# With --test it also installs the MCP servers the MCP tests run (into target/test-deps, found
# there by the tests, or via GD_TEST_MCP_PYTHON / GD_TEST_MCP_EVERYTHING):
#   target/test-deps/venv-mcp   python venv with mcp==2.3.0 (the fixture servers in tests/fixtures/mcp)
#   target/test-deps/mcp-node   @modelcontextprotocol/server-everything@2026.8.31
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)

want_test=false
want_bench=false
want_package=false
[ "${1:-}" = "--test" ] && want_test=true
[ "${1:-}" = "--bench" ] && want_bench=true
[ "${1:-}" = "--package" ] && want_package=true

build_packages=(
  libwebkit2gtk-4.1-dev libgtk-3-dev librsvg2-dev libayatana-appindicator3-dev libssl-dev
  pkg-config build-essential file libxdo-dev libsoup-3.0-dev libjavascriptcoregtk-4.1-dev
  libdbus-1-dev
  bubblewrap  # the command sandbox (security.toolSandboxing, crates/sandbox)
)
test_packages=(xvfb xauth webkit2gtk-driver dbus xdotool imagemagick git gnome-keyring dbus-x11 libsecret-tools python3-venv
  chromium-headless-shell  # the UI tests' browser (ui/tests/support/harness.mjs): no browser UI to start per page
  fd-find  # the file-picker bench compares the index build with fd
  openssl  # crates/gemini/tests/tls.rs makes a CA and serves HTTPS with the openssl binary
  x11-utils # xprop: tests/tests/e2e/conversations.rs reads the window's urgency hint
  curl)     # crates/sandbox/tests: a connection from inside the sandbox must fail

# bench/check.sh: the peers (ripgrep, fd), the counters (valgrind, strace), hyperfine for
# bench/search.sh, and Debian's python3-gi for the blank WebKitGTK window (bench/app).
bench_packages=(ripgrep fd-find valgrind strace hyperfine python3-gi xvfb xauth webkit2gtk-driver dbus)

# scripts/package.sh validates what it packages (desktop-file-validate, appstreamcli, groff for
# the man pages, rpm and cpio to read the .rpm back); scripts/test-package.sh also draws the installed
# desktop entry with GTK 3 under Xvfb (python3-gi) and captures it with imagemagick. Not in the
# default or --test sets: CI does not build packages.
package_packages=(desktop-file-utils appstream groff-base rpm cpio xvfb xauth imagemagick python3-gi gir1.2-gtk-3.0)

packages=("${build_packages[@]}")
$want_test && packages+=("${test_packages[@]}")
$want_bench && packages+=("${bench_packages[@]}")
$want_package && packages+=("${package_packages[@]}")

missing=()
for pkg in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
if [ ${#missing[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" -ne 0 ] && sudo=sudo
  echo "Installing: ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

command -v cargo >/dev/null || { echo "error: Rust (cargo) is required: https://rustup.rs" >&2; exit 1; }
command -v npm >/dev/null || { echo "error: Node.js 20.19+ with npm is required" >&2; exit 1; }

if $want_test && ! command -v tauri-driver >/dev/null; then
  echo "Installing tauri-driver (cargo install, ~1 min)"
  cargo install tauri-driver --locked --version '^2' --quiet
fi

if $want_test; then
  "$root/scripts/install-mcp-test-deps.sh"
fi
