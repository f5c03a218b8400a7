#!/usr/bin/env bash
# The layout audit, for real: the window renders every step of the audit configurations over
# the window sizes and font scales in one process and checks each frame (nothing of the stage,
# heatmaps, code or caption needs scrolling, every head is on screen, labels never overlap, a
# cell with room shows its number, a tensor's numbers all or none, the default example shows
# every number, heatmap cells of up to 12 tokens are 32 px at 1920x1080). Then one frame's
# --layout-report is read back, and a presenter frame of 12 tokens with 4 heads at 1024x768.
# Usage: layout_audit_test.sh PATH/TO/headsplit [--audit-windows ... --audit-fonts ...]
#        layout_audit_test.sh PATH/TO/headsplit --classroom   (that sweep alone, no frame read)
set -u
bin=$1
shift
classroom=0
[ "${1:-}" = --classroom ] && classroom=1 && shift
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# audit REPORT [SWEEP...]: the audit over the sweep given, which must find nothing.
audit() {
  local report=$1
  shift
  "$bin" --layout-audit "$report" "$@" 2>"$work/err" || fail "the layout audit $*: $(head -c 2000 "$work/err")"
  /usr/bin/python3 - "$report" <<'PY' || fail "the audit report $*"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["format"] == "headsplit-layout-audit", d.get("format")
assert d["problem_count"] == 0, d["problems"][:10]
pairs = len(d["windows"]) * len(d["font_scales"])
configurations = len(d["configurations"])
# Every configuration meets every (size, font) pair up to 8 pairs, else about 8 of them.
assert d["runs"] >= configurations * min(pairs, 8) * 0.9, (d["runs"], pairs, configurations)
assert d["frames_checked"] >= d["runs"] * 12, (d["frames_checked"], d["runs"])
print("layout audit: %d frames in %d runs (%d windows x %d font scales, %d configurations), no problem"
      % (d["frames_checked"], d["runs"], len(d["windows"]), len(d["font_scales"]), configurations))
PY
}
# --classroom: every configuration at every classroom size and text size the rules name
# (projectors' 1024x768 and 1280x800, laptops' 1366x768, 1920x1080; text 1.25 and 1.5), where
# the default sweep meets each configuration at a third of its pairs (a test of its own, so
# that the two sweeps run side by side).
if [ "$classroom" = 1 ]; then
  audit "$work/classroom.json" --audit-windows 1024x768,1280x800,1366x768,1920x1080 --audit-fonts 1.25,1.5
  [ "$failures" -gt 0 ] && exit 1
  echo "layout audit test passed (the classroom sweep)"
  exit 0
fi
audit "$work/audit.json" "$@"
# A student's laptop, the default example: the why tab's quick measurement (the audit's) cuts
# its sweep short, a line more in the sweep's legend. The tab asked a line more than it drew
# (the legend beside the plot), and the stage's cells lost their numbers: 18 frames at 1366x768,
# text 1.25, which the whole sweep, either window alone, never meets.
audit "$work/laptop.json" --audit-windows 1366x768,1920x1080 --audit-fonts 1.25,1.5 --audit-cases default

# One frame's report: the four audited panels, labels and cells with their rectangles.
"$bin" --screenshot "$work/shot.png" --layout-report "$work/layout.json" --step 3 --window 1920x1080 --font-scale 1.5 \
  2>"$work/err" || fail "--layout-report: $(cat "$work/err")"
/usr/bin/python3 - "$work/layout.json" <<'PY' || fail "the layout report"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["format"] == "headsplit-layout" and d["version"] == 2
assert d["window"] == [1920, 1080] and d["font_scale"] == 1.5, (d["window"], d["font_scale"])
names = {p["name"] for p in d["panels"]}
assert {"timeline", "stage", "heatmaps", "code"} <= names, names
cells = [i for i in d["items"] if i["kind"] == "cell"]
labels = [i for i in d["items"] if i["kind"] == "label"]
# The transpose step's queries, keys and values (18 numbers each; queries' widest number,
# -1.09, shown with one decimal); no heatmap: the weights come at step 7.
assert len(cells) == 3 * 18, len(cells)
assert all(c["value_shown"] and c["panel"] == "stage" for c in cells)
notes = [l["text"] for l in labels if l["panel"] == "heatmaps"]
assert len(notes) == 1 and notes[0].endswith("weights are computed at step 7"), notes
assert any(l["text"] == "queries" and l["panel"] == "stage" for l in labels)
# Each cell's place along its tensor's axes: [1, 2, 3, 3] after the transpose.
assert sorted(tuple(c["index"]) for c in cells if c["tensor"] == "keys") == \
    [(0, h, t, d) for h in range(2) for t in range(3) for d in range(3)]
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
# A student's laptop at text 1 (1024x768): the default example's view shows every number of
# queries, keys and values (queries' -1.09 at one decimal); the weights' line stands beside
# the heads panel's tabs. Before, the queries' 28 px cells hid "-1.1" (it needs 29.5 px).
# And the scores step: the stage's 18 scores blank or numbered, each is numbered somewhere
# (the heatmaps show the same elements: values_of names "attn_scores at step 4").
for step in 2 4; do
  "$bin" --screenshot "$work/v$step.png" --layout-report "$work/v$step.json" --window 1024x768 --font-scale 1 \
    --backend cpu --step $step 2>"$work/err" || fail "1024x768 text 1, step $step: $(cat "$work/err")"
done
/usr/bin/python3 - "$work/v2.json" "$work/v4.json" <<'PY' || fail "the default example's numbers at 1024x768, text 1"
import json, sys
view = json.load(open(sys.argv[1]))
cells = [i for i in view["items"] if i["kind"] == "cell"]
assert len(cells) == 54 and all(c["value_shown"] for c in cells), [(c["tensor"], c["w"], c["value_w"]) for c in cells if not c["value_shown"]]
assert all(c["values_of"].endswith(" at step 2") for c in cells), cells[0]
notes = [i["text"] for i in view["items"] if i["panel"] == "heatmaps" and i["kind"] == "label"]
heads = [p for p in view["panels"] if p["name"] == "heatmaps"][0]
assert notes and notes[0].endswith("step 7") and [i for i in view["items"] if i["text"] == notes[0]][0]["y"] < heads["y"] + heads["h"] - 10, notes
scores = json.load(open(sys.argv[2]))
numbered = {(c["values_of"], tuple(c["index"])) for c in scores["items"] if c["kind"] == "cell" and c["value_shown"]}
stage = [c for c in scores["items"] if c["kind"] == "cell" and c["panel"] == "stage"]
assert len(stage) == 18 and all((c["values_of"], tuple(c["index"])) in numbered for c in stage), stage[:2]
print("1024x768, text 1: the view's 54 numbers shown, the scores' 18 each numbered (%d on the stage)"
      % sum(c["value_shown"] for c in stage))
PY
# A laptop at text 1.5 (1366x768), the normal layout: queries, keys and values side by side
# would leave 36 px cells, too small for the queries' "-1.1", which went blank beside numbered
# keys and values; the view and the transpose draw the queries alone, named with the other
# two, every number shown.
for step in 2 3; do
  "$bin" --screenshot "$work/l$step.png" --layout-report "$work/l$step.json" --window 1366x768 --font-scale 1.5 \
    --backend cpu --step $step 2>"$work/err" || fail "1366x768 text 1.5, step $step: $(cat "$work/err")"
  /usr/bin/python3 - "$work/l$step.json" <<'PY' || fail "the queries' numbers at 1366x768, text 1.5, step $step"
import json, sys
d = json.load(open(sys.argv[1]))
cells = [i for i in d["items"] if i["kind"] == "cell" and i["panel"] == "stage"]
assert {c["tensor"] for c in cells} == {"queries"} and len(cells) == 18, sorted({c["tensor"] for c in cells})
assert all(c["value_shown"] for c in cells), [(c["text"], c["w"]) for c in cells if not c["value_shown"]]
assert any(i["text"] == "queries (keys, values alike)" for i in d["items"] if i["panel"] == "stage"), "no name for the others"
PY
done
# The weight split opened at step 0 on a laptop (1366x768, text 1.25): W_query and the
# stage's x both show every number. The split asks for cells that hold its own weights at two
# decimals ("-.39"), not the widest number of any grid ("-0.00", which took 427 px of the 639
# and left x 33.6 px cells, too small for "-.7").
"$bin" --screenshot "$work/ws.png" --layout-report "$work/ws.json" --window 1366x768 --font-scale 1.25 \
  --backend cpu --tab weights --step 0 2>"$work/err" || fail "1366x768 text 1.25, the weight split: $(cat "$work/err")"
/usr/bin/python3 - "$work/ws.json" <<'PY' || fail "the weight split and the stage's numbers at 1366x768, text 1.25"
import json, sys
d = json.load(open(sys.argv[1]))
cells = [i for i in d["items"] if i["kind"] == "cell"]
stage = [c for c in cells if c["panel"] == "stage"]
weights = [c for c in cells if c["panel"] == "weights"]
assert len(stage) == 18 and len(weights) == 36, (len(stage), len(weights))
hidden = [(c["panel"], c["text"], round(c["w"], 1)) for c in cells if not c["value_shown"]]
assert not hidden, hidden[:6]
assert all("." in c["text"] and len(c["text"].split(".")[1]) == 2 for c in weights), [c["text"] for c in weights][:6]
print("1366x768, text 1.25, the weight split: its 36 weights at two decimals and x's 18 numbers shown")
PY
# A projector: presenter mode at 1024x768, text 1.5, 12 tokens with 4 heads. Every head is
# on screen (the large map or its thumbnail), nothing of the stage, heatmaps or caption lies
# outside its visible rectangle, and the heatmap cells are read from the report.
"$bin" --screenshot "$work/p12.png" --layout-report "$work/p12.json" --present --window 1024x768 --font-scale 1.5 \
  --text "the quick brown fox jumps over the lazy dog by the river" --d-in 12 --d-out 12 --heads 4 --step 7 \
  2>"$work/err" || fail "presenter, 12 tokens: $(cat "$work/err")"
/usr/bin/python3 - "$work/p12.json" <<'PY' || fail "the presenter frame of 12 tokens with 4 heads"
import json, re, sys
d = json.load(open(sys.argv[1]))
panels = {p["name"]: p for p in d["panels"]}
assert panels["heatmaps"]["heads"] == [0, 1, 2, 3], panels["heatmaps"]
for it in d["items"]:
    p = panels.get(it["panel"])
    if p and p["must_fit"]:
        x0, y0, x1, y1 = p["visible"]
        assert x0 - 1 <= it["x"] and it["x"] + it["w"] <= x1 + 1 and y0 - 1 <= it["y"] and it["y"] + it["h"] <= y1 + 1, it
heat = [i for i in d["items"] if i["panel"] == "heatmaps"]
for h in range(4):  # a map of the head, or a label naming it
    assert any(i.get("tensor") == "head %d" % h or i["text"] in ("h%d" % h, "head %d" % h) for i in heat), h
cells = [i for i in heat if i["kind"] == "cell"]
assert cells and all(c["head"] == cells[0]["head"] for c in cells), "one head large"
print("presenter 1024x768, 12 tokens, 4 heads: smallest heatmap cell %.0f px, %d cells of head %d large"
      % (min(c["w"] for c in cells), len(cells), cells[0]["head"]))
PY
# The heatmaps' legend measured with the numbers it draws: tiny-trained's scores reach -67.91,
# wider than the "-9.99" the legend was measured at, so its masked swatch went to a second line
# that lay under the panel's edge (presenter, 1280x800, text 1.5, steps 4 to 6). And the why
# tab's three views at 1024x768, text 1.5 (a projector): every label of each inside the panel;
# the weight split tab's three as well (its table needed scrolling sideways and down, even at
# 1920x1080, and the audit let it: the panel was not one that must fit).
"$bin" --screenshot "$work/tt.png" --layout-report "$work/tt.json" --present --window 1280x800 --font-scale 1.5 \
  --preset tiny-trained --step 4 2>"$work/err" || fail "presenter, tiny-trained at 1280x800: $(cat "$work/err")"
for tab in why why-sweep why-kv weights weights-matmuls weights-kv; do
  "$bin" --screenshot "$work/$tab.png" --layout-report "$work/$tab.json" --window 1024x768 --font-scale 1.5 --backend cpu \
    --text "the quick brown fox jumps over the lazy dog today" --d-out 8 --heads 4 --step 7 --tab "$tab" \
    2>"$work/err" || fail "--tab $tab at 1024x768: $(cat "$work/err")"
done
# tiny-trained's 15 pieces in the normal layout at 1366x768, text 1.5: the legend's line under
# the large map left its rows and keys every other name; the legend stands beside the map
# where the room between it and the thumbnails holds it, and every name shows whole.
"$bin" --screenshot "$work/tiny-laptop.png" --layout-report "$work/tiny-laptop.json" --window 1366x768 \
  --font-scale 1.5 --backend cpu --preset tiny-trained --step 4 2>"$work/err" || fail "tiny-trained at 1366x768: $(cat "$work/err")"
/usr/bin/python3 - "$work/tiny-laptop.json" <<'PY' || fail "tiny-trained's names on the heatmap at 1366x768, text 1.5"
import json, sys
d = json.load(open(sys.argv[1]))
assert not [t for t in d["thinned"] if t["panel"] == "heatmaps"], d["thinned"]
named = [i for i in d["items"] if i["panel"] == "heatmaps" and i.get("token")]
assert len(named) >= 30 and all(i["token"] in i["text"] for i in named), [(i["text"], i["token"]) for i in named]
print("tiny-trained's heatmap at 1366x768, text 1.5: %d names whole" % len(named))
PY
# The T sweep in the normal layout at 1366x768, text 1.25 (a student's laptop): the legend's
# five lines left the plot no room under them, so no plot was drawn. The legend now stands
# beside it; the plot's axes must show (memory in MiB on the left, time in ms on the right, T
# along the foot), every label inside the panel, no number broken across the legend's lines.
"$bin" --screenshot "$work/sweep-laptop.png" --layout-report "$work/sweep-laptop.json" --window 1366x768 \
  --font-scale 1.25 --backend cpu --step 2 --tab why-sweep 2>"$work/err" || fail "--tab why-sweep at 1366x768: $(cat "$work/err")"
/usr/bin/python3 - "$work/sweep-laptop.json" <<'PY' || fail "the T sweep's plot at 1366x768, text 1.25"
import json, re, sys
d = json.load(open(sys.argv[1]))
p = {q["name"]: q for q in d["panels"]}["why"]
labels = [i for i in d["items"] if i["panel"] == "why" and i["kind"] == "label"]
texts = [i["text"] for i in labels]  # a legend line's continuation is indented: not a tick
mem = [t for t in texts if re.fullmatch(r"\d+(\.\d+)? (B|KiB|MiB|GiB)", t)]
ms = [t for t in texts if re.fullmatch(r"\d+(\.\d+)? ms", t)]
assert len(mem) >= 2 and len(ms) >= 2 and "T" in texts, texts
assert not [t for t in texts if re.search(r"\d\.$", t)], texts  # "8." ending a line: a number broken
x0, y0, x1, y1 = p["visible"]
for it in labels:
    assert it["visible"] and y0 - 1 <= it["y"] and it["y"] + it["h"] <= y1 + 1, (it, p["visible"])
    assert x0 - 1 <= it["x"] and it["x"] + it["w"] <= x1 + 1, (it, p["visible"])
print("the T sweep's plot at 1366x768: memory ticks %s, time ticks %s" % (mem, ms))
PY
# llama3-8b's KV cache: its legend's figures (bytes a token, all layers, the cache at 4096)
# were cut at the panel's edge; they now go on at the next line, and every one shows.
"$bin" --screenshot "$work/kv8b.png" --layout-report "$work/kv8b.json" --window 1024x768 --font-scale 1.5 --backend cpu \
  --preset llama3-8b --tab why-kv 2>"$work/err" || fail "--tab why-kv, llama3-8b at 1024x768: $(cat "$work/err")"
/usr/bin/python3 - "$work/kv8b.json" <<'PY' || fail "the KV cache's legend"
import json, sys
d = json.load(open(sys.argv[1]))
text = " ".join(i["text"].strip() for i in d["items"] if i["panel"] == "why" and i["kind"] == "label")
for figures in ["32,768 bytes a token (512.0 KiB), 128.0 MiB at 4096", "8,192 bytes a token (128.0 KiB), 32.0 MiB at 4096",
                "1,024 bytes a token (16.0 KiB), 4.00 MiB at 4096"]:
    assert figures in text, (figures, text)
print("the KV legend's figures all show")
PY
# The timeline's row at 1024x768, text 1.5: "step 7 of 11" lay past the window's right edge
# (a labelled speed slider took the room); the row must fit there, and every label shows whole.
/usr/bin/python3 - "$work/why.json" <<'PY' || fail "the timeline's row"
import json, sys
d = json.load(open(sys.argv[1]))
p = {q["name"]: q for q in d["panels"]}["timeline"]
assert p["must_fit"], p
x0, y0, x1, y1 = p["visible"]
labels = [i for i in d["items"] if i["panel"] == "timeline"]
assert "step 7 of 11" in [i["text"] for i in labels], labels
for it in labels:
    assert it["visible"] and x0 - 1 <= it["x"] and it["x"] + it["w"] <= x1 + 1, (it, p["visible"])
print("the timeline's %d labels inside it" % len(labels))
PY
/usr/bin/python3 - "$work/tt.json" "$work/why.json" "$work/why-sweep.json" "$work/why-kv.json" "$work/weights.json" \
  "$work/weights-matmuls.json" "$work/weights-kv.json" <<'PY' || fail "labels outside their panel"
import json, sys
for path, panel, least in zip(sys.argv[1:], ["heatmaps", "why", "why", "why", "weights", "weights", "weights"],
                              [3, 6, 4, 3, 5, 5, 3]):
    d = json.load(open(path))
    p = {q["name"]: q for q in d["panels"]}[panel]
    assert p["must_fit"], p
    labels = [i for i in d["items"] if i["panel"] == panel and i["kind"] == "label"]
    assert len(labels) >= least, (path, [l["text"] for l in labels])
    x0, y0, x1, y1 = p["visible"]
    for it in labels:
        assert it["visible"] and y0 - 1 <= it["y"] and it["y"] + it["h"] <= y1 + 1, (path, it, p["visible"])
        assert x0 - 1 <= it["x"] and it["x"] + it["w"] <= x1 + 1, (path, it, p["visible"])
    print("%s: %d labels of %s inside it" % (path.split("/")[-1], len(labels), panel))
PY
# What each step does, from the back row (presenter mode, 1024x768, text 1.5, the default
# example). Read from the layout report, each cell's place along its tensor's axes and where
# it is drawn: after the view every token's cells form a panel of their own that holds both
# heads, after the transpose every head's cells form a panel that holds every token (the two
# pictures group their cells differently); the memory strip shows the same order of values
# under the view, the transpose and the transpose back (no data moved), and the merge's is
# laid out anew, token by token; every number drawn is 2.5% of the window's height (19 px).
for step in 2 3 9 10; do
  "$bin" --screenshot "$work/n$step.png" --layout-report "$work/n$step.json" --present --window 1024x768 \
    --font-scale 1.5 --step $step 2>"$work/err" || fail "presenter, step $step: $(cat "$work/err")"
done
/usr/bin/python3 - "$work" <<'PY' || fail "what the view, the transpose and the merge draw"
import json, sys
work = sys.argv[1]
report = {s: json.load(open("%s/n%d.json" % (work, s))) for s in (2, 3, 9, 10)}

def panels(d):
    # The stage's cells of its first tensor, gathered into panels: cells within a third of a
    # cell of each other belong together (a panel's cells lie 2 px apart, panels a gap apart).
    cells = [i for i in d["items"] if i["panel"] == "stage" and i["kind"] == "cell"]
    cells = [c for c in cells if c["tensor"] == cells[0]["tensor"]]
    parent = list(range(len(cells)))
    def root(i):
        while parent[i] != i:
            i = parent[i]
        return i
    for i, a in enumerate(cells):
        for j, c in enumerate(cells[:i]):
            near = 0.33 * a["w"]
            if a["x"] - near < c["x"] + c["w"] and c["x"] - near < a["x"] + a["w"] and \
               a["y"] - near < c["y"] + c["h"] and c["y"] - near < a["y"] + a["h"]:
                parent[root(i)] = root(j)
    groups = {}
    for i, c in enumerate(cells):
        groups.setdefault(root(i), []).append(c["index"])
    return list(groups.values())

def grouped_by(d, outer, inner, n_outer, n_inner):
    # One panel per value along `outer`, each holding every value along `inner`.
    ps = panels(d)
    return len(ps) == n_outer and all(len({ix[outer] for ix in p}) == 1 and len({ix[inner] for ix in p}) == n_inner
                                      for p in ps)

view, transpose = report[2], report[3]
assert grouped_by(view, 1, 2, 3, 2), ("the view: a panel per token, each holding both heads", panels(view))
assert grouped_by(transpose, 1, 2, 2, 3), ("the transpose: a panel per head, each holding every token", panels(transpose))
assert not grouped_by(view, 2, 1, 2, 3) and not grouped_by(transpose, 2, 1, 3, 2), "the two group their cells differently"
assert grouped_by(report[9], 1, 2, 3, 2), "the transpose back: token panels again"
assert len(panels(report[10])) == 1, "the merge: one [T, D_out] matrix"

def strip(d):  # (token, head, feature) of the value at each address, in address order
    cells = sorted((i for i in d["items"] if i["kind"] == "memory"), key=lambda i: (i["y"], i["x"]))
    assert len(cells) == 18, len(cells)
    return cells

def thf(shape_axes, ix):
    if shape_axes == "bthd": return (ix[1], ix[2], ix[3])
    if shape_axes == "bhtd": return (ix[2], ix[1], ix[3])
    return (ix[1], ix[2] // 3, ix[2] % 3)  # [B, T, D_out]: head h holds features 3h .. 3h + 2

order = {s: [thf(a, c["index"]) for c in strip(report[s])] for s, a in ((2, "bthd"), (3, "bhtd"), (9, "bthd"), (10, "btd"))}
assert order[2] == order[3], "the transpose moved no data: the strip is the view's"
assert order[2] == [(t, h, d) for t in range(3) for h in range(2) for d in range(3)], order[2]
assert order[9] == [(t, h, d) for h in range(2) for t in range(3) for d in range(3)], "context's buffer is head by head"
assert order[10] == order[2], "the merge copies token by token"
for s, d in report.items():
    shown = [i for i in d["items"] if i["kind"] == "cell" and i["panel"] == "stage" and i["value_shown"]]
    assert shown, "step %d shows no number" % s
    assert all(i["value_h"] >= 0.025 * 768 - 0.5 for i in shown), (s, min(i["value_h"] for i in shown))
print("the view draws token panels, the transpose head panels; the strip stays through the views and the merge lays it out anew")
PY
# Keys repeated for their heads (12 tokens, 4 heads sharing 2 key/value heads) at 1024x768
# presenter, text 1.5: the copy's memory strip is drawn, laid out head by head (addresses
# run through h0's 12 tokens, then h1's, ...), and each head's run is bracketed and named
# once per strip row it reaches, in order; the title says how the copy is laid out.
"$bin" --screenshot "$work/gqa.png" --layout-report "$work/gqa.json" --present --window 1024x768 --font-scale 1.5 \
  --step 4 --text "the quick brown fox jumps over the lazy dog by the river" --heads 4 --kv-heads 2 --d-in 12 \
  --d-out 12 2>"$work/err" || fail "presenter, repeat_kv: $(cat "$work/err")"
/usr/bin/python3 - "$work/gqa.json" <<'PY' || fail "the repeated keys' memory strip"
import json, sys
d = json.load(open(sys.argv[1]))
cells = sorted((i for i in d["items"] if i["kind"] == "memory" and i["visible"]), key=lambda i: (i["y"], i["x"]))
assert len(cells) == 144, len(cells)  # [1, 4, 12, 3]
order = [(c["index"][1], c["index"][2], c["index"][3]) for c in cells]
assert order == [(h, t, f) for h in range(4) for t in range(12) for f in range(3)], order[:8]
rows = sorted({round(c["y"]) for c in cells})
names = []
for r in rows:
    under = [i for i in d["items"] if i["kind"] == "label" and i["panel"] == "stage" and i["visible"]
             and r < i["y"] < r + 3 * cells[0]["h"]]
    names += [i["text"] for i in sorted(under, key=lambda i: i["x"])]
heads = [n for n in names if n in ("h0", "h1", "h2", "h3")]
assert heads and heads == sorted(heads) and set(heads) == {"h0", "h1", "h2", "h3"}, names
assert len(heads) <= 4 + len(rows) - 1, names  # a head named again only where it wraps to a row
titles = [i["text"] for i in d["items"] if i["kind"] == "label" and "addresses" in i["text"]]
assert any("head by head" in t or "by head" in t for t in titles), titles
print("repeat_kv at 1024x768 presenter: a strip of %d rows, heads named %s" % (len(rows), " ".join(heads)))
PY
# Ten words with 4 heads at 1024x768 presenter, text 1.5: under the grid the strip left the
# transpose's four tall head panels 20 px cells, and the view's and the transpose back's ten
# token panels, in one row, 30 px: none showed a number. The strip stands beside the grid
# instead (its rows wrapped, two tokens a row), the token panels in two rows of five: every
# memory cell right of every stage cell, in the buffer's order (the view's and transpose's
# token by token: no data moved; the transpose back's head by head, the context's), and
# every stage number shown with digits of 2.5% of the window's height (19.2 px). 16 tokens
# with 8 heads: the transpose shows every head and every token, not a window of 4 heads.
ten="the quick brown fox jumps over the lazy dog today"
for n in 2 3 9; do
  "$bin" --screenshot "$work/t10-$n.png" --layout-report "$work/t10-$n.json" --present --window 1024x768 --font-scale 1.5 \
    --step $n --text "$ten" --heads 4 --d-out 8 2>"$work/err" || fail "presenter, ten words' step $n: $(cat "$work/err")"
done
"$bin" --screenshot "$work/t16.png" --layout-report "$work/t16.json" --present --window 1024x768 --font-scale 1.5 \
  --step 3 --text "$(echo t{1..16})" --heads 8 --d-in 16 --d-out 16 \
  2>"$work/err" || fail "presenter, 16 tokens' transpose: $(cat "$work/err")"
/usr/bin/python3 - "$work" <<'PY' || fail "the strip beside the grid, every number shown; every head shown"
import json, sys
work = sys.argv[1]
token_major = [(t, h, f) for t in range(10) for h in range(4) for f in range(2)]
head_major = [(t, h, f) for h in range(4) for t in range(10) for f in range(2)]
# (token, head, feature) of a memory cell: [B, T, H, hd] at steps 2 and 9, [B, H, T, hd] at 3.
where = {2: lambda i: (i[1], i[2], i[3]), 3: lambda i: (i[2], i[1], i[3]), 9: lambda i: (i[1], i[2], i[3])}
order = {2: token_major, 3: token_major, 9: head_major}
smallest = []
for n in (2, 3, 9):
    d = json.load(open("%s/t10-%d.json" % (work, n)))
    cells = [i for i in d["items"] if i["kind"] == "cell" and i["panel"] == "stage" and i["visible"]]
    memory = sorted((i for i in d["items"] if i["kind"] == "memory" and i["visible"]), key=lambda i: (i["y"], i["x"]))
    assert len(cells) == 80 and len(memory) == 80, (n, len(cells), len(memory))
    right = max(c["x"] + c["w"] for c in cells)
    assert min(m["x"] for m in memory) > right, (n, "the strip is not beside the cells", min(m["x"] for m in memory), right)
    assert [where[n](m["index"]) for m in memory] == order[n], (n, [where[n](m["index"]) for m in memory][:8])
    hidden = [c["text"] for c in cells if not c["value_shown"]]
    assert not hidden, (n, "numbers not shown", len(hidden), min(c["w"] for c in cells))
    assert min(c["value_h"] for c in cells) >= 0.025 * 768, (n, min(c["value_h"] for c in cells))
    smallest.append(min(c["w"] for c in cells))
d = json.load(open(work + "/t16.json"))
cells = [i for i in d["items"] if i["kind"] == "cell" and i["panel"] == "stage" and i["visible"]]
assert {c["index"][1] for c in cells} == set(range(8)), sorted({c["index"][1] for c in cells})
assert {c["index"][2] for c in cells} == set(range(16)), sorted({c["index"][2] for c in cells})
print("ten words' view, transpose, transpose back: %s px cells, every number shown, the strip beside; "
      "16 tokens x 8 heads all shown" % ", ".join("%.0f" % w for w in smallest))
PY
# Every token named whole on a projector: ten words with 4 heads at 1024x768, text 1.5, the
# softmax step. Read from the report, not from what the window says it left out: the heatmap
# of the head shown large names every key and every query position ("the" twice, each with
# its place), each label holds its whole token, and the stage names every row; the project
# step of the default example shows every number of its three tensors.
"$bin" --screenshot "$work/w10.png" --layout-report "$work/w10.json" --present --window 1024x768 --font-scale 1.5 \
  --step 7 --text "$ten" --heads 4 --d-out 8 --d-in 8 2>"$work/err" || fail "presenter, ten words: $(cat "$work/err")"
"$bin" --screenshot "$work/p1.png" --layout-report "$work/p1.json" --present --window 1024x768 --font-scale 1.5 \
  --step 1 2>"$work/err" || fail "presenter, step 1: $(cat "$work/err")"
/usr/bin/python3 - "$work/w10.json" "$work/p1.json" "$ten" <<'PY' || fail "the labels of ten words, the project step's numbers"
import json, sys
d = json.load(open(sys.argv[1]))
words = sys.argv[3].split()
labels = [i for i in d["items"] if i["kind"] == "label" and i.get("token") and i["visible"]]
for l in labels:
    assert l["token"] in l["text"], ("cut", l)
def named(panel, along):
    # Labels of one line of a panel: the same left edge (rows) or the same top (keys).
    ls = [l for l in labels if l["panel"] == panel]
    lines = {}
    for l in ls:
        lines.setdefault(round(l[along]), []).append(l)
    return max(lines.values(), key=len) if lines else []
for panel, along in (("heatmaps", "x"), ("heatmaps", "y"), ("stage", "x")):
    line = named(panel, along)
    assert {l["token"] for l in line} == set(words), (panel, along, [l["text"] for l in line])
    assert {l["text"] for l in line if l["token"] == "the"} == {"0:the", "6:the"}, (panel, along, [l["text"] for l in line])
# The maps' step is about the heads panel: its head shown large has legible cells (33 px for
# up to 12 tokens: it had 22 px while the header's controls and a tab line it does not have in
# presenter mode took its height), and presenter mode's heads panel has no controls.
heat_cells = [i for i in d["items"] if i["kind"] == "cell" and i["panel"] == "heatmaps"]
assert heat_cells and min(c["w"] for c in heat_cells) >= 33, min(c["w"] for c in heat_cells)
heat_labels = [i["text"] for i in d["items"] if i["panel"] == "heatmaps" and i["kind"] == "label"]
assert not {"causal vs bidirectional", "colour scale"} & set(heat_labels), heat_labels
p1 = json.load(open(sys.argv[2]))
cells = [i for i in p1["items"] if i["kind"] == "cell" and i["panel"] == "stage"]
assert {c["tensor"] for c in cells} == {"queries", "keys", "values"}, {c["tensor"] for c in cells}
assert len(cells) == 54 and all(c["value_shown"] and c["value_h"] >= 0.025 * 768 - 0.5 for c in cells), \
    [(c["tensor"], c["value_shown"], c["value_h"]) for c in cells if not c["value_shown"]][:5]
print("ten words: every key and query named whole; the project step: 54 numbers of 19 px or more")
PY
# The transpose of ten words at 1024x768 presenter, text 1.5: the head panels' titles, which
# name the panels the step makes, read from the back row like the numbers (2.5% of the height;
# they were 14.5 px over 20 px cells: a title's slot is three quarters of a cell), reaching up
# towards the tensor's name without touching it; the view's token titles too.
for st in 2 3; do
  "$bin" --screenshot "$work/t$st.png" --layout-report "$work/t$st.json" --present --window 1024x768 --font-scale 1.5 \
    --step $st --text "$ten" --heads 4 --d-out 8 --d-in 8 2>"$work/err" || fail "presenter, ten words, step $st: $(cat "$work/err")"
done
/usr/bin/python3 - "$work/t2.json" "$work/t3.json" <<'PY' || fail "the panels' titles of ten words at 1024x768"
import json, sys
for path, titles in ((sys.argv[1], "0:the quick brown fox jumps over 6:the lazy dog today"), (sys.argv[2], "h0 h1 h2 h3")):
    labels = [i for i in json.load(open(path))["items"] if i["kind"] == "label" and i["panel"] == "stage"]
    name = [l for l in labels if l["text"].startswith("queries")]
    cells = [i for i in json.load(open(path))["items"] if i["kind"] == "cell" and i["panel"] == "stage"]
    # A panel's title stands over its panel's cells (the view's ten stand in two rows of five).
    def over_cells(l):
        under = [c for c in cells if c["y"] >= l["y"] and c["x"] < l["x"] + l["w"] and c["x"] + c["w"] > l["x"]]
        return bool(under) and l["y"] + l["h"] <= min(c["y"] for c in under) + 0.5
    drawn = [l for l in labels if l["text"] in titles.split() and over_cells(l)]
    assert sorted(l["text"] for l in drawn) == sorted(titles.split()), [l["text"] for l in drawn]
    assert all(l["h"] >= 0.025 * 768 - 0.5 for l in drawn), [(l["text"], l["h"]) for l in drawn]
    assert name and all(l["y"] >= name[0]["y"] + name[0]["h"] for l in drawn), (name, drawn[0])
print("ten words at 1024x768: the view's and the transpose's panel titles of 19 px or more")
PY
# The keys under the softmax's map of "... lazy sleeping dog" at 1024x768 presenter, text 1.5:
# too long to stand on end without shrinking the map, they stand across on two lines, each
# at the numbers' 2.5% of the height or more (on two lines in one line's height: 13 px).
sleeping="the quick brown fox jumps over the lazy sleeping dog"
"$bin" --screenshot "$work/k10.png" --layout-report "$work/k10.json" --present --window 1024x768 --font-scale 1.5 \
  --step 7 --text "$sleeping" --heads 4 --d-out 8 --d-in 8 2>"$work/err" || fail "presenter, the sleeping dog: $(cat "$work/err")"
/usr/bin/python3 - "$work/k10.json" "$sleeping" <<'PY' || fail "the keys under the softmax's map at 1024x768"
import json, sys
d = json.load(open(sys.argv[1]))
labels = [i for i in d["items"] if i["kind"] == "label" and i.get("token") and i["visible"]]
cells = [i for i in d["items"] if i["kind"] == "cell" and i["panel"] == "heatmaps"]
foot = max(c["y"] + c["w"] for c in cells) - 1
keys = [l for l in labels if l["panel"] == "heatmaps" and l["y"] >= foot]  # (on end, w is the text's size)
assert sorted(l["token"] for l in keys) == sorted(sys.argv[2].split()), [l["text"] for l in keys]
assert all(min(l["w"], l["h"]) >= 0.025 * 768 - 0.5 for l in keys), [(l["text"], l["w"], l["h"]) for l in keys]
assert min(c["w"] for c in cells) >= 33, min(c["w"] for c in cells)
print("the sleeping dog at 1024x768: 10 keys of 19 px or more under 33 px cells or more")
PY
# A live change is a fresh start: presenter mode at 1024x768, text 1.5, the sleeping dog with
# 4 heads and D_out 8. After H then Shift+H (back to 4 heads) the transpose's 80 cells were
# colour only: the change line took a line of the stage's room, and then the explanation the
# rest. Each frame after --keys must show the numbers a fresh start at the configuration the
# keys lead to shows (the change line takes the caption's free line, or the strip's place).
sd="--text '$sleeping' --d-in 8 --d-out 8"
/usr/bin/python3 "$(dirname "$0")/layout_audit_keys.py" "$bin" "$work" --present --window 1024x768 --font-scale 1.5 -- \
  "$sd --heads 4 --step 3|H,shift+H|$sd --heads 4" \
  "$sd --heads 4 --step 3|shift+D|--text '$sleeping' --d-in 8 --d-out 4 --heads 4" \
  "$sd --heads 4 --step 7|C|$sd --heads 4 --no-causal" \
  "$sd --heads 4 --step 2|T,type:the cat sat on the mat|--text 'the cat sat on the mat' --d-in 8 --d-out 8 --heads 4" \
  || fail "the numbers after live keys differ from a fresh start's"
# At 1920x1080 with text 1 the cells stopped at 4.2 text heights (80 px), where the queries'
# "-1.1" at presenter mode's 27 px digits needs 82: the queries drew no number (and no cell
# the audit could see) beside numbered keys and values. The largest cell now shows the step's
# widest number with one decimal at that size.
"$bin" --screenshot "$work/p1t1.png" --layout-report "$work/p1t1.json" --present --window 1920x1080 --font-scale 1 \
  --step 1 2>"$work/err" || fail "presenter 1920x1080 text 1, step 1: $(cat "$work/err")"
/usr/bin/python3 - "$work/p1t1.json" <<'PY' || fail "the project step's numbers at 1920x1080, text 1"
import json, sys
d = json.load(open(sys.argv[1]))
cells = [i for i in d["items"] if i["kind"] == "cell" and i["panel"] == "stage"]
tensors = {t: sum(c["tensor"] == t for c in cells) for t in ("queries", "keys", "values")}
assert tensors == {"queries": 18, "keys": 18, "values": 18}, tensors
assert all(c["value_shown"] and c["value_h"] >= 27 - 0.5 for c in cells), [(c["tensor"], c["value_h"]) for c in cells][:5]
print("1920x1080, text 1, the project step: 54 numbers of 27 px or more")
PY
# The same at 1920x1080: the softmax's map shows its numbers (every maps step's, "1.0" with the
# scores': the split gives the heads panel the room for the softmax's, which it missed by a
# pixel when it asked for the scores' alone).
"$bin" --screenshot "$work/w10b.png" --layout-report "$work/w10b.json" --present --window 1920x1080 --font-scale 1.5 \
  --step 7 --text "$ten" --heads 4 --d-out 8 --d-in 8 2>"$work/err" || fail "presenter 1920x1080, ten words: $(cat "$work/err")"
/usr/bin/python3 - "$work/w10b.json" <<'PY' || fail "the softmax's numbers at 1920x1080"
import json, sys
d = json.load(open(sys.argv[1]))
cells = [i for i in d["items"] if i["kind"] == "cell" and i["panel"] == "heatmaps"]
assert len(cells) == 100 and all(c["value_shown"] and c["value_h"] >= 0.025 * 1080 - 0.5 for c in cells), \
    (len(cells), [(c["w"], c["value_shown"]) for c in cells][:3])
print("ten words at 1920x1080: the softmax's 100 numbers of head 0, 27 px or more")
PY
# Two masks compared in the normal layout at 1024x768, text 1.25. At the mask step each map
# says which mask it shows. At the context step the maps are the weights each head's context
# used, this mask's alone (before, the two masks' maps stood there at 7 px a cell, titled
# "causal" and "h0"), and the stage, whose step it is, shows context_vec whole.
nine="the quick brown fox jumps over the lazy dog"
for step in 5 8; do
  "$bin" --screenshot "$work/cmp.png" --layout-report "$work/cmp$step.json" --window 1024x768 --font-scale 1.25 --compare-masks \
    --step $step --text "$nine" --heads 3 --d-out 9 --d-in 9 2>"$work/err" || fail "compared masks, step $step: $(cat "$work/err")"
done
/usr/bin/python3 - "$work/cmp5.json" "$work/cmp8.json" "$nine" <<'PY' || fail "the compared masks"
import json, sys
def labels(path, panel):
    return [i for i in json.load(open(path))["items"] if i["panel"] == panel and i["kind"] == "label"]
titles = [i["text"] for i in labels(sys.argv[1], "heatmaps")]
for mask in ("causal", "bidirectional"):
    assert any(t == mask or t.endswith(": " + mask) for t in titles), (mask, titles)
titles = [i["text"] for i in labels(sys.argv[2], "heatmaps")]
assert "the weights each head's context used" in titles, titles
assert not [t for t in titles if t == "bidirectional" or t.endswith(": bidirectional")], titles
stage = labels(sys.argv[2], "stage")
assert {i["token"] for i in stage if i.get("token")} == set(sys.argv[3].split()), [i["text"] for i in stage]
assert {"h0", "h1", "h2"} <= {i["text"] for i in stage}, [i["text"] for i in stage]
assert not [i["text"] for i in stage if " of 9" in i["text"] or " of 3" in i["text"]], [i["text"] for i in stage]
print("compared masks: each map names its mask at the mask step; the context step shows the weights its context used, "
      "the stage context_vec whole")
PY
# Flash mode's tiles are its maps: at a tile step of a padded batch in the normal layout at
# 1024x768, text 1.5, they take the column (before: 23 px cells, every other token named) and
# the stage above still names its tensors.
"$bin" --screenshot "$work/flash.png" --layout-report "$work/flash.json" --window 1024x768 --font-scale 1.5 --step 5 \
  --text "the quick brown fox jumps" --text "a lazy dog" --text "it sleeps" --mode flash --block 2 \
  2>"$work/err" || fail "flash's tiles: $(cat "$work/err")"
/usr/bin/python3 - "$work/flash.json" <<'PY' || fail "flash's tiles in the normal layout"
import json, sys
items = json.load(open(sys.argv[1]))["items"]
cells = [i for i in items if i["panel"] == "heatmaps" and i["kind"] == "cell"]
assert cells and min(c["w"] for c in cells) >= 30, sorted(c["w"] for c in cells)[:3]
named = {i["text"] for i in items if i["panel"] == "heatmaps" and i["kind"] == "label"}
assert set("the quick brown fox jumps".split()) <= named, named
stage = {i["text"] for i in items if i["panel"] == "stage" and i["kind"] == "label"}
assert {"tile_scores", "m", "l", "acc"} <= stage, stage
print("flash's tiles: %d cells of %.0f px or more, every row named; the stage names its tensors" % (len(cells), min(c["w"] for c in cells)))
PY
# The backward pass of the default example at 1024x768 presenter, text 1.5 (steps 12 to 22,
# out_proj_back to project_back): every stage number shown with digits of 2.5% of the height;
# a gradient's name says how its numbers are scaled (its largest brought to .1 or more); the
# projections' backward shows dW_query alone, its row blocks named by head.
for step in 12 13 14 15 16 17 18 19 20 21 22; do
  "$bin" --screenshot "$work/b$step.png" --layout-report "$work/b$step.json" --window 1024x768 --font-scale 1.5 \
    --present --backward --backend cpu --step $step 2>"$work/err" || fail "backward step $step: $(cat "$work/err")"
done
/usr/bin/python3 - "$work" <<'PY' || fail "the backward's numbers at 1024x768 presenter"
import json, sys
total = 0
for step in range(12, 23):
    items = json.load(open("%s/b%d.json" % (sys.argv[1], step)))["items"]
    cells = [i for i in items if i["panel"] == "stage" and i["kind"] == "cell"]
    assert cells and all(c["value_shown"] for c in cells), (step, [c["tensor"] for c in cells if not c["value_shown"]][:3])
    assert min(c["value_h"] for c in cells) >= 0.025 * 768 - 0.5, (step, min(c["value_h"] for c in cells))
    total += len(cells)
    labels = [i["text"] for i in items if i["panel"] == "stage" and i["kind"] == "label"]
    if step == 16:  # the softmax's backward: d attn_scores of about .06, shown times 10
        assert any(l.startswith("d_attn_scores x10") for l in labels), labels
    if step == 12:  # the gradient arriving, alone: the next step shows where it goes
        assert {c["tensor"] for c in cells} == {"d_output"} and len(cells) == 18, {c["tensor"] for c in cells}
    if step == 22:
        assert {c["tensor"] for c in cells} == {"dW_query"} and len(cells) == 36, {c["tensor"] for c in cells}
        assert {"h0", "h1"} <= set(labels), labels
print("the backward at 1024x768 presenter: %d numbers over steps 12-22, each 19 px or more" % total)
PY
# Without --screenshot the report has no frame to describe: refused in one line.
"$bin" --layout-report "$work/x.json" 2>"$work/err"
[ $? = 2 ] && grep -q -- "--layout-report needs --screenshot" "$work/err" || fail "--layout-report alone: $(cat "$work/err")"
# --keys likewise, and a name that is no key.
"$bin" --keys H 2>"$work/err"
[ $? = 2 ] && grep -q -- "--keys needs --screenshot" "$work/err" || fail "--keys alone: $(cat "$work/err")"
"$bin" --screenshot "$work/x.png" --keys "H,shift+Q2" 2>"$work/err"
[ $? = 2 ] && grep -q -- '--keys: shift+Q2 is not a key' "$work/err" || fail "--keys shift+Q2: $(cat "$work/err")"

if [ "$failures" -gt 0 ]; then
  exit 1
fi
echo "layout audit test passed"
