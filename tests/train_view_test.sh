#!/usr/bin/env bash
# The Train view (N, --tab train) as the back row sees it: at 1024x768 presenter, text 1.5,
# after 600 steps of the induction task (alone, and beside the same run with a head ablated
# half-way), and at 1920x1080 after 150. Every label whole, inside
# the window and apart from the others, at least 2.5% of the window's height; each head's map
# named with its score; the loss's cliff marked; layer 1's heads at their job (>= 0.8).
# Usage: train_view_test.sh PATH/TO/headsplit PATH/TO/python3 [quick]   (under xvfb-run)
#   quick: 30 and 10 steps (the sanitized build's), the same checks but the cliff and the scores
set -u
bin=$1
python=$2
long=600 short=150
[ "${3:-}" = quick ] && long=30 short=10
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

shot() {  # name steps WxH [more options]
  local name=$1 steps=$2 size=$3
  shift 3
  "$bin" --tab train --train-steps "$steps" --window "$size" --font-scale 1.5 "$@" \
    --screenshot "$work/$name.png" --layout-report "$work/$name.json" 2>"$work/stderr" ||
    fail "$name: exited $?: $(cat "$work/stderr")"
}
shot projector $long 1024x768 --present
shot wide $short 1920x1080
shot ablate $long 1024x768 --present --train-compare ablate

"$python" - "$work/projector.json" "$work/wide.json" "$work/ablate.json" "$long" "$short" <<'PY' || exit 1
import json, re, sys
long, short = int(sys.argv[4]), int(sys.argv[5])
for path, steps in ((sys.argv[1], long), (sys.argv[2], short), (sys.argv[3], long)):
    d = json.load(open(path))
    W, H = d["window"]
    items = [i for i in d["items"] if i["panel"] == "Train"]
    texts = [i["text"] for i in items]
    assert not d["cut"], (path, d["cut"])
    for i in items:
        assert i["x"] >= 0 and i["y"] >= 0 and i["x"] + i["w"] <= W + 0.5 and i["y"] + i["h"] <= H + 0.5, (path, i)
        assert i["h"] >= 0.025 * H, (path, "a label under 2.5% of the height", i)
    for a in range(len(items)):
        for b in range(a + 1, len(items)):
            p, q = items[a], items[b]
            apart = p["x"] + p["w"] <= q["x"] or q["x"] + q["w"] <= p["x"] or p["y"] + p["h"] <= q["y"] or q["y"] + q["h"] <= p["y"]
            assert apart, (path, "labels overlap", p["text"], q["text"])
    assert any(t.startswith("Train: induction, 2 layers x 2 heads. Step %d of 600" % steps) for t in texts), (path, texts)
    scores = {}
    for t in texts:
        m = re.match(r"^(L\dH\d) +(?:score )?([01]\.\d\d)$", t)
        if m:
            scores[m.group(1)] = float(m.group(2))
    assert sorted(scores) == ["L0H0", "L0H1", "L1H0", "L1H1"], (path, texts)
    assert sum(t.startswith("grad") for t in texts) == 4, (path, texts)
    if steps >= 150:
        assert any(re.match(r"^cliff: step \d+$", t) for t in texts), (path, "no cliff marked", texts)
    if steps == 600:
        assert max(scores["L1H0"], scores["L1H1"]) >= 0.8, (path, scores)
    if "ablate" in path:  # the experiment's two runs named on the loss chart
        assert "all heads" in texts and "L1H0 ablated" in texts, (path, texts)
print("ok: the Train view at 1024x768 presenter and 1920x1080, text 1.5")
PY
"$bin" --train-steps 5 --screenshot "$work/x.png" 2>"$work/stderr" && fail "--train-steps without --tab train ran"
grep -qF -- "--train-steps needs --tab train" "$work/stderr" || fail "the refusal: $(cat "$work/stderr")"
"$bin" --tab train --train-compare lr --screenshot "$work/x.png" 2>"$work/stderr" && fail "--train-compare lr ran"
grep -qF -- "--train-compare lr is not an experiment; use scale, init, heads or ablate" "$work/stderr" ||
  fail "the refusal: $(cat "$work/stderr")"
echo "all Train view checks passed"
