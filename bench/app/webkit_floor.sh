#!/usr/bin/env bash
# Idle memory of the release app next to the WebKitGTK floor (bench/app/blank_webkit.py), in
# one run: each launched ROUNDS times, alternating, under its own Xvfb display and D-Bus
# session with a fresh HOME, both with WebKit's compositing off (the app's default on Linux).
# After IDLE seconds the RSS and PSS of the process and all its descendants are summed.
#   bench/app/webkit_floor.sh            # ROUNDS=3 IDLE=8 APP=target/release/gemini-desktop
set -euo pipefail
cd "$(dirname "$0")/../.."
ROUNDS=${ROUNDS:-3}
IDLE=${IDLE:-8}
APP=${APP:-target/release/gemini-desktop}
[ -x "$APP" ] || { echo "build the app first: cargo build --release -p gemini-desktop" >&2; exit 1; }
/usr/bin/python3 -c 'import gi; gi.require_version("WebKit2", "4.1")' 2>/dev/null ||
  { echo "the floor needs Debian's python3-gi and gir1.2-webkit2-4.1 (apt-get install python3-gi)" >&2; exit 1; }

# Sum of VmRSS and Pss (kB) over $1 and its descendants.
tree_memory() {
  local root=$1 pids=$1 frontier=$1 next
  while [ -n "$frontier" ]; do
    next=""
    for p in $frontier; do
      for c in $(cat /proc/"$p"/task/*/children 2>/dev/null); do next="$next $c"; done
    done
    pids="$pids $next"
    frontier=$next
  done
  local rss=0 pss=0 names=""
  for p in $pids; do
    [ -r /proc/"$p"/status ] || continue
    r=$(awk '/^VmRSS/ {print $2}' /proc/"$p"/status); s=$(awk '/^Pss:/ {print $2}' /proc/"$p"/smaps_rollup 2>/dev/null)
    rss=$((rss + ${r:-0})); pss=$((pss + ${s:-0}))
    names="$names $(cat /proc/"$p"/comm)=$(( ${r:-0} / 1024 ))"
  done
  echo "$rss $pss$names"
}

# Launches "$@" in a private X display, D-Bus session and HOME; prints its tree's memory.
measure() {
  local display=$1; shift
  local home ws
  home=$(mktemp -d) ws=$(mktemp -d)
  Xvfb ":$display" -screen 0 1280x900x24 -nolisten tcp >/dev/null 2>&1 &
  local xvfb=$!
  for _ in $(seq 50); do [ -e "/tmp/.X11-unix/X$display" ] && break; sleep 0.1; done
  DISPLAY=":$display" HOME="$home" WEBKIT_DISABLE_COMPOSITING_MODE=1 \
    GEMINI_API_KEY=bench-key GOOGLE_GEMINI_BASE_URL=http://127.0.0.1:9 GEMINI_CLI_TRUST_WORKSPACE=true \
    setsid dbus-run-session -- "$@" "$ws" >"$home/out.log" 2>&1 &
  local session=$!
  sleep "$IDLE"
  # The measured process: the first child of dbus-run-session that is not dbus-daemon.
  local target=""
  for c in $(cat /proc/"$session"/task/*/children); do
    [ "$(cat /proc/"$c"/comm)" = dbus-daemon ] || target=$c
  done
  tree_memory "$target"
  kill -- -"$session" 2>/dev/null || true
  kill "$xvfb" 2>/dev/null || true
  wait "$session" "$xvfb" 2>/dev/null || true
  rm -rf "$home" "$ws"
}

printf '| round | what | RSS (MB) | PSS (MB) | processes (RSS MB) |\n|---|---|---|---|---|\n'
for round in $(seq "$ROUNDS"); do
  for what in floor app; do
    if [ $what = floor ]; then
      line=$(measure 91 /usr/bin/python3 bench/app/blank_webkit.py)
    else
      line=$(measure 92 "$APP")
    fi
    read -r rss pss names <<<"$line"
    printf '| %s | %s | %.1f | %.1f | %s |\n' "$round" "$what" "$(echo "$rss/1024" | bc -l)" "$(echo "$pss/1024" | bc -l)" "$names"
  done
done
