#!/usr/bin/env bash
# The why tab's ratios from RUNS separate runs of the window (each a new process, under Xvfb),
# one line a run, then each ratio's lowest and highest and how far apart they are: the tab
# promises ratios that agree within 10% between runs on a machine doing nothing else.
# Any further arguments go to the window (an example, --backend gl, a --preset).
#
# Usage: tools/why_runs.sh BINARY RUNS [ARGS...]   e.g. tools/why_runs.sh build/app/headsplit 10
# Exit 0 when every run gave its ratios; 1 when one gave none; 2: bad arguments.
set -uo pipefail

if [ $# -lt 2 ]; then
  echo "usage: tools/why_runs.sh BINARY RUNS [ARGS...]" >&2
  exit 2
fi
binary=$1 runs=$2
shift 2
case $runs in '' | *[!0-9]*) echo "RUNS ($runs) must be a whole number, e.g. 10" >&2; exit 2;; esac
[ -x "$binary" ] || { echo "$binary is not an executable (build it: make build)" >&2; exit 2; }

dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
for i in $(seq 1 "$runs"); do
  xvfb-run -a -s "-screen 0 1920x1080x24" "$binary" --screenshot "$dir/why.png" --tab why \
    --window 1920x1080 --layout-report "$dir/why_$i.json" "$@" >"$dir/log" 2>&1 ||
    { echo "run $i failed:"; cat "$dir/log"; exit 1; }
done
python3 - "$dir" "$runs" <<'PY'
import json, re, sys
folder, runs = sys.argv[1], int(sys.argv[2])
seen = {}
for i in range(1, runs + 1):
    labels = [it["text"] for it in json.load(open(f"{folder}/why_{i}.json"))["items"] if it["panel"] == "why"]
    ratios = [m for t in labels for m in re.findall(r"([a-z]+/[a-z]+) = ([0-9.]+)x", t)]
    timed = [t for t in labels if t.startswith("timed at")]
    if not ratios:
        sys.exit(f"run {i}: the why tab showed no ratio")
    print(f"run {i}: " + ", ".join(f"{n} {x}x" for n, x in ratios) + (f" ({timed[0]})" if timed else ""))
    for n, x in ratios:
        seen.setdefault(n, []).append(float(x))
for n, xs in seen.items():
    print(f"{n}: {min(xs):.2f}x to {max(xs):.2f}x over {len(xs)} runs, highest/lowest {max(xs) / min(xs):.3f}")
PY
