#!/usr/bin/env bash
# `headsplit train` on the command line: a short run that learns, its JSON log, the same
# seed giving the same log; bad values refused with one line on stderr, exit 2, no file.
# Usage: train_cli_test.sh PATH/TO/headsplit PATH/TO/python3
set -u
bin=$1
python=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# 1. Copy for 120 steps: the log's lines, then a JSON log that says it learned.
out=$("$bin" train --task copy --steps 120 --log-every 40 --json "$work/log.json" 2>"$work/stderr") ||
  fail "train --task copy exited $?: $(cat "$work/stderr")"
grep -qE '^train copy: 1 layer x 2 heads, d_model 32, vocab 11, 17 tokens, batch 64' <<<"$out" || fail "no header: $out"
[ "$(grep -cE '^ +[0-9]+  loss [0-9.]+  accuracy [0-9.]+  L0H0 [0-9.]+  L0H1 [0-9.]+$' <<<"$out")" = 4 ] ||
  fail "expected log lines at steps 1, 40, 80, 120: $out"
grep -qE '^120 steps in [0-9.]+ s of training \([0-9.]+ steps/s\)' <<<"$out" || fail "no speed line: $out"
"$python" - "$work/log.json" <<'PY' || fail "the JSON log"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["task"] == "copy" and d["steps"] == 120 and d["layers"] == 1, d
log = d["log"]
assert [e["step"] for e in log] == [1, 40, 80, 120], [e["step"] for e in log]
assert set(log[-1]["scores"]) == {"L0H0", "L0H1"}, log[-1]
assert all(0 <= v <= 1 for e in log for v in e["scores"].values())
assert log[0]["loss"] > 2 and log[-1]["loss"] < 0.1, (log[0]["loss"], log[-1]["loss"])
assert max(log[-1]["scores"].values()) >= 0.8, log[-1]["scores"]
assert all(v > 0 for v in log[-1]["grad_norms"].values()), log[-1]
PY
# 2. The same seed gives the same losses, on the CPU and in another mode.
"$bin" train --task copy --steps 40 --log-every 10 --json "$work/a.json" >/dev/null || fail "run a"
"$bin" train --task copy --steps 40 --log-every 10 --json "$work/b.json" --mode loop >/dev/null || fail "run b"
"$python" - "$work/a.json" "$work/b.json" <<'PY' || fail "the same seed's losses differ"
import json, sys
a, b = (json.load(open(p))["log"] for p in sys.argv[1:3])
assert len(a) == len(b) == 5
for x, y in zip(a, b):
    assert abs(x["loss"] - y["loss"]) <= 1e-3 * max(1, abs(y["loss"])), (x["loss"], y["loss"])
PY

# 2b. An experiment side by side: the three scales on one seed, a table row each; identical
#     heads stay alike (a spread of 0).
out=$("$bin" train --task copy --steps 30 --compare scale --json "$work/cmp.json") || fail "--compare scale exited $?"
for run in "scale sqrt" "scale head_dim" "scale none"; do
  grep -qE "^$run +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ " <<<"$out" || fail "no row for $run: $out"
done
"$python" -c "import json,sys; d=json.load(open(sys.argv[1])); assert [r['scale'] for r in d['runs']] == ['sqrt', 'head_dim', 'none'], d.keys()" "$work/cmp.json" ||
  fail "the comparison's JSON"
out=$("$bin" train --task copy --steps 30 --compare init) || fail "--compare init exited $?"
grep -qE '^identical heads .* 0[.]000$' <<<"$out" || fail "identical heads drifted apart: $out"
grep -qE '^independent heads .* 0[.]0[0-9][1-9]|^independent heads .* 0[.][1-9]' <<<"$out" || fail "independent heads are alike: $out"

out=$("$bin" train --task copy --steps 60 --compare ablate) || fail "--compare ablate exited $?"
grep -qE '^L0H0 ablated at step 31: loss [0-9.]+ before, [0-9.]+ at worst in the 50 steps after, [0-9.]+ at the end$' <<<"$out" ||
  fail "no ablation line: $out"

# 3. Bad values: one line, exit 2, no log written.
refused=0
check_refused() {  # substring args...
  local want=$1
  shift
  rm -f "$work/out.json"
  "$bin" train --json "$work/out.json" "$@" >"$work/stdout" 2>"$work/stderr"
  local rc=$?
  [ "$rc" = 2 ] || fail "'$*' exited $rc, expected 2"
  [ "$(wc -l <"$work/stderr")" = 1 ] || fail "'$*' wrote $(wc -l <"$work/stderr") lines: $(cat "$work/stderr")"
  grep -qF -- "$want" "$work/stderr" || fail "'$*' said '$(cat "$work/stderr")', expected '$want'"
  [ ! -e "$work/out.json" ] || fail "'$*' left a log behind"
  refused=$((refused + 1))
}
check_refused "--lr 0: a learning rate of 0 changes nothing" --lr 0
check_refused "--lr -0.1: a learning rate is a number above 0" --lr -0.1
check_refused "--lr nan" --lr nan
check_refused "--lr" --lr inf
check_refused "--task copyy: no such task; the tasks are copy, reverse, induction, sort" --task copyy
check_refused "--heads 3 does not divide --d-model 32" --heads 3
check_refused "--steps 0 is out of range; use a whole number from 1 to 1000000" --steps 0
check_refused "--mode flash: training runs loop, split or fused" --mode flash
check_refused "over the memory budget" --batch 4096 --d-model 1024 --task induction
check_refused "--backend tpu is not a backend" --backend tpu
check_refused "--scale 2 is not a scale; use sqrt (1/sqrt(head_dim)), head_dim (1/head_dim) or none" --scale 2
check_refused "--compare lr is not an experiment; use scale, init, heads or ablate" --compare lr
rm -f "$work/out.json"
"$bin" train --steps 1 --json /nonexistent/folder/log.json >/dev/null 2>"$work/stderr"
[ $? != 0 ] && [ "$(wc -l <"$work/stderr")" = 1 ] && grep -qF "/nonexistent/folder/log.json" "$work/stderr" ||
  fail "an unwritable log: $(cat "$work/stderr")"

if [ "$failures" -gt 0 ]; then
  echo "$failures train check(s) failed"
  exit 1
fi
echo "all train checks passed ($refused bad invocations refused)"
