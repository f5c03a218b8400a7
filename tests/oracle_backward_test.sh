#!/usr/bin/env bash
# The backward pass against PyTorch autograd: traces of many modes and variants with
# `headsplit trace --backward --json` on one backend, every gradient checked by
# tests/oracle_backward.py (one process for them all). Then proves the oracle can fail: a
# grouped, causal, padded trace must pass, and each plausible wrong backward written into its
# values (no row dot product in the softmax's, a mask that lets gradient through, d keys not
# summed over a group, the view's gradient read without the copy) must be caught. Last, what
# --backward refuses.
# Usage: oracle_backward_test.sh PATH/TO/headsplit PATH/TO/python3 BACKEND
set -u
bin=$1
python=$2
backend=$3
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

configs=(
  "--mode split"
  "--mode fused"
  "--mode loop"
  "--no-causal"
  "--scale-first"
  "--mode loop --scale-first --no-causal"
  "--heads 1"
  "--d-in 5 --d-out 12 --heads 12"
  "--heads 4 --d-out 8 --kv-heads 2"
  "--heads 4 --d-out 8 --kv-heads 1 --mode fused --qkv-bias"
  "--heads 4 --d-out 8 --kv-heads 1 --mode loop --qkv-bias"
  "--context 'le chat noir dort bien'"
  "--context 'le chat noir dort bien' --mode loop --heads 3 --d-out 6 --kv-heads 1"
  "--context 'le chat' --context 'un chien noir' --text 'the cat' --text 'a black dog' --causal"
  "--text 'the cat sleeps' --text 'a dog' --text 'birds sing loudly today'"
  "--text 'the cat sleeps' --text 'a dog' --mode loop"
  "--text 'the cat sleeps' --text 'a dog' --mode fused --scale-first"
  "--dropout 0.3 --seed 5"
  "--dropout 0.3 --seed 5 --mode loop"
  "--dropout 0.3 --seed 5 --mode fused"
  "--qkv-bias --no-out-proj"
  "--qkv-bias --no-out-proj --mode loop"
  "--dout ones --mode fused"
  "--preset journey"
  "--preset tiny-trained --layer 1"
  "--tokens 24 --d-in 32 --d-out 64 --heads 4"
  "--mode flash --text 'the cat sleeps on a mat'"
  "--mode flash --no-causal --block 3 --text 'a b c d e f g'"
  "--mode flash --heads 4 --d-out 8 --kv-heads 2 --text 'the cat sleeps' --text 'a dog' --qkv-bias"
  "--mode flash --context 'le chat noir dort' --heads 3 --kv-heads 1 --scale-first"
  "--mode flash --tokens 40 --d-in 16 --d-out 32 --heads 4 --block 8 --no-out-proj"
)
files=()
i=0
for cfg in "${configs[@]}"; do
  i=$((i + 1))
  eval "\"$bin\" trace --backward --backend $backend $cfg --json \"$work/t$i.json\"" > /dev/null 2> "$work/err" ||
    fail "trace --backward $cfg: $(cat "$work/err")"
  files+=("$work/t$i.json")
done
"$python" "$here/oracle_backward.py" "${files[@]}" || fail "a gradient differs from autograd's"

# The oracle can fail: four plausible wrong backwards on one trace.
"$bin" trace --backward --backend "$backend" --heads 4 --d-out 8 --kv-heads 2 --text "the cat sleeps" --text "a dog" \
  --json "$work/self.json" > /dev/null || fail "the self-test trace"
out=$("$python" "$here/oracle_backward.py" --self-test "$work/self.json") || fail "the oracle's self-test: $out"
echo "$out"
[ "$(grep -c ' caught (' <<< "$out")" = 4 ] || fail "expected 4 wrong backwards caught: $out"

# Refused in one line, naming what works.
refused() {
  local want=$1; shift
  if "$bin" "$@" > "$work/out" 2> "$work/err"; then fail "accepted: $*"; fi
  [ "$(wc -l < "$work/err")" = 1 ] || fail "not one line for $*: $(cat "$work/err")"
  grep -q -- "$want" "$work/err" || fail "$*: expected '$want' in: $(cat "$work/err")"
}
refused "drop --backward or --decode-from" trace --backward --decode-from 2 --backend "$backend"
refused "add --backward" trace --dout ones
refused "use seeded or ones" trace --backward --dout twos
refused "trace --backward computes" export --backward --python "$work/x.py"
refused "trace --backward computes" handout --backward --out "$work/h"
[ ! -e "$work/x.py" ] && [ ! -e "$work/h" ] || fail "a refused command wrote something"
echo "oracle_backward ($backend): ${#configs[@]} configurations equal autograd; 4 wrong backwards caught"
