#!/bin/sh
# Dear ImGui's sources for the page (the desktop links Debian's libimgui-dev; emscripten needs
# the sources): Debian's own source package imgui 1.86+ds-1, fetched with apt-get source through
# a private sources list and state folder, so the system's apt configuration is untouched.
# usage: tools/web/imgui_source.sh DEST   (writes DEST/imgui-1.86+ds; nothing when already there)
set -eu
dest=$1
[ -f "$dest/imgui/imgui.cpp" ] && exit 0
mkdir -p "$dest/apt/lists/partial" "$dest/apt/cache/archives/partial"
cat > "$dest/apt/sources.list" <<LIST
deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian bookworm main
LIST
opts="-o Dir::Etc::SourceList=$dest/apt/sources.list -o Dir::Etc::SourceParts=/dev/null \
  -o Dir::State::Lists=$dest/apt/lists -o Dir::Cache=$dest/apt/cache -o Debug::NoLocking=1"
# shellcheck disable=SC2086
apt-get $opts update -qq
rm -rf "$dest/src" && mkdir -p "$dest/src"
# shellcheck disable=SC2086
(cd "$dest/src" && apt-get $opts source --download-only imgui=1.86+ds-1 >/dev/null && \
  dpkg-source --no-check -x imgui_1.86+ds-1.dsc imgui >/dev/null)
rm -rf "$dest/imgui" && mv "$dest/src/imgui" "$dest/imgui"
[ -f "$dest/imgui/imgui.cpp" ] || { echo "imgui_source.sh: no imgui.cpp in the source package" >&2; exit 1; }
