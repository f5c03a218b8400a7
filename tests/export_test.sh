#!/usr/bin/env bash
# Take-home scripts (issue 12): `headsplit export --python / --numpy` for several
# configurations, each script run with python3. Each must print the trace's rows (step, op,
# tensors, shape as `headsplit trace` prints them) and "all N steps match" with N the step
# count of `headsplit trace --json`. Then the check must be able to fail: a nudged value, a
# -inf turned finite and a flipped dropout-mask cell each make the script exit non-zero naming
# the step. Last, refusals: unwritable paths, no script asked for, a configuration too large.
# Usage: export_test.sh PATH/TO/headsplit PATH/TO/python3
set -u
bin=$1
python=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# 1. Both scripts of one configuration run and match the trace.
check_config() {  # name args...
  local name=$1
  shift
  if ! "$bin" trace "$@" --json "$work/$name.json" >"$work/$name.trace"; then
    fail "$name: headsplit trace $* exited non-zero"
    return
  fi
  local steps rows
  steps=$("$python" -c 'import json, sys; print(len(json.load(open(sys.argv[1]))["steps"]))' "$work/$name.json")
  # step, op, tensors and shape: the first 80 columns of the trace's table rows.
  rows=$(grep -E '^[0-9]+ ' "$work/$name.trace" | cut -c1-80 | sed 's/ *$//')
  if ! "$bin" export "$@" --python "$work/$name.torch.py" --numpy "$work/$name.numpy.py" >"$work/$name.export" 2>&1; then
    fail "$name: headsplit export $* exited non-zero: $(cat "$work/$name.export")"
    return
  fi
  local kind out
  for kind in torch numpy; do
    # -W error: any warning (an invalid escape in the docstring) fails the script.
    out=$("$python" -W error "$work/$name.$kind.py" 2>&1)
    local rc=$?
    [ "$rc" = 0 ] || fail "$name ($kind script) exited $rc: $(tail -n 3 <<<"$out")"
    grep -qE "^all $steps steps match " <<<"$out" ||
      fail "$name ($kind script) does not print 'all $steps steps match': $(tail -n 2 <<<"$out")"
    [ "$(grep -E '^[0-9]+ ' <<<"$out" | sed 's/ *$//')" = "$rows" ] ||
      fail "$name ($kind script) does not print the trace's rows: $(diff <(echo "$rows") <(grep -E '^[0-9]+ ' <<<"$out"))"
  done
  # The script's first line shows the sentence as `headsplit trace` does, character for character.
  local want got
  want=$(head -1 "$work/$name.trace" | sed -n 's/^HeadSplit trace: \(.*\)  B=.*/\1/p')
  got=$(grep -m1 '^HeadSplit take-home script (NumPy): ' <<<"$out" | sed -n 's/^[^:]*: \(.*\)  B=.*/\1/p')
  [ -n "$want" ] && [ "$got" = "$want" ] || fail "$name: the script shows the sentence as $got, the trace as $want"
  echo "ok: $name ($steps steps)"
}

check_config default
check_config journey --preset journey
check_config loop --mode loop
check_config fused --mode fused
check_config nine-words --text "the quick brown fox jumps over the lazy dog" --d-in 12 --d-out 12 --heads 3
check_config quotes --text 'a back\slash say"hi" and a"""b'  # shown as typed, in a docstring that stays valid
check_config dropout --dropout 0.3
check_config dropout-loop --dropout 0.3 --mode loop --qkv-bias
check_config dropout-fused --dropout 0.5 --mode fused --qkv-bias --scale-first --no-out-proj
check_config bidirectional --no-causal --tokens 17 --d-in 20 --d-out 20 --heads 4 --seed 3
# Issue 13: GQA / MQA in each mode, cross-attention, a padded batch, decoding, combined.
check_config gqa --tokens 5 --d-in 8 --d-out 8 --heads 4 --kv-heads 2 --qkv-bias
check_config mqa-loop --kv-heads 1 --mode loop --qkv-bias --dropout 0.2
check_config gqa-fused --tokens 5 --d-in 8 --d-out 8 --heads 4 --kv-heads 2 --mode fused --qkv-bias
check_config cross-loop --context "le chat dort sur le tapis" --d-context 4 --mode loop
check_config batch-cross --text "the cat sleeps" --text "a dog" --context "le chat" --context "un chien dort" --kv-heads 1
check_config batch-fused --text "the cat sleeps on the mat" --text "a dog" --mode fused --no-causal --dropout 0.3
check_config decode --text "the cat sleeps here" --text "a dog" --decode-from 2 --kv-heads 1 --qkv-bias
check_config decode-fused --tokens 5 --decode-from 3 --mode fused --no-out-proj --scale-first

# The dropout configurations really drop: the trace's mask holds 0s, and the scripts have them.
for name in dropout dropout-loop dropout-fused; do
  "$python" - "$work/$name.json" <<'PY' || fail "$name: the trace's dropout masks drop nothing"
import json, sys
steps = json.load(open(sys.argv[1]))["steps"]
masks = [t["data"] for s in steps if s["op"] == "dropout" for t in s["tensors"] if t["name"] == "dropout_mask"]
sys.exit(0 if masks and any(0 in m for m in masks) else 1)
PY
  grep -q '^DROPOUT_MASK = ' "$work/$name.torch.py" || fail "$name: the PyTorch script embeds no DROPOUT_MASK"
done

# 2. The check can fail. corrupt FILE HOW: change one embedded value, HOW being
#   nudge:MARKER   the first value after MARKER (a step of TRACE) moved to 0.123
#   unmask:MARKER  the first -inf after MARKER made -9.5
#   flip           the first kept cell (1) of DROPOUT_MASK made 0 (dropped)
# The script must then exit non-zero, name the step and not print "steps match".
corrupt() {
  "$python" - "$@" <<'PY'
import re, sys
path, how = sys.argv[1:]
text = open(path).read()
kind, _, marker = how.partition(":")
if kind == "nudge":
    m = re.compile(r"(?m)^ +(-?[0-9][0-9.e+-]*),").search(text, text.index(marker))
elif kind == "unmask":
    m = re.compile(r"(-inf),").search(text, text.index(marker))
else:  # flip a 1 of the DROPOUT_MASK (or of the list named after "flip:") to 0
    start = text.index("\n", text.index((marker or "DROPOUT_MASK") + " = ["))
    m = re.compile(r"\b(1),").search(text, start)
new = {"nudge": "0.123", "unmask": "-9.5", "flip": "0"}[kind]
open(path, "w").write(text[:m.start(1)] + new + text[m.end(1):])
PY
}
expect_mismatch() {  # what file step-label
  local what=$1 file=$2 label=$3
  "$python" "$file" >"$work/out" 2>"$work/err"
  local rc=$?
  [ "$rc" != 0 ] || fail "$what: the corrupted script exited 0"
  grep -qF "MISMATCH: step $label" "$work/err" ||
    fail "$what: the corrupted script does not name step $label: $(cat "$work/err")"
  grep -q "steps match" "$work/out" && fail "$what: the corrupted script still prints 'steps match'"
  echo "ok: $what fails: $(tr -d '\n' <"$work/err")"
}
for kind in torch numpy; do
  cp "$work/default.$kind.py" "$work/nudged.$kind.py"
  corrupt "$work/nudged.$kind.py" "nudge:    # step 7: softmax"
  expect_mismatch "a softmax weight nudged ($kind)" "$work/nudged.$kind.py" "7 (softmax)"
  cp "$work/default.$kind.py" "$work/unmasked.$kind.py"
  corrupt "$work/unmasked.$kind.py" "unmask:    # step 5: mask"
  expect_mismatch "a masked -inf made finite ($kind)" "$work/unmasked.$kind.py" "5 (mask)"
  cp "$work/dropout.$kind.py" "$work/flipped.$kind.py"
  corrupt "$work/flipped.$kind.py" flip
  expect_mismatch "a dropout mask cell flipped ($kind)" "$work/flipped.$kind.py" "8 (dropout)"
  # Issue 13: a padded key let through in the trace, and a padding flag lost in the input.
  cp "$work/batch-cross.$kind.py" "$work/unpadded.$kind.py"
  corrupt "$work/unpadded.$kind.py" "unmask:    # step 6: pad_mask"
  expect_mismatch "a padded key's -inf made finite ($kind)" "$work/unpadded.$kind.py" "6 (pad_mask)"
  cp "$work/batch-cross.$kind.py" "$work/padflag.$kind.py"
  corrupt "$work/padflag.$kind.py" "flip:KEY_PADDING_MASK"
  expect_mismatch "a key padding flag flipped ($kind)" "$work/padflag.$kind.py" "0 (input)"
done

# 3. Refusals: one line on stderr naming the problem, the exit code, no file left behind.
check_refused() {  # code substring args...
  local code=$1 want=$2
  shift 2
  "$bin" export "$@" >"$work/stdout" 2>"$work/stderr"
  local rc=$?
  [ "$rc" = "$code" ] || fail "export $* exited $rc, expected $code"
  [ "$(wc -l <"$work/stderr")" = 1 ] || fail "export $* wrote $(wc -l <"$work/stderr") lines to stderr: $(cat "$work/stderr")"
  grep -qF -- "$want" "$work/stderr" || fail "export $*: stderr does not say '$want': $(cat "$work/stderr")"
  echo "ok: refused: $(cat "$work/stderr")"
}
check_refused 1 "/proc/x/y.py" --python /proc/x/y.py
check_refused 1 "$work/missing/take_home.py" --numpy "$work/missing/take_home.py"
check_refused 1 "$work/missing/take_home.py" --python "$work/ok.py" --numpy "$work/missing/take_home.py"
[ -e "$work/ok.py" ] && fail "export wrote --python although --numpy was refused"
check_refused 2 "--python FILE or --numpy FILE"
check_refused 2 "at most 250000 values" --python "$work/big.py" --preset gpt2-small
check_refused 2 "at most 250000 values" --numpy "$work/big.py" --preset gpt3
check_refused 2 "cannot be split into 4 heads" --python "$work/bad.py" --heads 4
leftovers=$(find "$work" -name 'big.py*' -o -name 'bad.py*' -o -name 'ok.py*' -o -name '*.tmp.*')
[ -z "$leftovers" ] || fail "refused exports left files: $leftovers"

if [ "$failures" -gt 0 ]; then
  echo "$failures failure(s)"
  exit 1
fi
echo "export: all checks passed"
