#!/usr/bin/env bash
# The visualizer for real, under Xvfb: it starts on the default example and renders every
# step; each screenshot is non-blank and differs from the one before; 3 heads look different
# from 2; a head count that does not divide D_out is refused in one line, never a crash.
# Usage: gui_test.sh PATH/TO/headsplit PATH/TO/png_stats   (run inside xvfb-run)
set -u
bin=$1
stats=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
colours() { "$stats" "$1" | awk '/^size/ {print $5}'; }
differ() { "$stats" "$1" "$2" | awk '/^differ/ {print $2}'; }

steps=$("$bin" trace | grep -cE '^[0-9]+ ')
[ "$steps" = 12 ] || fail "the default example has $steps steps, expected 12"
prev=""
for ((s = 0; s < steps; s++)); do
  shot="$work/step$s.png"
  if ! "$bin" --screenshot "$shot" --step "$s" 2>"$work/err"; then
    fail "--screenshot --step $s failed: $(cat "$work/err")"
    continue
  fi
  n=$(colours "$shot")
  [ "${n:-0}" -gt 200 ] || fail "step $s looks blank ($n colours)"
  if [ -n "$prev" ]; then
    d=$(differ "$prev" "$shot")
    awk -v d="$d" 'BEGIN { exit !(d > 0.002) }' || fail "step $s looks the same as step $((s - 1)) (differ $d)"
  fi
  prev=$shot
done

# 3 heads on D_out 6: other shapes on screen than 2 heads, at the same step.
"$bin" --screenshot "$work/h2.png" --step 3 --heads 2 || fail "--heads 2 screenshot failed"
"$bin" --screenshot "$work/h3.png" --step 3 --heads 3 || fail "--heads 3 screenshot failed"
d=$(differ "$work/h2.png" "$work/h3.png")
awk -v d="$d" 'BEGIN { exit !(d > 0.01) }' || fail "3 heads look like 2 heads (differ $d)"

# A saved frame carries no hover: Xvfb starts its pointer at the screen's centre, over a
# window as large as the screen (the stage's cell under it would be ringed and explained in
# the inspector: differ 0.008); the same frame with the pointer off the window (a screen
# twice as large) is the same picture.
for scr in 1920x1080 3840x2160; do
  xvfb-run -a -s "-screen 0 ${scr}x24" "$bin" --screenshot "$work/pointer-$scr.png" --step 4 --window 1920x1080 --backend cpu \
    2>"$work/err" || fail "the screenshot on a ${scr} screen: $(cat "$work/err")"
done
d=$(differ "$work/pointer-1920x1080.png" "$work/pointer-3840x2160.png")
awk -v d="$d" 'BEGIN { exit !(d < 0.001) }' || fail "a screenshot under the pointer is not the one away from it (differ $d): hover in a saved frame"

# 4 heads cannot split D_out 6: one line, exit 2, no file.
"$bin" --screenshot "$work/h4.png" --heads 4 2>"$work/err"
rc=$?
[ $rc = 2 ] || fail "--heads 4 exited $rc, expected 2"
grep -q "heads that divide 6: 1, 2, 3, 6" "$work/err" || fail "--heads 4 said: $(cat "$work/err")"
[ ! -e "$work/h4.png" ] || fail "--heads 4 left a screenshot behind"

# The other modes, the journey preset, and a large trace computed off the UI thread.
for args in "--mode loop --step 5 --tab weights" "--tab why --backend cpu" "--mode fused --step 2" "--preset journey --step 7" \
            "--preset gpt2-small --tokens 128 --step 7" "--preset gpt3 --step 3" "--backend cpu --step 9 --light"; do
  # shellcheck disable=SC2086
  "$bin" --screenshot "$work/extra.png" $args 2>"$work/err" || fail "'$args' exited $?: $(cat "$work/err")"
  n=$(colours "$work/extra.png")
  [ "${n:-0}" -gt 200 ] || fail "'$args' looks blank ($n colours)"
done

# GL failures in the window: the CPU takes over with a visible notice (also one line on
# stderr) and the window still draws; a broken kernel, a GL error mid-step, and a window
# whose OpenGL is too old for compute shaders (Mesa capped at 3.3).
for fault in "HEADSPLIT_GL_BREAK_SHADER=attn_rows.comp|shader attn_rows.comp failed to compile at attn_rows.comp line" \
             "HEADSPLIT_GL_FAIL_DISPATCH=softmax|GL error 0x0501 while softmax" \
             "MESA_GL_VERSION_OVERRIDE=3.3|the window's OpenGL is older than 4.3"; do
  setting=${fault%%|*}
  want=${fault#*|}
  env "$setting" "$bin" --screenshot "$work/fault.png" --step 6 2>"$work/err" || fail "$setting: exited $?: $(cat "$work/err")"
  [ "$(wc -l <"$work/err")" = 1 ] || fail "$setting: stderr is not one line: $(cat "$work/err")"
  grep -qF "headsplit: $want" "$work/err" && grep -qF "; using the CPU backend" "$work/err" ||
    fail "$setting: the notice: $(cat "$work/err")"
  n=$(colours "$work/fault.png")
  [ "${n:-0}" -gt 200 ] || fail "$setting: the window did not draw ($n colours)"
done

# A short drive: random control changes, keys and a resize through the app's own paths, then
# a large trace on the worker. No crash, no GL error, every frame counted. (Frame times are
# reported, not asserted: machines are noisy.)
if "$bin" --drive 400 --drive-report "$work/drive.json" 2>"$work/err"; then
  /usr/bin/python3 - "$work/drive.json" <<'PY' || fail "the drive report: $(cat "$work/drive.json")"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["format"] == "headsplit-drive"
assert d["frames"] >= 400, d["frames"]
assert d["gl_errors"] == 0, d["gl_errors"]
assert d["control_changes"] > 20, d["control_changes"]
assert d["while_gpt2_small_T128_computes"]["frames"] >= 1
print("drive: %d frames, %d control changes, median frame %.1f ms" %
      (d["frames"], d["control_changes"], d["all_frames"]["median_ms"]))
PY
else
  fail "--drive failed: $(cat "$work/err")"
fi

# The heatmaps' colour range: the largest finite |score| of every head's whole map (past the
# 48 tokens a map draws too), as the trace's own values give it: 60 tokens, 4 heads, step 4,
# seed 3, whose largest score (1.51) is head 1's at row 49, key 49, outside the cells drawn
# (largest there 1.10) and outside head 0 (.83).
words=$(seq -f "w%g" 60 | tr '\n' ' ')
if "$bin" --text "$words" --heads 4 --d-out 8 --seed 3 --step 4 --screenshot "$work/range.png" \
     --layout-report "$work/range.json" 2>"$work/err" &&
   "$bin" trace --text "$words" --heads 4 --d-out 8 --seed 3 --json "$work/range-trace.json" >/dev/null 2>>"$work/err"; then
  python3 - "$work/range-trace.json" "$work/range.json" <<'PY' || fail "the heatmaps' colour range is not the scores' largest magnitude"
import json, math, sys
trace, report = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
scores = [v for v in trace["steps"][4]["tensors"][-1]["data"] if isinstance(v, (int, float)) and math.isfinite(v)]
bound = max(abs(v) for v in scores)
text = "%.0f" % bound if bound >= 100 else ("%.2f" % bound).lstrip("0")
labels = {i["text"] for i in report["items"] if i.get("panel") == "heatmaps"}
if text not in labels or "-" + text not in labels:
    sys.exit(f"the legend should read -{text} .. {text} (the trace's largest |score| {bound}); the panel shows {sorted(labels)[:40]}")
PY
else
  fail "the 60-token heatmaps case did not run: $(cat "$work/err")"
fi

# Cross-attention's scores are queries x context keys: the stage's caption names the keys' axis
# S, not T (the 3-word sentence over a 6-word context, step 5: [1, 2, 3, 6]).
if "$bin" --context "le chat dort sur le tapis" --step 5 --screenshot "$work/cross.png" \
     --layout-report "$work/cross.json" 2>"$work/err"; then
  python3 - "$work/cross.json" <<'PY' || fail "cross-attention's score caption does not name the keys S"
import json, sys
labels = [i["text"] for i in json.load(open(sys.argv[1]))["items"] if i.get("panel") == "stage"]
caption = [t for t in labels if "(keys)]" in t]
if not caption or any("T (keys)" in t for t in caption) or not all("S (keys)" in t and "6]" in t for t in caption):
    sys.exit(f"the caption should read [B, H, T, S (keys)] = [1, 2, 3, 6]; the stage shows {caption or labels[:20]}")
PY
else
  fail "the cross-attention caption case did not run: $(cat "$work/err")"
fi

# Presenter mode shares the width by what each panel must show: two masks compared at the
# scores step (9 words, 3 heads, 1366x768, text 1.25) get the room to show their numbers at
# the 2.5% rule, both maps whole, and the stage keeps its grids (at a fixed half of the
# width the maps had 26 px cells and no number).
if "$bin" --compare-masks --heads 3 --text "the quick brown fox jumps over the lazy dog" --present --step 4 \
     --window 1366x768 --font-scale 1.25 --screenshot "$work/compare.png" --layout-report "$work/compare.json" 2>"$work/err"; then
  python3 - "$work/compare.json" <<'PY' || fail "presenter mode's compared maps do not show their numbers"
import json, sys
r = json.load(open(sys.argv[1]))
cells = [i for i in r["items"] if i.get("panel") == "heatmaps" and i["kind"] == "cell"]
stage = [i["text"] for i in r["items"] if i.get("panel") == "stage"]
maps = {i.get("tensor") for i in cells}
if len(cells) != 2 * 81 or len(maps) != 2:
    sys.exit(f"expected the two 9 x 9 maps whole, found {len(cells)} cells in {sorted(maps)}")
small = [i for i in cells if not i.get("value_shown") or i.get("value_h", 0) < 0.025 * 768]
if small:
    sys.exit(f"{len(small)} of 162 map cells show no number of 19 px or more, e.g. {small[0]}")
if "attn_scores" not in stage:
    sys.exit(f"the stage does not name its tensor: {stage[:10]}")
PY
else
  fail "the compared masks case did not run: $(cat "$work/err")"
fi

# The why tab measuring a large shape (gpt2-xl: over a minute on llvmpipe) when the window
# closes: the measurement stops after the run it is in, and the process ends (it stayed for
# the whole measurement, about two minutes here, so closing the window looked like a hang).
SECONDS=0
timeout 150 "$bin" --preset gpt2-xl --tab why --drive 40 --drive-report "$work/why-drive.json" >/dev/null 2>"$work/err" ||
  fail "the why tab on gpt2-xl with --drive 40 exited $?: $(head -c 300 "$work/err")"
[ "$SECONDS" -le 60 ] || fail "closing the window while the why tab measured gpt2-xl took $SECONDS s"

# A screenshot of the why tab's sweep on gpt2-xl (GL): the measurement keeps to its 10 s (it
# took two minutes: every mode five times, the sweep to T = 1024 at 4.5 s a run on llvmpipe),
# and the sweep either reached T = 1024 or says where it stopped; at 1024x768, text 1.5, the
# view's labels all show.
SECONDS=0
if timeout 150 "$bin" --preset gpt2-xl --tab why-sweep --window 1024x768 --font-scale 1.5 --screenshot "$work/why-xl.png" \
    --layout-report "$work/why-xl.json" >/dev/null 2>"$work/err"; then
  [ "$SECONDS" -le 60 ] || fail "--screenshot of the why tab on gpt2-xl took $SECONDS s"
  /usr/bin/python3 - "$work/why-xl.json" <<'PY' || fail "the why tab's sweep on gpt2-xl"
import json, sys
d = json.load(open(sys.argv[1]))
labels = [i for i in d["items"] if i["kind"] == "label" and i["panel"] == "why"]
assert labels, "no why panel in the report"
hidden = [l["text"] for l in labels if not l["visible"]]
assert not hidden, hidden
texts = [l["text"] for l in labels]
assert any(t.startswith("T = 8 .. 1024,") for t in texts) or any(t.startswith("T >= ") and " left out: " in t for t in texts), texts
# The chart's axes: memory on the left and time on the right, each tick with its unit (one
# at least: gpt2-xl's sweep may stop at T = 32) and growing upwards; the lengths along the
# foot after a "T".
import re
def axis(units):
    out = []
    for l in labels:
        m = re.fullmatch(r"([\d.]+) (%s)" % units, l["text"])
        if m:
            scale = {"B": 1, "KiB": 2**10, "MiB": 2**20, "GiB": 2**30, "us": 1e-3, "ms": 1, "s": 1e3}[m.group(2)]
            out.append((l["y"], float(m.group(1)) * scale, l["x"]))
    return sorted(out)
memory, time = axis("B|KiB|MiB|GiB"), axis("us|ms|s")
assert memory and time, ("the sweep chart's axes lack labelled ticks", texts)
for ticks in (memory, time):
    values = [v for _, v, _ in ticks]  # top to bottom
    assert values == sorted(values, reverse=True) and len(set(values)) == len(values), ticks
assert max(x for _, _, x in memory) < min(x for _, _, x in time), "memory's axis is not left of time's"
feet = [l for l in labels if l["text"] == "T"]
assert feet and any(l["text"].isdigit() and abs(l["y"] - feet[0]["y"]) < 2 for l in labels), "no lengths along the foot"
print("why tab on gpt2-xl:", [t for t in texts if "left out" in t or t.startswith("T = 8 ..")],
      "axes:", [memory[0], time[0]])
PY
else
  fail "--screenshot of the why tab on gpt2-xl exited $?: $(head -c 300 "$work/err")"
fi

# A sweep stopped after its first length (HEADSPLIT_WHY_SECONDS: a microsecond) still draws
# its chart: a point on each line, both axes labelled, T's value at the foot, and where it stopped.
if HEADSPLIT_WHY_SECONDS=0.000001 timeout 120 "$bin" --tab why-sweep --window 1024x768 --font-scale 1.5 --backend cpu \
    --screenshot "$work/why-one.png" --layout-report "$work/why-one.json" >/dev/null 2>"$work/err"; then
  /usr/bin/python3 - "$work/why-one.json" <<'PY' || fail "the why tab's sweep of one length"
import json, re, sys
labels = [i for i in json.load(open(sys.argv[1]))["items"] if i["kind"] == "label" and i["panel"] == "why"]
texts = [l["text"] for l in labels]
assert any(t.startswith("T = 8 .. 8,") for t in texts), texts
assert any(t.startswith("T >= 16 left out: ") for t in texts), texts
assert any(re.fullmatch(r"[\d.]+ (B|KiB|MiB)", t) for t in texts), ("no memory tick", texts)
assert any(re.fullmatch(r"[\d.]+ (us|ms|s)", t) for t in texts), ("no time tick", texts)
assert "8" in texts and "T" in texts, ("no length at the foot", texts)
PY
else
  fail "--screenshot of the why tab with HEADSPLIT_WHY_SECONDS exited $?: $(head -c 300 "$work/err")"
fi

# tools/why_runs.sh, the command behind docs/benchmarks.md's run-to-run figures: two runs give
# the three ratios of each and their spread; a RUNS that is not a number is refused.
here=$(cd "$(dirname "$0")" && pwd)
if out=$("$here/../tools/why_runs.sh" "$bin" 2 --backend cpu 2>&1); then
  for r in loop/split split/fused flash/split; do
    grep -q "^$r: .* over 2 runs, highest/lowest [0-9.]*$" <<<"$out" || fail "tools/why_runs.sh gave no $r spread: $out"
  done
else
  fail "tools/why_runs.sh failed: $out"
fi
"$here/../tools/why_runs.sh" "$bin" two >/dev/null 2>&1
[ $? = 2 ] || fail "tools/why_runs.sh took RUNS = two"

if [ "$failures" -gt 0 ]; then
  echo "$failures GUI check(s) failed"
  exit 1
fi
echo "all GUI checks passed: $steps steps rendered and distinct"
