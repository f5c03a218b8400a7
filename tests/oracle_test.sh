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
  # grouped-query and multi-query attention
  "--kv-heads 1"
  "--tokens 9 --d-in 12 --d-out 12 --heads 6 --kv-heads 2"
  "--tokens 9 --d-in 12 --d-out 12 --heads 6 --kv-heads 3 --mode loop --qkv-bias"
  "--tokens 9 --d-in 12 --d-out 12 --heads 6 --kv-heads 2 --mode fused --qkv-bias --scale-first"
  "--tokens 5 --d-in 8 --d-out 8 --heads 4 --kv-heads 2 --dropout 0.25 --mode loop"
  # cross-attention
  "--context \"le chat dort bien\""
  "--context-tokens 7 --d-context 10 --heads 3 --mode loop"
  "--context \"a b c\" --causal --kv-heads 1"
  "--context-tokens 5 --d-context 4 --tokens 4 --d-in 8 --d-out 8 --heads 4 --kv-heads 2 --qkv-bias --dropout 0.2"
  # padded batches
  "--text \"the cat sleeps\" --text \"a dog\""
  "--text \"the cat sleeps on the mat\" --text \"a dog\" --text \"birds sing\" --mode loop --qkv-bias"
  "--text \"the cat sleeps\" --text \"a dog\" --mode fused --qkv-bias --no-causal"
  "--text \"one two three four\" --text \"five\" --scale-first --kv-heads 1"
  "--text \"x y z\" --text \"p q\" --dropout 0.3 --qkv-bias"
  "--text \"the cat sleeps\" --text \"a dog\" --context \"le chat dort\" --context \"un chien\" --qkv-bias"
  "--text \"the cat sleeps\" --text \"a dog\" --context \"le chat\" --d-context 6 --kv-heads 1 --mode loop"
  # decoding with a KV cache
  "--decode-from 1"
  "--tokens 6 --decode-from 3 --d-in 8 --d-out 8 --heads 4 --kv-heads 2"
  "--tokens 5 --decode-from 2 --mode fused --qkv-bias --kv-heads 1 --scale-first"
  "--text \"the cat sleeps today\" --text \"a dog\" --decode-from 1 --qkv-bias"
  "--tokens 4 --decode-from 2 --no-out-proj --heads 3"
  "--preset gpt2-small --tokens 9 --kv-heads 4 --decode-from 5"
  # more combinations
  "--preset gpt2-small --tokens 12 --kv-heads 4 --mode fused --qkv-bias"
  "--preset gpt2-small --tokens 6 --kv-heads 1 --mode loop"
  "--text \"a b c d\" --text \"e f\" --text \"g h i\" --kv-heads 2 --heads 6 --d-out 12 --d-in 5 --decode-from 2 --mode fused"
  "--text \"a b c\" --text \"d e f g h\" --context \"u v w x\" --kv-heads 1 --scale-first --no-out-proj"
  "--text \"a b c\" --text \"d\" --context \"u v w\" --causal --qkv-bias --mode loop"
  "--text \"one two three\" --text \"four\" --mode loop --kv-heads 1 --no-causal --dropout 0.1"
  "--text \"one two three four five\" --text \"six seven\" --no-out-proj --mode fused --kv-heads 1"
  "--context-tokens 9 --d-context 16 --tokens 2 --d-in 12 --d-out 12 --heads 4 --kv-heads 2 --mode loop --dropout 0.2 --scale-first"
  "--tokens 7 --decode-from 6 --d-in 8 --d-out 16 --heads 8 --kv-heads 4 --qkv-bias"
  # flash: tiles of 1, a partial last block, one tile, the default block (2 x 2 tiles at
  # T = 3), no mask, GQA read in place, padding, cross-attention, a long pass
  "--mode flash --block 1"
  "--mode flash --block 2 --qkv-bias --scale-first"
  "--mode flash --block 3"
  "--mode flash"
  "--tokens 11 --d-in 12 --d-out 12 --heads 4 --mode flash --block 4 --no-causal"
  "--tokens 13 --d-in 12 --d-out 12 --heads 6 --kv-heads 2 --mode flash --block 5"
  "--text \"the cat sleeps on the mat\" --text \"a dog\" --mode flash --block 2 --qkv-bias"
  "--text \"the cat sleeps\" --text \"a dog\" --context \"le chat dort bien\" --mode flash --block 2 --kv-heads 1"
  "--preset gpt2-small --tokens 40 --mode flash --block 16 --no-out-proj"
)
files=()
i=0
for cfg in "${configs[@]}"; do
  f="$work/trace_$i.json"
  if ! eval "\"\$bin\" trace --backend \"\$backend\" $cfg --json \"\$f\"" >/dev/null; then
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
# ... and corrupted traces of the variants: a repeated key/value head that is not a copy, a
# padded key let through, a padding mask that does not follow the sentences, a decoding
# round's cache row and the assembled output nudged.
"$python" - "$work" <<'PY'
import json, sys
work = sys.argv[1]
def load(i): return json.load(open(f"{work}/trace_{i}.json"))
def first(doc, op): return next(s for s in doc["steps"] if s["op"] == op)
def find(predicate):
    for i in range(100):
        try: doc = load(i)
        except OSError: break
        if predicate(doc): return doc
    raise SystemExit("no trace for a negative control")
cfg = lambda d: d["config"]
gqa = find(lambda d: cfg(d)["kv_heads"] < cfg(d)["heads"] and not cfg(d)["decode_from"])
first(gqa, "repeat_kv")["tensors"][0]["data"][-1] += 1e-3
json.dump(gqa, open(f"{work}/gqa.json", "w"))
pad = find(lambda d: "key_padding_mask" in d["inputs"] and not cfg(d)["decode_from"] and cfg(d)["mode"] == "split")
t = first(pad, "pad_mask")["tensors"][0]
t["data"][t["data"].index(None, len(t["data"]) // 2)] = 0.0   # a -inf of the second sentence made finite
json.dump(pad, open(f"{work}/pad.json", "w"))
pad2 = find(lambda d: "key_padding_mask" in d["inputs"])
pad2["inputs"]["key_padding_mask"]["data"] = [False] * len(pad2["inputs"]["key_padding_mask"]["data"])
json.dump(pad2, open(f"{work}/padmask.json", "w"))
dec = find(lambda d: cfg(d)["decode_from"] > 0)
appends = [s for s in dec["steps"] if s["op"] == "cache_append"]
appends[-1]["tensors"][0]["data"][-1] += 1e-3
json.dump(dec, open(f"{work}/cache.json", "w"))
dec = find(lambda d: cfg(d)["decode_from"] > 0)
dec["steps"][-1]["tensors"][0]["data"][0] += 1e-3
json.dump(dec, open(f"{work}/assembled.json", "w"))
# flash: a running sum nudged, and a skipped tile dropped from the step list
fl = find(lambda d: cfg(d)["mode"] == "flash" and d["flash"]["tiles"] > 2)
tiles = [s for s in fl["steps"] if s["op"] == "tile"]
next(t for t in tiles[1]["tensors"] if t["name"] == "l")["data"][0] += 1e-3
json.dump(fl, open(f"{work}/flash_l.json", "w"))
fl = find(lambda d: cfg(d)["mode"] == "flash" and d["flash"]["tiles"] > 2)
fl["steps"] = [s for s in fl["steps"] if not (s["op"] == "tile" and s["tile"]["key_block"] == 1)]
for i, s in enumerate(fl["steps"]): s["index"] = i
json.dump(fl, open(f"{work}/flash_tile.json", "w"))
# axes, rows and keys: the transpose's queries named as if not transposed, a decoding round's
# token one position late, a tile's keys one short
doc = load(0)
first(doc, "transpose")["tensors"][0]["axes"] = ["batch", "token", "head", "feature"]
json.dump(doc, open(f"{work}/axes.json", "w"))
dec = find(lambda d: cfg(d)["decode_from"] > 0)
next(s for s in dec["steps"] if s.get("round") == 1)["rows"][0] += 1
json.dump(dec, open(f"{work}/rows.json", "w"))
fl = find(lambda d: cfg(d)["mode"] == "flash" and d["flash"]["tiles"] > 2)
first(fl, "tile")["keys"][1] -= 1
json.dump(fl, open(f"{work}/keys.json", "w"))
PY
for bad in nudged missing forward unlinked gqa pad padmask cache assembled flash_l flash_tile axes rows keys; do
  if "$python" "$here/oracle.py" "$work/$bad.json" >/dev/null 2>&1; then
    echo "FAIL: the oracle accepted the $bad trace"
    exit 1
  fi
done
echo "oracle: ${#files[@]} traces match PyTorch; 14 corrupted traces are rejected"
