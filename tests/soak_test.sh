#!/usr/bin/env bash
# UI soak: the real app under Xvfb for 5,000 frames of random control changes (bad values,
# flash over the trace's tile limit among them, and hostile words in the sentence), key
# presses, wheel notches, drags and double-clicks over the stage, and resizes, then a large
# trace on the worker. Passes when it did not crash, saw no GL
# error, and resident memory after the run is within 10% of what it was after warm-up.
# Usage: soak_test.sh PATH/TO/headsplit [FRAMES [rss|no-rss]]   (run inside xvfb-run)
# no-rss: the sanitizer build, whose allocator keeps freed blocks in quarantine (resident
# memory says nothing there; LeakSanitizer checks leaks instead).
set -u
bin=$1
frames=${2:-5000}
rss_check=${3:-rss}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$bin" --drive "$frames" --drive-report "$work/soak.json" 2>"$work/err"
rc=$?
if [ "$rc" != 0 ]; then
  echo "FAIL: the soak exited $rc: $(tail -3 "$work/err")"
  exit 1
fi
/usr/bin/python3 - "$work/soak.json" "$frames" "$rss_check" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
frames = int(sys.argv[2])
check_rss = sys.argv[3] == "rss"
rss = d["rss_kb"]
print("soak: %d stage gestures, %d frames with a new zoom or window" % (d["stage_gestures"], d["stage_view_changes"]))
print("soak: %d frames, %d control changes (%d bad values, %d refused, %d mishandled), %d key presses, %d resizes, %d GL errors; "
      "RSS %d KB after warm-up, %d KB at the end (%+.1f%%); median frame %.1f ms, max %.1f ms; "
      "while gpt2-small T=128 computed: max frame %.1f ms over %d frames, %.1f ms for the frame that first drew it"
      % (d["frames"], d["control_changes"], d["bad_values"], d["refused_changes"], d["bad_values_mishandled"], d["key_presses"], d["resizes"], d["gl_errors"],
         rss["after_warmup"], rss["end"], rss["growth_percent"], d["all_frames"]["median_ms"],
         d["all_frames"]["max_ms"], d["while_gpt2_small_T128_computes"]["max_ms"],
         d["while_gpt2_small_T128_computes"]["frames"], d["gpt2_small_T128_first_frame_ms"]))
assert d["frames"] >= frames, "too few frames"
assert d["gl_errors"] == 0, "GL errors"
ob = d["over_budget"]
print("soak: gpt2-xl at T=8192 (over the memory budget) %d times, shapes shown after %.2f s at most"
      % (len(ob["answered_s"]), max(ob["answered_s"] or [0])))
assert ob["answered_s"] and not ob["waiting"], "the over-budget configuration was never answered"
assert max(ob["answered_s"]) <= 5.0, "the over-budget configuration took over 5 s to answer"
assert d["bad_values"] >= frames // 200, "too few bad values"
assert d["bad_values_mishandled"] == 0, "a bad value was not refused in its frame, or the trace on screen changed"
assert d["control_changes"] >= frames // 20, "too few changes"
# Half the gestures are wheel notches, each of which changes the zoom when the stage has it.
assert d["stage_view_changes"] >= d["stage_gestures"] // 4 > 0, "wheel and double-click over the stage changed nothing"
assert not check_rss or rss["growth_percent"] <= 10.0, "resident memory grew"
PY
