#!/usr/bin/env bash
# The Debian package: cpack builds it (into a temporary folder, so a `make package` running
# at the same time is not disturbed), dpkg-deb unpacks it into a temporary root, and the
# unpacked files are checked: the executable, the desktop entry, the icon, the tiny model, the
# Depends, that the packaged `headsplit trace` runs and prints its step table, and that the
# tiny-trained preset reads the packaged model. cpack first runs the
# build tree's `preinstall` target, which has nothing to do after the build CTest follows.
# With SITE (the page the build names): the package ships it, and the packaged `headsplit
# lesson` serves it from there.
# Usage: package_test.sh PATH/TO/cpack PATH/TO/BUILD/CPackConfig.cmake [SITE]
set -u
cpack=$1
config=$2
site=${3:-}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
finish() {
  if [ "$failures" -gt 0 ]; then
    echo "$failures package check(s) failed"
    exit 1
  fi
  echo "all package checks passed ($deb_name)"
  exit 0
}

# 1. Build the .deb: exactly one, named headsplit_<version>_<arch>.deb.
[ -f "$config" ] || { echo "FAIL: no CPack configuration at $config"; exit 1; }
if ! "$cpack" -G DEB --config "$config" -B "$work/out" >"$work/cpack.log" 2>&1; then
  echo "FAIL: cpack exited non-zero:"
  cat "$work/cpack.log"
  exit 1
fi
debs=("$work"/out/*.deb)
[ "${#debs[@]}" = 1 ] && [ -f "${debs[0]}" ] || { echo "FAIL: cpack made no single .deb: ${debs[*]}"; exit 1; }
deb=${debs[0]}
deb_name=$(basename "$deb")
[[ "$deb_name" =~ ^headsplit_[0-9][0-9.]*_[a-z0-9]+\.deb$ ]] ||
  fail "the package is named $deb_name, expected headsplit_<version>_<arch>.deb"

# 2. The control fields: Depends names the shared libraries and what is loaded at run time.
[ "$(dpkg-deb -f "$deb" Package)" = headsplit ] || fail "Package is '$(dpkg-deb -f "$deb" Package)'"
depends=$(dpkg-deb -f "$deb" Depends)
for want in libglfw3 libopenblas libepoxy libwebsockets libegl1 libegl-mesa0 libgl1-mesa-dri fonts-dejavu; do
  grep -q -- "$want" <<<"$depends" || fail "Depends does not name $want: $depends"
done

# 3. The files.
root=$work/root
dpkg-deb -x "$deb" "$root" || { echo "FAIL: dpkg-deb -x $deb_name failed"; exit 1; }
bin=$root/usr/bin/headsplit
desktop=$root/usr/share/applications/headsplit.desktop
icon=$root/usr/share/icons/hicolor/scalable/apps/headsplit.svg
[ -x "$bin" ] || fail "the package has no executable usr/bin/headsplit"
if [ -f "$desktop" ]; then
  for line in '[Desktop Entry]' 'Type=Application' 'Exec=headsplit' 'Icon=headsplit'; do
    grep -qxF -- "$line" "$desktop" || fail "headsplit.desktop lacks the line '$line'"
  done
else
  fail "the package has no usr/share/applications/headsplit.desktop"
fi
if [ -f "$icon" ]; then
  grep -q '<svg' "$icon" || fail "headsplit.svg is not an SVG"
else
  fail "the package has no usr/share/icons/hicolor/scalable/apps/headsplit.svg"
fi
model=$root/usr/share/headsplit/tiny-gpt2
for f in config.json model.safetensors vocab.json merges.txt; do
  [ -s "$model/$f" ] || fail "the package has no usr/share/headsplit/tiny-gpt2/$f (the tiny-trained preset's model)"
done
[ "$failures" -gt 0 ] && finish  # no executable to run

# 4. The packaged executable runs headless and prints the step table (the default example's
#    last step is the output projection).
out=$(env -u DISPLAY -u WAYLAND_DISPLAY "$bin" trace 2>"$work/stderr")
rc=$?
[ "$rc" = 0 ] || fail "the packaged 'headsplit trace' exited $rc: $(cat "$work/stderr")"
grep -qE '^[0-9]+ +out_proj ' <<<"$out" || fail "the packaged 'headsplit trace' printed no step table: $out"

# 5. The packaged executable finds the packaged model (beside it, not the source tree's).
if env -u DISPLAY -u WAYLAND_DISPLAY "$bin" trace --preset tiny-trained --json "$work/tiny.json" >/dev/null 2>"$work/stderr"; then
  dir=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["config"]["checkpoint"]["dir"])' "$work/tiny.json")
  [ "$(realpath "$dir")" = "$(realpath "$model")" ] || fail "the packaged tiny-trained preset read $dir, not $model"
else
  fail "the packaged 'headsplit trace --preset tiny-trained' failed: $(cat "$work/stderr")"
fi

# 6. The page, where the build names it: shipped whole, and served by the packaged lesson
#    from beside the executable (not from the source tree).
if [ -n "$site" ]; then
  shipped=$root/usr/share/headsplit/site
  for f in $(cd "$site" && ls); do
    cmp -s "$site/$f" "$shipped/$f" || fail "the package's usr/share/headsplit/site/$f is not the page's $f"
  done
  env -u DISPLAY -u WAYLAND_DISPLAY "$bin" lesson --no-window --bind 127.0.0.1 --port 0 >"$work/lesson.out" 2>"$work/lesson.err" &
  lesson=$!
  for _ in $(seq 100); do grep -q '^student: ' "$work/lesson.out" && break; sleep 0.1; done
  url=$(sed -n 's/^student: \(http:[^?]*\).*/\1/p' "$work/lesson.out")
  if [ -z "$url" ]; then
    fail "the packaged 'headsplit lesson' printed no student address: $(cat "$work/lesson.err")"
  else
    python3 - "$url" "$shipped/index.html" <<'PY' || fail "the packaged lesson does not serve the packaged page"
import sys, urllib.request
served = urllib.request.urlopen(sys.argv[1] + "index.html", timeout=10).read()
sys.exit(0 if served == open(sys.argv[2], "rb").read() else 1)
PY
  fi
  kill -INT "$lesson" 2>/dev/null
  wait "$lesson" 2>/dev/null
fi
finish
