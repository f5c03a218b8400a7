#!/usr/bin/env bash
# PyTorch oracle: exports traces of many configurations with `headsplit trace --json` and
# has tests/oracle.py recompute every step in torch. Then proves the oracle can fail: a
# trace with one value nudged by 1e-3, and one with a step removed, must be rejected.
# Usage: oracle_test.sh PATH/TO/headsplit PATH/TO/python3 BACKEND
set -u
bin=$1
python=$2
backend=$3
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

configs=(
  ""
  "--mode loop"
  "--mode fused"
  "--no-causal"
  "--scale-first"
  "--dropout 0.3"
  "--dropout 0.3 --mode loop"
  "--dropout 0.3 --mode fused"
  "--qkv-bias --mode fused"
  "--qkv-bias --mode loop --scale-first"
  "--no-out-proj"
  "--preset journey"
  "--preset journey --mode loop"
  "--d-in 5 --d-out 12 --heads 12"
  "--heads 1"
  "--text a"
  "--text a --mode fused --no-causal"
  "--tokens 17 --d-in 20 --d-out 20 --heads 4 --seed 3"
  "--tokens 65 --d-in 33 --d-out 17 --heads 17 --mode loop"
  "--preset gpt2-small --tokens 17"
)
files=()
i=0
for cfg in "${configs[@]}"; do
  f="$work/trace_$i.json"
  # shellcheck disable=SC2086
  if ! "$bin" trace --backend "$backend" $cfg --json "$f" >/dev/null; then
    echo "FAIL: headsplit trace --backend $backend $cfg"
    exit 1
  fi
  files+=("$f")
  i=$((i + 1))
done
"$python" "$here/oracle.py" "${files[@]}" || exit 1

# Negative controls: the oracle must reject a corrupted trace.
"$python" - "$work/trace_0.json" "$work/nudged.json" "$work/missing.json" "$work/forward.json" "$work/unlinked.json" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
nudged = json.loads(json.dumps(doc))
nudged["steps"][7]["tensors"][0]["data"][4] += 1e-3   # softmax, one weight
json.dump(nudged, open(sys.argv[2], "w"))
missing = json.loads(json.dumps(doc))
del missing["steps"][6]                                 # the scale step
json.dump(missing, open(sys.argv[3], "w"))
forward = json.loads(json.dumps(doc))
forward["steps"][2]["tensors"][0]["from"] = [{"step": 5, "tensor": "attn_scores"}]  # a link ahead
json.dump(forward, open(sys.argv[4], "w"))
unlinked = json.loads(json.dumps(doc))
unlinked["steps"][4]["tensors"][0]["from"] = []          # scores made from nothing
json.dump(unlinked, open(sys.argv[5], "w"))
PY
for bad in nudged missing forward unlinked; do
  if "$python" "$here/oracle.py" "$work/$bad.json" >/dev/null 2>&1; then
    echo "FAIL: the oracle accepted the $bad trace"
    exit 1
  fi
done
echo "oracle: ${#files[@]} traces match PyTorch; corrupted traces are rejected"
