#!/usr/bin/env bash
# The single-threaded page (app-single: a host that is not a secure context, so no shared
# memory) computes a large trace in slices between its frames (core/include/headsplit/base/
# slices.hpp), in headless Chromium:
#  - gpt2-small's sizes at T = 1024 (random weights, D = 768, 12 heads): no task of the page's
#    thread takes 0.2 s or more while the trace computes (the browser's Long Tasks API, from
#    the end of the first frame to the frame that shows the trace), and frames go on being
#    drawn meanwhile (at least 5). Computed in one go, that trace held the thread for one task
#    of 500 ms or more on this machine (docs/page.md#the-single-threaded-page);
#  - gpt2-small's sizes at T = 256, computed across frames (at least one drawn meanwhile): its
#    trace equals `headsplit trace --backend cpu`'s within 1e-5 (Eigen's and OpenBLAS's orders
#    of summation differ by 3e-6 there);
#  - gpt2-small's sizes at T = 48 at the softmax, pausing at every slice point (?slices=every):
#    the page settles with the trace shown and no error. A pause unwinds every frame on the
#    stack, and a function left out of app/web/asyncify_only.txt cannot be unwound (the
#    browser's "null function"); at T = 48 the narration replays the deferred weights inside
#    the job, so its frames are on the stack too. Without the knob a slice ends inside such a
#    frame only when its time happens to run out there.
# Usage: web_single_test.sh HEADSPLIT SITE_DIR PYTHON3
set -u
headsplit=$1 site=$2 py=$3
here=$(cd "$(dirname "$0")" && pwd)
. "$here/web_common.sh"
# The bound: a frame every 0.2 s at worst while a trace computes (issue 44).
bound_ms=200

for f in index.html app.data app-single.js app-single.wasm; do
  [ -s "$site/$f" ] || { echo "FAIL: $site/$f is missing (make web builds the site)"; exit 1; }
done
command -v chromium >/dev/null || { echo "FAIL: chromium is needed (make web installs it)"; exit 1; }

serve_site base "$work/server.txt"
# Plain http:// on a name other than localhost is not a secure context: index.html loads
# app-single. lan.test resolves to loopback in this browser.
lan=${base/127.0.0.1/lan.test}

"$headsplit" trace --backend cpu --preset gpt2-small --tokens 256 --json "$work/desk-256.json" >/dev/null 2>"$work/desk.err" ||
  { echo "FAIL: headsplit trace refused: $(cat "$work/desk.err")"; exit 1; }
echo "[{\"url\": \"$lan?preset=gpt2-small&tokens=1024&step=5\", \"timeout\": 120},
       {\"url\": \"$lan?preset=gpt2-small&tokens=256&step=5&json=1\", \"timeout\": 120,
        \"texts\": {\"trace-json\": \"$work/page-256.json\"}},
       {\"url\": \"$lan?preset=gpt2-small&tokens=48&step=7&slices=every\", \"timeout\": 120}]" >"$work/jobs.json"
PROBE_HOST_RULES="MAP lan.test 127.0.0.1" "$py" "$tools/page_probe.py" "$work/jobs.json" "$work/results.json" ||
  { echo "FAIL: the probe failed"; exit 1; }

# One job's verdict: "longest busy_frames gap first_draw", the longest task while the trace
# computed (0 when none reached 50 ms) and the task that drew the trace first.
summary() { "$py" - "$work/results.json" "$1" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))[int(sys.argv[2])]
if r.get("error") or r.get("build") != "app-single":
    sys.exit(f"loaded '{r.get('build')}', {r.get('error') or ''} {r.get('console') or ''}")
first, shown = r["first_frame_ms"], r["trace_shown_ms"]
tasks = sorted(r["long_tasks"])
# The frame that shows the trace marks `shown` while it draws: the last task to start before
# it, when that one lasts until then (a draw under 50 ms is no long task). The tasks between
# the first frame and that one held the thread while the trace computed. (Long tasks' times
# are whole milliseconds, so a task's end cannot tell which side of a mark it fell.)
before = [t for t in tasks if t[0] <= shown]
draw = before[-1] if before and before[-1][0] + before[-1][1] >= shown - 1 else None
computing = [d for s, d in before if s >= first and [s, d] != draw]
print(round(max(computing, default=0)), r["busy_frames"], round(r["longest_busy_frame_ms"]),
      round(draw[1] if draw else 0), round(r["compute_ms"]))
PY
}

if out=$(summary 0); then
  read -r longest busy gap draw ms <<<"$out"
  [ "$longest" -lt $bound_ms ] || bad "gpt2-small T = 1024: a task of $longest ms while the trace computed (the bound: $bound_ms ms)"
  [ "$busy" -ge 5 ] || bad "gpt2-small T = 1024: $busy frames drawn while the trace computed (at least 5 must be)"
  echo "gpt2-small T = 1024: computed in $ms ms; the longest task meanwhile $longest ms (bound $bound_ms)," \
       "$busy frames drawn, at most $gap ms apart; drawing the trace first took $draw ms"
else
  bad "gpt2-small T = 1024: $out"
fi
if out=$(summary 1); then
  read -r longest busy gap draw ms <<<"$out"
  [ "$busy" -ge 1 ] || bad "gpt2-small T = 256: computed in one piece ($busy frames drawn meanwhile), not across frames"
  cmp=$("$py" "$here/web_compare.py" "$work/page-256.json" "$work/desk-256.json" 1e-5) || bad "gpt2-small T = 256: $cmp"
  echo "gpt2-small T = 256: computed across $busy frames in $ms ms; against headsplit trace: $cmp"
else
  bad "gpt2-small T = 256: $out"
fi

paused=$("$py" - "$work/results.json" 2>&1 <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))[2]
if r.get("error") or r.get("build") != "app-single" or r.get("refusal") or r.get("settled") is None:
    sys.exit(f"loaded '{r.get('build')}', settled {r.get('settled')}, {r.get('refusal') or ''} {r.get('error') or ''} {r.get('console') or ''}")
if not r.get("trace_shown_ms") or r.get("busy_frames", 0) < 5:  # (without the knob: 0 or 1)
    sys.exit(f"the trace shown at {r.get('trace_shown_ms')} ms after {r.get('busy_frames')} frames: the slices did not pause")
print(f"{r['busy_frames']} frames drawn while it computed, {round(r['compute_ms'])} ms")
PY
) && echo "gpt2-small T = 48, pausing at every slice point: settled; $paused" ||
  bad "gpt2-small T = 48, pausing at every slice point: $paused"

[ $fail = 0 ] && echo "PASS: the single-threaded page computes large traces between frames"
exit $fail
