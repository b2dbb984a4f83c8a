#!/usr/bin/env bash
# Tests the .deb on this machine, as a user gets it: builds it (scripts/package.sh), installs it
# with apt-get, checks the installed files, runs the installed app and CLI against the fake
# Gemini server, measures the installed app's performance budget figures, draws the installed
# menu entry, then purges the package and checks nothing of it is left in /usr.
# INSTALLS AND REMOVES A SYSTEM PACKAGE: run it on a build or test machine, as root or with sudo.
# Not part of CI (a release build and the budget take ~20 min); results go in docs/PACKAGING.md.
#
#   scripts/test-package.sh           # package.sh first
#   scripts/test-package.sh --reuse   # test the packages already in dist/
#   SKIP_BUDGET=1 scripts/test-package.sh --reuse   # without the ~2 min performance budget
#
# Writes target/package/test/: report.txt (timings, what was checked), budget.json, the rpm
# listing; and docs/screenshots/menu-entry-{light,dark}.png.
# Needs: scripts/install-deps.sh --test and --package (Xvfb, WebKitWebDriver, tauri-driver,
# python3-gi, imagemagick, desktop-file-validate, appstreamcli, rpm).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
target=${CARGO_TARGET_DIR:-$root/target}
dist=$root/dist
out=$root/target/package/test
mkdir -p "$out"
report=$out/report.txt
: > "$report"

die() { echo "test-package.sh: FAILED: $*" >&2; echo "FAILED: $*" >> "$report"; exit 1; }
note() { echo "$*" | tee -a "$report" >&2; }
now() { date +%s.%N; }
took() { python3 -c "import sys; print('%.0f s' % (float(sys.argv[2]) - float(sys.argv[1])))" "$1" "$(now)"; }

reuse=false
[ "${1:-}" = "--reuse" ] && reuse=true

sudo=""
[ "$(id -u)" -ne 0 ] && sudo=sudo
for tool in apt-get dpkg Xvfb import desktop-file-validate appstreamcli rpm tauri-driver WebKitWebDriver man; do
  command -v "$tool" >/dev/null ||
    die "'$tool' is missing: run scripts/install-deps.sh --test and scripts/install-deps.sh --package"
done
/usr/bin/python3 -c 'import gi; gi.require_version("Gtk", "3.0")' 2>/dev/null ||
  die "python3-gi with GTK 3 is missing: run scripts/install-deps.sh --package"

note "test-package.sh, $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, $(sed -n 's/^PRETTY_NAME=//p' /etc/os-release | tr -d '"')"
t_all=$(now)

# --- 1. The packages.
if $reuse; then
  note "packages: reused from dist/"
else
  t=$(now)
  scripts/package.sh
  note "scripts/package.sh: $(took "$t")"
fi
shopt -s nullglob
debs=("$dist"/*.deb)
rpms=("$dist"/*.rpm)
[ ${#debs[@]} -eq 1 ] || die "expected one .deb in dist/, found ${#debs[@]} (run scripts/package.sh)"
[ ${#rpms[@]} -eq 1 ] || die "expected one .rpm in dist/, found ${#rpms[@]}"
deb=${debs[0]}
rpm_file=${rpms[0]}
(cd "$dist" && sha256sum -c SHA256SUMS >/dev/null) || die "dist/SHA256SUMS does not match the packages"
note "checked: dist/SHA256SUMS matches"
pkg=$(dpkg-deb -f "$deb" Package)
note "package: $(basename "$deb") ($pkg $(dpkg-deb -f "$deb" Version), $(du -h "$deb" | cut -f1)); $(basename "$rpm_file") ($(du -h "$rpm_file" | cut -f1))"
if dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
  die "$pkg is already installed: remove it first (apt-get remove --purge $pkg), so the before/after comparison of /usr means something"
fi

# --- 2. Install, with /usr listed before.
find /usr -xdev | sort > "$out/usr-before.txt"
t=$(now)
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "$deb" > "$out/apt-install.log" 2>&1 ||
  die "apt-get install failed: see $out/apt-install.log"
note "apt-get install -y ./$(basename "$deb"): $(took "$t")"
dpkg -L "$pkg" | sort > "$out/dpkg-L.txt"
# Whatever happens next, the package does not stay installed by accident.
cleanup() {
  if dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
    echo "test-package.sh: removing $pkg after the failure" >&2
    DEBIAN_FRONTEND=noninteractive $sudo apt-get remove --purge -y -qq "$pkg" >/dev/null 2>&1 || true
  fi
}
trap cleanup EXIT

# --- 3. The installed files.
for f in /usr/bin/gemini-desktop /usr/bin/gemini-desktop-cli; do
  [ -x "$f" ] || die "$f is not installed (or not executable)"
done
[ "$(command -v gemini-desktop-cli)" = /usr/bin/gemini-desktop-cli ] ||
  die "gemini-desktop-cli on the PATH is $(command -v gemini-desktop-cli), not /usr/bin/gemini-desktop-cli"
desktop=$(grep -E '^/usr/share/applications/[^/]+\.desktop$' "$out/dpkg-L.txt" || true)
if [ -z "$desktop" ] || [ "$(echo "$desktop" | wc -l)" -ne 1 ]; then die "expected one desktop entry, got: $desktop"; fi
desktop-file-validate "$desktop" || die "$desktop does not validate"
note "checked: /usr/bin/gemini-desktop, /usr/bin/gemini-desktop-cli (on the PATH); desktop-file-validate '$desktop'"
icon=$(sed -n 's/^Icon=//p' "$desktop")
for size in 16 22 24 32 48 64 128 256 512; do
  png=/usr/share/icons/hicolor/${size}x${size}/apps/$icon.png
  [ -f "$png" ] || die "no ${size}x${size} icon: $png"
  dims=$(python3 -c 'import struct,sys; d=open(sys.argv[1],"rb").read(24); print("%dx%d" % struct.unpack(">II", d[16:24]))' "$png")
  [ "$dims" = "${size}x${size}" ] || die "$png is $dims"
done
note "checked: icons /usr/share/icons/hicolor/{16,22,24,32,48,64,128,256,512}/apps/$icon.png, each its size"
metainfo=/usr/share/metainfo/dev.geminidesktop.gemini-desktop.metainfo.xml
appstreamcli validate --no-net "$metainfo" > "$out/appstream.txt" 2>&1 || die "$metainfo does not validate: $(cat "$out/appstream.txt")"
note "checked: appstreamcli validate $metainfo"
for page in gemini-desktop gemini-desktop-cli; do
  [ "$(man -w "$page")" = "/usr/share/man/man1/$page.1.gz" ] || die "man -w $page: $(man -w "$page" 2>&1)"
  MANWIDTH=100 man "$page" 2>/dev/null | grep -q -- "--version" || die "man $page does not render (or lacks --version)"
done
note "checked: man gemini-desktop, man gemini-desktop-cli (/usr/share/man/man1/*.1.gz, rendered)"

# --- 4. The installed CLI from the PATH against the fake Gemini server.
fake=$target/release/fake-gemini
[ -x "$fake" ] || cargo build --release -p gd-fake-gemini
tmp=$(mktemp -d)
fake_pid=
cleanup_all() { if [ -n "$fake_pid" ]; then kill "$fake_pid" 2>/dev/null || true; fi; rm -rf "$tmp"; cleanup; }
trap cleanup_all EXIT
mkdir -p "$tmp/home" "$tmp/ws"
echo '{"name":"installed","steps":[{"text":"The installed CLI answers."}]}' > "$tmp/scenario.json"
"$fake" --port 0 --port-file "$tmp/port" --scenario "$tmp/scenario.json" > "$tmp/fake.log" 2>&1 &
fake_pid=$!
for _ in $(seq 100); do [ -s "$tmp/port" ] && break; sleep 0.05; done
[ -s "$tmp/port" ] || die "fake-gemini did not start: $(cat "$tmp/fake.log")"
base=http://127.0.0.1:$(cat "$tmp/port")
answer=$(cd "$tmp/ws" && env -i PATH=/usr/bin:/bin HOME="$tmp/home" GEMINI_API_KEY=x GOOGLE_GEMINI_BASE_URL="$base" \
  gemini-desktop-cli --skip-trust -p "Are you installed?" -o json -m gemini-2.5-flash 2> "$out/cli.stderr") ||
  die "gemini-desktop-cli failed: $(cat "$out/cli.stderr")"
response=$(echo "$answer" | python3 -c 'import json,sys; print(json.load(sys.stdin)["response"])')
[ "$response" = "The installed CLI answers." ] || die "gemini-desktop-cli answered: $answer"
note "checked: gemini-desktop-cli -p (from the PATH, fresh HOME) against the fake server answered '$response'"
note "version: $(gemini-desktop-cli --version)"

# --- 5. The installed app under Xvfb (the e2e harness: WebDriver, fake server): prompt box, answer.
t=$(now)
GD_E2E_APP=/usr/bin/gemini-desktop cargo test --release -q -p gd-e2e --test e2e -- --ignored --nocapture installed:: \
  > "$out/e2e.log" 2>&1 || die "the installed app's end-to-end test failed: see $out/e2e.log"
grep -q "test result: ok. 1 passed" "$out/e2e.log" || die "the installed app's end-to-end test did not run: see $out/e2e.log"
grep -q "installed: testing /usr/bin/gemini-desktop$" "$out/e2e.log" || die "the end-to-end test did not test /usr/bin/gemini-desktop: see $out/e2e.log"
note "checked: /usr/bin/gemini-desktop under Xvfb showed the prompt box and the fake server's answer (tests/tests/e2e/installed.rs; $(took "$t") with its build)"

# --- 6. The menu entry as a launcher draws it (GTK 3, the default icon theme), light and dark.
mkdir -p docs/screenshots
for theme in light dark; do
  display=:$((90 + RANDOM % 9))
  Xvfb "$display" -screen 0 560x320x24 -nolisten tcp > "$tmp/xvfb.log" 2>&1 &
  xvfb_pid=$!
  for _ in $(seq 50); do xdpyinfo -display "$display" >/dev/null 2>&1 && break; sleep 0.1; done
  flag=""; [ "$theme" = dark ] && flag=--dark
  DISPLAY=$display NO_AT_BRIDGE=1 /usr/bin/python3 packaging/menu-entry-preview.py "$(basename "$desktop")" $flag \
    > "$out/menu-entry-$theme.txt" 2>&1 &
  preview_pid=$!
  sleep 3
  kill -0 "$preview_pid" 2>/dev/null || { kill "$xvfb_pid"; die "menu-entry-preview.py failed: $(cat "$out/menu-entry-$theme.txt")"; }
  DISPLAY=$display import -window root "docs/screenshots/menu-entry-$theme.png"
  kill "$preview_pid" "$xvfb_pid" 2>/dev/null || true
  wait "$preview_pid" "$xvfb_pid" 2>/dev/null || true
done
note "drew: docs/screenshots/menu-entry-{light,dark}.png (the icon resolved at every size: $out/menu-entry-light.txt)"

# --- 7. The performance budget's desktop figures, of the installed app.
if [ "${SKIP_BUDGET:-0}" != 1 ]; then
  t=$(now)
  bench/app/budget.sh --app /usr/bin/gemini-desktop --json --runs 3 > "$out/budget.out" 2> "$out/budget.err" ||
    die "bench/app/budget.sh failed: see $out/budget.err"
  tail -n 1 "$out/budget.out" > "$out/budget.json"
  python3 - "$out/budget.json" <<'PY' | tee -a "$report" >&2
import json, sys
d = json.load(open(sys.argv[1]))
print(f"budget (bench/app/budget.sh --app /usr/bin/gemini-desktop --runs 3), binary {d['meta'].get('app')}:")
for k, v in d["figures"].items():
    print(f"  {k} = {v}")
PY
  note "budget: $(took "$t")"
fi

# --- 8. The .rpm (not installable on Debian): its files and requirements.
rpm -qpi "$rpm_file" > "$out/rpm-info.txt" 2>&1
rpm -qlp "$rpm_file" > "$out/rpm-files.txt"
rpm -qpR "$rpm_file" > "$out/rpm-requires.txt"
for f in /usr/bin/gemini-desktop /usr/bin/gemini-desktop-cli "$desktop" "$metainfo" \
  /usr/share/man/man1/gemini-desktop.1.gz /usr/share/man/man1/gemini-desktop-cli.1.gz \
  "/usr/share/icons/hicolor/512x512/apps/$icon.png"; do
  grep -qxF "$f" "$out/rpm-files.txt" || die "the .rpm lacks $f"
done
grep -qxF -e webkit2gtk4.1 -e 'libwebkit2gtk-4.1.so.0()(64bit)' "$out/rpm-requires.txt" || die "the .rpm does not require WebKitGTK 4.1"
note "checked: the .rpm (rpm -qlp, -qpR) holds the same binaries, entry, metainfo, man pages and icons; requires $(grep -v '^rpmlib' "$out/rpm-requires.txt" | tr '\n' ' ')"

# --- 9. Purge, and nothing is left.
t=$(now)
DEBIAN_FRONTEND=noninteractive $sudo apt-get remove --purge -y -qq "$pkg" > "$out/apt-remove.log" 2>&1 ||
  die "apt-get remove --purge failed: see $out/apt-remove.log"
note "apt-get remove --purge -y $pkg: $(took "$t")"
left=()
while read -r path; do
  [ -e "$path" ] || continue
  # A directory that existed before the install is shared (/usr/share/applications...): it stays.
  if [ -d "$path" ] && grep -qxF "$path" "$out/usr-before.txt"; then continue; fi
  left+=("$path")
done < "$out/dpkg-L.txt"
[ ${#left[@]} -eq 0 ] || die "left behind after the purge: ${left[*]}"
find /usr -xdev | sort > "$out/usr-after.txt"
diff "$out/usr-before.txt" "$out/usr-after.txt" > "$out/usr-diff.txt" ||
  die "/usr differs from before the install: $(head -20 "$out/usr-diff.txt")"
note "checked: after the purge every file dpkg -L listed is gone ($(wc -l < "$out/dpkg-L.txt") paths) and /usr lists as before ($(wc -l < "$out/usr-after.txt") paths)"
note "test-package.sh: all checks passed in $(took "$t_all")"
