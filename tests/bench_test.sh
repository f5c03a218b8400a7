#!/usr/bin/env bash
# `headsplit bench`: its JSON parses and holds every mode x stage x backend it claims, and
# its ratios are the ratios of the medians it reports. (Timings are not asserted.)
# Usage: bench_test.sh PATH/TO/headsplit
set -u
bin=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$bin" bench --preset cat-sleeps --backend all --repeat 5 --json "$work/bench.json" >"$work/out" 2>"$work/err" || {
  echo "FAIL: bench exited $?: $(cat "$work/err")"
  exit 1
}
grep -q "ratios: projections loop/split" "$work/out" || { echo "FAIL: no ratios in the table"; exit 1; }
/usr/bin/python3 - "$work/bench.json" <<'PY'
import json, math, sys
d = json.load(open(sys.argv[1]))
assert d["format"] == "headsplit-bench" and d["version"] == 1, d.get("format")
rows = d["results"]
want = {(b, s, m) for b in ("cpu", "gl") for s in ("projections", "forward", "forward_traced")
        for m in ("loop", "split", "fused")}
have = {(r["backend"], r["stage"], r["mode"]) for r in rows}
assert have == want, sorted(want - have)
for r in rows:
    assert r["preset"] == "cat-sleeps" and r["tokens"] == 3, r
    assert 0 < r["min_ms"] <= r["median_ms"] <= r["max_ms"], r
    assert r["matmuls"] == {"projections": {"loop": 6, "split": 3, "fused": 1},
                            "forward": {"loop": 11, "split": 6, "fused": 4},
                            "forward_traced": {"loop": 11, "split": 6, "fused": 4}}[r["stage"]][r["mode"]], r
med = {(r["backend"], r["stage"], r["mode"]): r["median_ms"] for r in rows}
assert len(d["ratios"]) == 6, d["ratios"]
for q in d["ratios"]:
    k = (q["backend"], q["stage"])
    assert math.isclose(q["loop_over_split"], med[k + ("loop",)] / med[k + ("split",)], rel_tol=1e-9), q
    assert math.isclose(q["split_over_fused"], med[k + ("split",)] / med[k + ("fused",)], rel_tol=1e-9), q
print("bench: %d results, %d ratios, all consistent" % (len(rows), len(d["ratios"])))
PY
[ $? = 0 ] || exit 1

# With dropout: each runner's first (warm-up) run records nothing, where the dropout mask
# used to be left empty (a crash on the CPU, wrong numbers on GL). The same counts come out.
"$bin" bench --preset cat-sleeps --dropout 0.1 --backend all --repeat 5 --json "$work/drop.json" >"$work/out" 2>"$work/err" || {
  echo "FAIL: bench --dropout 0.1 exited $?: $(cat "$work/err")"
  exit 1
}
/usr/bin/python3 - "$work/drop.json" <<'PY'
import json, sys
rows = json.load(open(sys.argv[1]))["results"]
assert len(rows) == 18, len(rows)
for r in rows:
    assert r["median_ms"] > 0 and r["matmuls"] in (1, 3, 4, 6, 11), r
print("bench --dropout 0.1: %d results" % len(rows))
PY
