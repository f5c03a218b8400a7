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
grep -q "GEMM limit: 0.0010 MFLOP necessary (Q, K, V, out, half of QK^T and P@V), SGEMM .* GFLOP/s (the projections, this run); forward at loop .*% split .*% fused .*% flash .*% of it" "$work/out" ||
  { echo "FAIL: no GEMM limit line under the table"; exit 1; }
/usr/bin/python3 - "$work/bench.json" <<'PY'
import json, math, sys
d = json.load(open(sys.argv[1]))
assert d["format"] == "headsplit-bench" and d["version"] == 1, d.get("format")
rows = d["results"]
want = {(b, s, m) for b in ("cpu", "gl") for s in ("projections", "forward", "forward_traced")
        for m in ("loop", "split", "fused", "flash")}
have = {(r["backend"], r["stage"], r["mode"]) for r in rows}
assert have == want, sorted(want - have)
for r in rows:
    assert r["preset"] == "cat-sleeps" and r["tokens"] == 3, r
    assert 0 < r["min_ms"] <= r["median_ms"] <= r["max_ms"], r
    # flash at T = 3: blocks of 2 (the default), 3 of the 2 x 2 tiles under the causal mask,
    # each scores and p @ V: 3 projections + 2 x 3 + the output projection
    assert r["matmuls"] == {"projections": {"loop": 6, "split": 3, "fused": 1, "flash": 3},
                            "forward": {"loop": 11, "split": 6, "fused": 4, "flash": 10},
                            "forward_traced": {"loop": 11, "split": 6, "fused": 4, "flash": 10}}[r["stage"]][r["mode"]], r
med = {(r["backend"], r["stage"], r["mode"]): r["median_ms"] for r in rows}
assert len(d["ratios"]) == 6, d["ratios"]
for q in d["ratios"]:
    k = (q["backend"], q["stage"])
    assert math.isclose(q["loop_over_split"], med[k + ("loop",)] / med[k + ("split",)], rel_tol=1e-9), q
    assert math.isclose(q["split_over_fused"], med[k + ("split",)] / med[k + ("fused",)], rel_tol=1e-9), q
    assert math.isclose(q["flash_over_split"], med[k + ("flash",)] / med[k + ("split",)], rel_tol=1e-9), q
# The GEMM limit. Necessary FLOPs by hand for T = 3, D = 6, 2 heads of 3, causal: four
# projections 4 * 2*3*6*6 = 864, QK^T and P@V 2 * 2*2*3*3*3 = 216, half of it kept: 972.
for r in rows:
    assert math.isclose(r["necessary_gflop"], 972e-9, rel_tol=1e-12), r
assert {l["backend"] for l in d["limits"]} == {"cpu", "gl"}, d["limits"]
for l in d["limits"]:
    sgemm = max(r["gflops"] for r in rows if r["backend"] == l["backend"] and r["stage"] == "projections")
    assert math.isclose(l["sgemm_gflops"], sgemm, rel_tol=1e-9), l
    for m, f in l["forward_fraction"].items():
        fwd = med[(l["backend"], "forward", m)]
        assert math.isclose(f, 972 / (fwd * 1e6) / sgemm, rel_tol=1e-9), (l, m)
print("bench: %d results, %d ratios, %d limits, all consistent" % (len(rows), len(d["ratios"]), len(d["limits"])))
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
grep -q "^forward_traced  flash  skipped: flash mode never holds" "$work/out" || {
  echo "FAIL: bench --dropout did not say why flash was skipped: $(grep flash "$work/out")"
  exit 1
}

# A list of token counts and a list of modes: one table per T, each with the modes asked for.
"$bin" bench --preset gpt2-small --tokens 8,24 --modes flash,split --block 4 --backend cpu --repeat 5 \
  --json "$work/list.json" >"$work/out" 2>"$work/err" || {
  echo "FAIL: bench --tokens 8,24 exited $?: $(cat "$work/err")"
  exit 1
}
/usr/bin/python3 - "$work/list.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
have = sorted((r["tokens"], r["mode"], r["stage"]) for r in d["results"])
want = sorted((t, m, s) for t in (8, 24) for m in ("split", "flash") for s in ("projections", "forward", "forward_traced"))
assert have == want, have
# flash at T = 24 in blocks of 4: 6 query blocks, causal: 21 tiles of 2 matmuls, + 3 + 1
for r in d["results"]:
    if r["mode"] == "flash" and r["stage"] == "forward":
        assert r["matmuls"] == {8: 3 * 2 + 4, 24: 21 * 2 + 4}[r["tokens"]], r
assert {q["tokens"] for q in d["ratios"] if "flash_over_split" in q} == {8, 24}, d["ratios"]
print("bench --tokens 8,24 --modes flash,split: %d results" % len(d["results"]))
PY
[ $? = 0 ] || exit 1
out=$("$bin" bench --preset gpt2-small --modes split,sideways 2>&1)
[ $? = 2 ] && grep -q "\"sideways\" is not a mode" <<<"$out" || { echo "FAIL: bench --modes sideways: $out"; exit 1; }
# --backward: the forward stages time forward and backward together; flash holds less.
out=$("$bin" bench --preset gpt2-small --tokens 16 --backward --backend cpu --modes split,flash --repeat 5 2>&1) ||
  { echo "FAIL: bench --backward: $out"; exit 1; }
grep -q "on cpu, forward + backward" <<<"$out" && grep -q "x3 with their gradients" <<<"$out" &&
  grep -qE "^backend memory: split [0-9.]+ [KM]iB, flash" <<<"$out" || { echo "FAIL: bench --backward said: $out"; exit 1; }
echo "bench: token lists, mode lists refusals and --backward"
