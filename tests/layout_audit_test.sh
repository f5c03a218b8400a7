#!/usr/bin/env bash
# The layout audit, for real: the window renders every step of the audit configurations at
# each window size and font scale in one process and checks each frame (labels never
# overlap, nothing sticks out of its panel, a cell with room shows its number, the default
# example shows every number, heatmap cells of up to 12 tokens are 32 px at 1920x1080). Then
# one frame's --layout-report is read back.
# Usage: layout_audit_test.sh PATH/TO/headsplit [--audit-windows ... --audit-fonts ...]
set -u
bin=$1
shift
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

"$bin" --layout-audit "$work/audit.json" "$@" 2>"$work/err" || fail "the layout audit: $(head -c 2000 "$work/err")"
/usr/bin/python3 - "$work/audit.json" <<'PY' || fail "the audit report"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["format"] == "headsplit-layout-audit", d.get("format")
assert d["problem_count"] == 0, d["problems"][:10]
cases = len(d["windows"]) * len(d["font_scales"]) * len(d["configurations"])
assert d["frames_checked"] >= cases * 12, (d["frames_checked"], cases)
print("layout audit: %d frames, %d windows x %d font scales x %d configurations, no problem"
      % (d["frames_checked"], len(d["windows"]), len(d["font_scales"]), len(d["configurations"])))
PY

# One frame's report: the four audited panels, labels and cells with their rectangles.
"$bin" --screenshot "$work/shot.png" --layout-report "$work/layout.json" --step 3 --window 1920x1080 --font-scale 1.5 \
  2>"$work/err" || fail "--layout-report: $(cat "$work/err")"
/usr/bin/python3 - "$work/layout.json" <<'PY' || fail "the layout report"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["format"] == "headsplit-layout" and d["version"] == 1
assert d["window"] == [1920, 1080] and d["font_scale"] == 1.5, (d["window"], d["font_scale"])
names = {p["name"] for p in d["panels"]}
assert {"timeline", "stage", "heatmaps", "code"} <= names, names
cells = [i for i in d["items"] if i["kind"] == "cell"]
labels = [i for i in d["items"] if i["kind"] == "label"]
assert len(cells) == 3 * 18 + 2 * 9, len(cells)  # the transpose step's Q, K, V and two 3 x 3 heatmaps
assert all(c["value_shown"] for c in cells)
assert any(l["text"] == "queries" and l["panel"] == "stage" for l in labels)
for i in d["items"]:
    assert i["w"] > 0 and i["h"] > 0, i
print("layout report: %d panels, %d labels, %d cells" % (len(d["panels"]), len(labels), len(cells)))
PY
# Presenter mode on the shipped model: the caption names the layer the steps run on.
"$bin" --screenshot "$work/present.png" --layout-report "$work/present.json" --step 5 --window 1920x1080 \
  --font-scale 1.5 --present --preset tiny-trained --layer 1 2>"$work/err" || fail "presenter mode, tiny-trained: $(cat "$work/err")"
/usr/bin/python3 - "$work/present.json" <<'PY' || fail "the presenter caption"
import json, sys
d = json.load(open(sys.argv[1]))
caption = [i["text"] for i in d["items"] if i["kind"] == "label" and i["panel"] == "caption"]
assert caption and caption[0].startswith("Layer 1 (0-3), Step 5 of "), caption
print("presenter caption: " + caption[0])
PY
# Without --screenshot the report has no frame to describe: refused in one line.
"$bin" --layout-report "$work/x.json" 2>"$work/err"
[ $? = 2 ] && grep -q -- "--layout-report needs --screenshot" "$work/err" || fail "--layout-report alone: $(cat "$work/err")"

if [ "$failures" -gt 0 ]; then
  exit 1
fi
echo "layout audit test passed"
