#!/usr/bin/env bash
# Takes a screenshot of the real Gemini Desktop window on a private Xvfb display.
#
# Usage: scripts/screenshot.sh [WORKSPACE_DIR] [OUT.png]
#   WORKSPACE_DIR  folder the app opens (default: the repository root)
#   OUT.png        output file (default: target/screenshots/gemini-desktop.png)
# Environment:
#   GD_APP=path    app binary (default: target/debug/gemini-desktop; build it first with
#                  `npm --prefix ui ci && npm --prefix ui run build && cargo build -p gemini-desktop`)
#   GD_THEME=dark  render with the dark GTK theme (so prefers-color-scheme: dark)
#
# Needs the Debian packages xvfb, xdotool and imagemagick.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
workspace="${1:-$root}"
out="${2:-$root/target/screenshots/gemini-desktop.png}"
app="${GD_APP:-$root/target/debug/gemini-desktop}"

for tool in Xvfb xdotool import; do
  command -v "$tool" >/dev/null || { echo "error: $tool not found (apt-get install xvfb xdotool imagemagick)" >&2; exit 1; }
done
[[ -x "$app" ]] || { echo "error: $app not found: build the app first (see the header of $0)" >&2; exit 1; }
mkdir -p "$(dirname "$out")"

pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
}
trap cleanup EXIT

# -displayfd: Xvfb picks a free display and prints its number once it accepts connections.
displayfd="$(mktemp)"
Xvfb -displayfd 1 -screen 0 1280x800x24 -nolisten tcp >"$displayfd" 2>/dev/null &
pids+=($!)
for _ in $(seq 100); do [[ -s "$displayfd" ]] && break; sleep 0.1; done
display=":$(head -n1 "$displayfd")"
rm -f "$displayfd"
[[ "$display" != ":" ]] || { echo "error: Xvfb did not start" >&2; exit 1; }

env_args=(DISPLAY="$display" GDK_BACKEND=x11)
[[ "${GD_THEME:-}" == dark ]] && env_args+=(GTK_THEME=Adwaita:dark)
env -u WAYLAND_DISPLAY "${env_args[@]}" "$app" "$workspace" &
pids+=($!)

# Wait for the window, for the page to replace the blank first frame, then for three identical
# consecutive captures (rendering finished).
DISPLAY="$display" timeout 30 xdotool search --sync --onlyvisible --name "Gemini Desktop" >/dev/null
capture() { DISPLAY="$display" import -window root "$out" && md5sum <"$out"; }
blank="$(capture)"
previous="$blank" stable=0
for _ in $(seq 100); do
  sleep 0.2
  current="$(capture)"
  if [[ "$current" != "$blank" && "$current" == "$previous" ]]; then
    stable=$((stable + 1))
    ((stable >= 2)) && break
  else
    stable=0
  fi
  previous="$current"
done
((stable >= 2)) || echo "warning: the window never settled on a rendered page" >&2
echo "$out"
