#!/usr/bin/env bash
# An app installed from the .deb takes a signed update through the package manager, for real:
# installs an older package on THIS machine, has the installed app check a manifest on loopback,
# verify the newer package's signature (a key made for the run) and install it with dpkg, then
# removes the package. Run as root on a throwaway machine (CI's or a VM): it installs packages.
#
#   scripts/test-update-install.sh
#
# The installed app is a debug-profile package (`tauri bundle --debug` of target/debug): a
# release build refuses plain-http manifests, and a loopback https server would need a CA added
# to the system's trust store. The "newer" package is the same one with its version raised and a
# marker file added (dpkg-deb), so one build serves both; the test checks dpkg's record and the
# marker. The updater's install goes through pkexec, a graphical sudo prompt, or sudo: as root,
# sudo asks nothing, so it is installed here if missing.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
die() { echo "test-update-install.sh: error: $*" >&2; exit 1; }
step() { echo "==> $*" >&2; }

[ "$(id -u)" -eq 0 ] || die "run as root on a throwaway machine: it installs and removes packages"
if dpkg-query -W -f '${db:Status-Status}' gemini-desktop 2>/dev/null | grep -qx installed; then
  die "gemini-desktop is installed already; remove it first (apt-get remove --purge gemini-desktop)"
fi
command -v sudo >/dev/null || {
  step "installing sudo (the updater's last way to run dpkg)"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq sudo >/dev/null
}

step "building the debug app and CLI"
[ -f ui/dist/index.html ] || scripts/build-ui.sh
cargo build -p gemini-desktop -p gd-cli
cargo build -p gd-e2e --tests

# The files tauri.conf.json's bundle maps from target/package (scripts/package.sh stages the
# release ones the same way).
stage=$root/target/package
rm -rf "$stage"
mkdir -p "$stage/bin" "$stage/man"
install -m 0755 target/debug/gemini-desktop-cli "$stage/bin/gemini-desktop-cli"
for page in gemini-desktop gemini-desktop-cli; do
  gzip -9 -n -c "packaging/man/$page.1" > "$stage/man/$page.1.gz"
done

step "bundling the debug .deb"
rm -rf target/debug/bundle/deb
npm --prefix ui run --silent tauri -- bundle --debug --bundles deb
shopt -s nullglob
debs=(target/debug/bundle/deb/*.deb)
[ ${#debs[@]} -eq 1 ] || die "expected one .deb under target/debug/bundle/deb, found ${#debs[@]}"
old_version=$(dpkg-deb -f "${debs[0]}" Version)
new_version=$(python3 -c 'import sys; a, b, c = sys.argv[1].split("-")[0].split("."); print(f"{a}.{b}.{int(c) + 1}")' "$old_version")

work=$(mktemp -d)
trap 'rm -rf "$work"; apt-get remove --purge -y -qq gemini-desktop >/dev/null 2>&1 || true' EXIT
marker=/usr/share/doc/gemini-desktop/update-test-$new_version
step "making the newer package ($old_version -> $new_version, with $marker)"
dpkg-deb -R "${debs[0]}" "$work/new"
sed -i "s/^Version: .*/Version: $new_version/" "$work/new/DEBIAN/control"
mkdir -p "$work/new$(dirname "$marker")"
echo "installed by the updater test" > "$work/new$marker"
dpkg-deb --build --root-owner-group "$work/new" "$work/gemini-desktop_${new_version}_amd64.deb" >/dev/null

step "installing $old_version"
cp "${debs[0]}" "$work/old.deb"
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$work/old.deb" >/dev/null
[ "$(dpkg-query -W -f '${Version}' gemini-desktop)" = "$old_version" ] || die "$old_version did not install"

step "the installed app takes $new_version (tests/tests/e2e/updater.rs)"
GD_E2E_APP=/usr/bin/gemini-desktop \
GD_UPDATE_DEB="$work/gemini-desktop_${new_version}_amd64.deb" \
GD_UPDATE_VERSION="$new_version" \
GD_UPDATE_MARKER="$marker" \
  cargo test -p gd-e2e --test e2e -- --ignored --exact \
    updater::an_installed_deb_takes_the_signed_update_through_the_package_manager

step "removing the package"
apt-get remove --purge -y -qq gemini-desktop >/dev/null
[ ! -e /usr/bin/gemini-desktop ] || die "/usr/bin/gemini-desktop is still there after the removal"
[ ! -e "$marker" ] || die "$marker is still there after the removal"
step "ok: $old_version installed, updated to $new_version by the app through dpkg, removed"
