#!/usr/bin/env bash
# Builds the release packages of Gemini Desktop: a .deb and an .rpm holding the app
# (/usr/bin/gemini-desktop), the headless CLI (/usr/bin/gemini-desktop-cli), the desktop entry,
# icons at every hicolor size, the AppStream metainfo and both man pages; then checks them and
# writes dist/SHA256SUMS.
#
#   scripts/package.sh            # -> dist/gemini-desktop_<v>_amd64.deb, dist/gemini-desktop-<v>-1.x86_64.rpm
#   scripts/package.sh --check-only DEB RPM   # only the checks, of packages built before
#
# Steps: the UI, `cargo build --release -p gemini-desktop -p gd-cli` (the same build
# scripts/run-app.sh makes, so one does not rebuild after the other), then `tauri bundle`, which
# packages those binaries without compiling again (unlike `tauri build`): the packaged app is
# exactly that build, and what is given to the bundler with --config (signing) cannot reach it.
# AppImage is not built: its bundler downloads AppRun and linuxdeploy from the internet at
# bundle time.
#
# Update signing (optional): with TAURI_SIGNING_PRIVATE_KEY (and TAURI_SIGNING_PRIVATE_KEY_PASSWORD
# if the key has one) set, the bundles are signed (dist/*.sig) and dist/latest.json, the Tauri v2
# static update manifest, is written. Then these are required too:
#   GD_UPDATER_PUBKEY     the matching public key (the text of the .pub file `tauri signer
#                         generate` writes); exported to the app's build, which reads it at compile time
#   GD_UPDATE_BASE_URL    where the bundles will be published (latest.json's urls)
#   GD_RELEASE_NOTES      the notes (or GD_RELEASE_NOTES_FILE, a file holding them)
# Needs: scripts/install-deps.sh --package (desktop-file-validate, appstreamcli, rpm).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
target=${CARGO_TARGET_DIR:-$root/target}
dist=$root/dist
stage=$root/target/package # tauri.conf.json's bundle.linux.*.files point here

die() { echo "package.sh: error: $*" >&2; exit 1; }
step() { echo "==> $*" >&2; }
# The package type tauri bundle writes into the app binary (UNK before any bundling): the
# updater reads it to know which package to download.
bundle_type() {
  python3 -c 'import re, sys; m = re.search(rb"__TAURI_BUNDLE_TYPE_VAR_([A-Z]{3})", open(sys.argv[1], "rb").read()); print(m.group(1).decode() if m else "none")' "$1"
}

check_only=false
if [ "${1:-}" = "--check-only" ]; then
  if [ $# -ne 3 ] || [ ! -f "$2" ] || [ ! -f "$3" ]; then
    die "usage: scripts/package.sh --check-only DEB RPM (both files must exist)"
  fi
  check_only=true
  deb=$(realpath "$2")
  rpm_file=$(realpath "$3")
elif [ $# -gt 0 ]; then
  die "unknown argument '$1' (usage: scripts/package.sh [--check-only DEB RPM])"
fi

for tool in cargo npm gzip readelf ldd dpkg dpkg-deb desktop-file-validate appstreamcli rpm rpm2cpio cpio groff sha256sum python3; do
  command -v "$tool" >/dev/null ||
    die "'$tool' is missing: run scripts/install-deps.sh --package (Rust: https://rustup.rs, Node.js 20.19+)"
done

if ! $check_only; then
# --- Signing: decide before building, since the app's build reads the public key.
sign=false
if [ -n "${TAURI_SIGNING_PRIVATE_KEY:-}" ]; then
  sign=true
  [ -n "${GD_UPDATER_PUBKEY:-}" ] ||
    die "TAURI_SIGNING_PRIVATE_KEY is set but GD_UPDATER_PUBKEY is not: set it to the matching public key (the .pub file of 'tauri signer generate'), which the app needs to verify the updates; it cannot be derived from the private key"
  [ -n "${GD_UPDATE_BASE_URL:-}" ] ||
    die "TAURI_SIGNING_PRIVATE_KEY is set but GD_UPDATE_BASE_URL is not: set it to the URL the bundles will be published under (latest.json points there)"
  if [ -n "${GD_RELEASE_NOTES_FILE:-}" ]; then
    [ -f "$GD_RELEASE_NOTES_FILE" ] || die "GD_RELEASE_NOTES_FILE=$GD_RELEASE_NOTES_FILE does not exist"
  fi
  export GD_UPDATER_PUBKEY
  # The release suggests its own manifest (About offers it; nothing is asked until accepted).
  export GD_UPDATE_MANIFEST_URL="${GD_UPDATE_BASE_URL%/}/latest.json"
elif [ -n "${GD_UPDATER_PUBKEY:-}" ]; then
  # A public key alone is fine (an unsigned build that still checks updates signed elsewhere).
  export GD_UPDATER_PUBKEY
fi

version=$(cargo metadata --no-deps --format-version 1 |
  python3 -c 'import json,sys; print(next(p["version"] for p in json.load(sys.stdin)["packages"] if p["name"]=="gemini-desktop"))')
step "Gemini Desktop $version (signing: $sign)"

# --- Sources that can be checked before the long build.
step "checking packaging sources"
appstreamcli validate --no-net packaging/dev.geminidesktop.gemini-desktop.metainfo.xml >&2 ||
  die "packaging/dev.geminidesktop.gemini-desktop.metainfo.xml does not validate (appstreamcli validate)"
for page in gemini-desktop gemini-desktop-cli; do
  # -ww: every groff warning; -z: no output. A typo in a macro shows here, not in a user's man.
  warnings=$(groff -man -Tutf8 -ww -z "packaging/man/$page.1" 2>&1) || true
  [ -z "$warnings" ] || die "packaging/man/$page.1: groff warnings: $warnings"
done

# --- Build.
step "building the UI"
scripts/build-ui.sh
step "building the release app and CLI"
cargo build --release -p gemini-desktop -p gd-cli
cli_bin=$target/release/gemini-desktop-cli
app_bin=$target/release/gemini-desktop
# tauri bundle marks the binary in place. Once an AppImage bundling has marked it (APP), the
# next bundling cannot re-mark it ("__TAURI_BUNDLE_TYPE variable not found") and would package
# the wrong type: then let cargo link it afresh (cargo does not notice an edited output).
case $(bundle_type "$target/release/gemini-desktop") in
  UNK | DEB | RPM) ;;
  *)
    echo "package.sh: target/release/gemini-desktop was marked by another bundling: relinking it" >&2
    # target/release/gemini-desktop is a hard link to cargo's own copy under deps/: remove both.
    find "$target/release/deps" -maxdepth 1 -samefile "$target/release/gemini-desktop" -delete
    rm -f "$target/release/gemini-desktop"
    cargo build --release -p gemini-desktop -p gd-cli
    ;;
esac

# --- The CLI's options are in its man page (they cannot drift apart silently).
step "checking the man pages against --help"
# Both binaries: every long option --help prints is in the page (the app prints its --help and
# exits before any window or display is needed).
for bin in "$cli_bin" "$app_bin"; do
  page=packaging/man/$(basename "$bin").1
  missing=()
  while read -r opt; do
    # The page's source writes '-' as '\-'; the option must stand alone (not a prefix of another).
    sed 's/\\-/-/g' "$page" | grep -qE -- "(^|[^a-z-])${opt}([^a-z-]|$)" || missing+=("$opt")
  done < <("$bin" --help | grep -oE -- '^ +(-[a-zA-Z], )?--[a-z][a-z0-9-]*' | grep -oE -- '--[a-z][a-z0-9-]*' | sort -u)
  [ ${#missing[@]} -eq 0 ] ||
    die "$(basename "$bin") --help has options its man page ($page) does not document: ${missing[*]}"
done
"$app_bin" --help | grep -q -- '--version' || die "gemini-desktop --help does not list --version"

# --- Stage the extra files the bundles map (tauri.conf.json, bundle.linux.deb/rpm.files).
# (target/package/test/ is scripts/test-package.sh's: only the staged files are replaced.)
rm -rf "${stage:?}/bin" "${stage:?}/man"
mkdir -p "$stage/bin" "$stage/man"
install -m 0755 "$cli_bin" "$stage/bin/gemini-desktop-cli"
for page in gemini-desktop gemini-desktop-cli; do
  # -n: no name or time stamp in the header, so the same page gives the same bytes.
  gzip -9 -n -c "packaging/man/$page.1" > "$stage/man/$page.1.gz"
done

# --- Bundle.
step "bundling .deb and .rpm (tauri bundle)"
bundle_dir=$target/release/bundle
rm -rf "$bundle_dir/deb" "$bundle_dir/rpm"
bundle_args=(bundle --bundles "deb,rpm")
# createUpdaterArtifacts (a .sig beside each bundle) only with a key: tauri fails without one.
# It also wants plugins.updater to exist (else "plugins > updater doesn't exist"): the public key
# is given there for this bundling only; `tauri bundle` compiles nothing, so the app keeps
# reading the key it was built with (GD_UPDATER_PUBKEY, above).
if $sign; then
  bundle_args+=(--config "$(python3 -c 'import json, sys; print(json.dumps({"bundle": {"createUpdaterArtifacts": True}, "plugins": {"updater": {"pubkey": sys.argv[1]}}}))' "$GD_UPDATER_PUBKEY")")
fi
npm --prefix ui run --silent tauri -- "${bundle_args[@]}"

shopt -s nullglob
debs=("$bundle_dir"/deb/*.deb)
rpms=("$bundle_dir"/rpm/*.rpm)
[ ${#debs[@]} -eq 1 ] || die "expected one .deb under $bundle_dir/deb, found ${#debs[@]}"
[ ${#rpms[@]} -eq 1 ] || die "expected one .rpm under $bundle_dir/rpm, found ${#rpms[@]}"

# dist/: file names without the product name's space (they end up in URLs).
rm -rf "$dist"
mkdir -p "$dist"
deb=$dist/gemini-desktop_${version}_amd64.deb
rpm_file=$dist/gemini-desktop-${version}-1.x86_64.rpm
cp "${debs[0]}" "$deb"
cp "${rpms[0]}" "$rpm_file"
fi

# --- Check what the packages hold.
step "checking the .deb"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
dpkg-deb -x "$deb" "$tmp/deb"
for f in usr/bin/gemini-desktop usr/bin/gemini-desktop-cli; do
  [ -x "$tmp/deb/$f" ] || die "the .deb has no executable /$f"
done
desktops=("$tmp"/deb/usr/share/applications/*.desktop)
[ ${#desktops[@]} -eq 1 ] || die "expected one desktop entry in the .deb, found ${#desktops[@]}"
desktop-file-validate "${desktops[0]}" || die "the .deb's desktop entry does not validate"
grep -qx 'Exec=gemini-desktop' "${desktops[0]}" || grep -q '^Exec=gemini-desktop ' "${desktops[0]}" ||
  die "the desktop entry does not start gemini-desktop: $(grep '^Exec=' "${desktops[0]}")"
desktop_id=$(basename "${desktops[0]}")
grep -q "<launchable type=\"desktop-id\">$desktop_id</launchable>" packaging/dev.geminidesktop.gemini-desktop.metainfo.xml ||
  die "the metainfo's launchable is not the installed desktop entry '$desktop_id'"
metainfo=$tmp/deb/usr/share/metainfo/dev.geminidesktop.gemini-desktop.metainfo.xml
[ -f "$metainfo" ] || die "the .deb has no /usr/share/metainfo/dev.geminidesktop.gemini-desktop.metainfo.xml"
appstreamcli validate --no-net "$metainfo" >/dev/null || die "the installed metainfo does not validate"
icon=$(sed -n 's/^Icon=//p' "${desktops[0]}")
for size in 16 22 24 32 48 64 128 256 512; do
  png=$tmp/deb/usr/share/icons/hicolor/${size}x${size}/apps/$icon.png
  [ -f "$png" ] || die "the .deb has no ${size}x${size} icon (/usr/share/icons/hicolor/${size}x${size}/apps/$icon.png)"
  dims=$(python3 -c 'import struct,sys; d=open(sys.argv[1],"rb").read(24); print("%dx%d" % struct.unpack(">II", d[16:24]))' "$png")
  [ "$dims" = "${size}x${size}" ] || die "$png is $dims, not ${size}x${size}"
done
[ "$(bundle_type "$tmp/deb/usr/bin/gemini-desktop")" = DEB ] ||
  die "the .deb's gemini-desktop is marked as bundle type '$(bundle_type "$tmp/deb/usr/bin/gemini-desktop")', not DEB (the updater would fetch the wrong package)"
for page in gemini-desktop gemini-desktop-cli; do
  gz=$tmp/deb/usr/share/man/man1/$page.1.gz
  [ -f "$gz" ] || die "the .deb has no /usr/share/man/man1/$page.1.gz"
  gzip -t "$gz" || die "$gz is not a valid gzip file"
done

# Every shared library either binary links (NEEDED) belongs to a package the .deb depends on.
step "checking the package dependencies against the binaries' shared libraries"
depends=$(dpkg-deb -f "$deb" Depends)
echo "Depends: $depends" >&2
dep_names=$(echo "$depends" | tr ',' '\n' | sed -E 's/^ *//; s/[ (].*//')
# The binaries as packaged (tauri bundle patches the app's).
for bin in "$tmp/deb/usr/bin/gemini-desktop" "$tmp/deb/usr/bin/gemini-desktop-cli"; do
  for lib in $(readelf -d "$bin" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
    path=$(ldd "$bin" | awk -v l="$lib" '$1 == l { print ($3 ~ /^\//) ? $3 : $1 }')
    [ -n "$path" ] && [ "${path#/}" != "$path" ] || path=$(ldconfig -p | awk -v l="$lib" '$1 == l { print $NF; exit }')
    [ -n "$path" ] || die "$(basename "$bin") needs $lib, which is not installed here"
    owner=$(dpkg -S "$path" 2>/dev/null || dpkg -S "$(readlink -f "$path")" 2>/dev/null || dpkg -S "${path#/usr}" 2>/dev/null || true)
    owner=${owner%%:*}
    [ -n "$owner" ] || die "$(basename "$bin") needs $lib ($path), which no Debian package owns"
    echo "$dep_names" | grep -qx "$owner" ||
      die "$(basename "$bin") needs $lib from package $owner, which the .deb does not depend on (tauri.conf.json bundle.linux.deb.depends)"
    echo "$lib $owner" >> "$tmp/needed"
  done
done
# No -dev package: users need the runtime libraries only.
if echo "$dep_names" | grep -q -- '-dev$'; then die "the .deb depends on a -dev package: $depends"; fi

step "checking the .rpm"
rpm -qpl "$rpm_file" > "$tmp/rpm.list"
(cd "$tmp/deb" && find . -type f -o -type l | sed 's#^\.##' | sort) > "$tmp/deb.files"
grep -vxF -f "$tmp/rpm.list" "$tmp/deb.files" > "$tmp/missing" &&
  die "files in the .deb but not in the .rpm: $(tr '\n' ' ' < "$tmp/missing")"
mkdir -p "$tmp/rpm"
# rpm2cpio 4.18 exits 1 on Tauri's .rpm although it writes the whole archive: judge by what
# cpio extracts from it instead.
rpm2cpio "$rpm_file" > "$tmp/rpm.cpio" || true
(cd "$tmp/rpm" && cpio -idm --quiet ./usr/bin/gemini-desktop < "$tmp/rpm.cpio")
[ -f "$tmp/rpm/usr/bin/gemini-desktop" ] || die "could not read /usr/bin/gemini-desktop back from the .rpm (rpm2cpio | cpio)"
[ "$(bundle_type "$tmp/rpm/usr/bin/gemini-desktop")" = RPM ] ||
  die "the .rpm's gemini-desktop is marked as bundle type '$(bundle_type "$tmp/rpm/usr/bin/gemini-desktop")', not RPM"
rpm -qpR "$rpm_file" > "$tmp/rpm.requires"
# The same libraries, by Fedora's package names, or a soname requirement (Tauri adds
# libgtk-3.so.0()(64bit) and libwebkit2gtk-4.1.so.0()(64bit) itself) of a library of the same
# package (libgtk-3.so.0 brings gtk3, which holds libgdk-3.so.0 too).
declare -A fedora=(
  [libwebkit2gtk-4.1-0]=webkit2gtk4.1 [libjavascriptcoregtk-4.1-0]=javascriptcoregtk4.1
  [libsoup-3.0-0]=libsoup3 [libgtk-3-0]=gtk3 [libglib2.0-0]=glib2 [libcairo2]=cairo
  [libgdk-pixbuf-2.0-0]=gdk-pixbuf2 [libdbus-1-3]=dbus-libs [libc6]=glibc [libgcc-s1]=libgcc
)
while read -r lib owner; do
  name=${fedora[$owner]:-}
  [ -n "$name" ] || die "no Fedora name known for the Debian package $owner (the fedora map in scripts/package.sh)"
  sonames=()
  while read -r other other_owner; do
    [ "$other_owner" = "$owner" ] && sonames+=(-e "$other()(64bit)")
  done < "$tmp/needed"
  grep -qxF -e "$name" "${sonames[@]}" "$tmp/rpm.requires" ||
    die "the .rpm requires neither $name nor $lib()(64bit) (tauri.conf.json bundle.linux.rpm.depends)"
done < "$tmp/needed"
if grep -q -- '-devel' "$tmp/rpm.requires"; then die "the .rpm requires a -devel package"; fi

if $check_only; then
  step "checks passed: $deb, $rpm_file"
  exit 0
fi

# --- Signatures and the update manifest.
if $sign; then
  step "signing"
  for f in "$deb" "$rpm_file"; do
    src=$([ "$f" = "$deb" ] && echo "${debs[0]}" || echo "${rpms[0]}")
    if [ -f "$src.sig" ]; then
      cp "$src.sig" "$f.sig" # written by tauri bundle (createUpdaterArtifacts)
    else
      # `signer sign` takes the key's text only; `tauri bundle` also accepted a path to it.
      key=$TAURI_SIGNING_PRIVATE_KEY
      [ -f "$key" ] && key=$(cat "$key")
      TAURI_SIGNING_PRIVATE_KEY=$key npm --prefix ui run --silent tauri -- signer sign --app-version "$version" "$f" >&2
    fi
    [ -s "$f.sig" ] || die "no signature was written for $f"
  done
  # Each signature verifies with GD_UPDATER_PUBKEY (minisign: Ed25519 over the file's BLAKE2b-512),
  # so a public key that does not match the private key fails here, not in users' updaters.
  python3 - "$GD_UPDATER_PUBKEY" "$deb" "$rpm_file" <<'PY' || die "a signature does not verify with GD_UPDATER_PUBKEY (is it the private key's public key?)"
import base64, hashlib, sys
def lines(b64):
    return base64.b64decode(b64).decode().splitlines()
pub = base64.b64decode(lines(sys.argv[1])[1])
for path in sys.argv[2:]:
    sig_lines = lines(open(path + ".sig").read())
    sig = base64.b64decode(sig_lines[1])
    if sig[2:10] != pub[2:10]:
        sys.exit(f"{path}.sig: signed by key {sig[2:10][::-1].hex().upper()}, GD_UPDATER_PUBKEY is key {pub[2:10][::-1].hex().upper()}")
    try:
        from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
    except ImportError:
        print(f"{path}.sig: key id matches (python3-cryptography missing: signature not verified)", file=sys.stderr)
        continue
    key = Ed25519PublicKey.from_public_bytes(pub[10:42])
    data = open(path, "rb").read()
    message = hashlib.blake2b(data).digest() if sig[:2] == b"ED" else data
    key.verify(sig[10:74], message)  # raises InvalidSignature
    trusted = sig_lines[2].removeprefix("trusted comment: ").encode()
    key.verify(base64.b64decode(sig_lines[3]), sig[10:74] + trusted)
    print(f"{path}.sig: verified with GD_UPDATER_PUBKEY", file=sys.stderr)
PY
  notes=${GD_RELEASE_NOTES:-}
  [ -n "${GD_RELEASE_NOTES_FILE:-}" ] && notes=$(cat "$GD_RELEASE_NOTES_FILE")
  python3 - "$version" "$notes" "${GD_UPDATE_BASE_URL%/}" "$deb" "$rpm_file" > "$dist/latest.json" <<'PY'
import datetime, json, os, sys
version, notes, base, deb, rpm = sys.argv[1:]
def entry(path):
    return {"url": f"{base}/{os.path.basename(path)}", "signature": open(path + ".sig").read().strip()}
manifest = {
    "version": version,
    "notes": notes,
    "pub_date": datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0).isoformat().replace("+00:00", "Z"),
    "platforms": {
        "linux-x86_64-deb": entry(deb),
        "linux-x86_64-rpm": entry(rpm),
        # The plain key: updaters that do not know the installed package type take the .deb.
        "linux-x86_64": entry(deb),
    },
}
print(json.dumps(manifest, indent=2))
PY
fi

(cd "$dist" && sha256sum -- *.deb *.rpm > SHA256SUMS)
step "done: $dist"
ls -l "$dist" >&2
