#!/usr/bin/env bash
# tools/train_tiny.py, the script that makes the shipped tiny model: a short run (4 steps, 64
# merges) twice with one seed must write the same bytes, a third with another seed other
# weights, and headsplit must open what it writes at every layer.
# Usage: train_tiny_test.sh PATH/TO/headsplit PATH/TO/python3
set -u
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
train() {  # headsplit python3 folder seed
  "$2" "$here/../tools/train_tiny.py" --out "$work/$3" --steps 4 --merges 64 --seed "$4" >"$work/$3.log" 2>&1 ||
    { fail "train_tiny.py --seed $4 exited non-zero: $(tail -3 "$work/$3.log")"; return 1; }
}
train "$1" "$2" a 7 && train "$1" "$2" b 7 && train "$1" "$2" c 8 || { echo "$failures check(s) failed"; exit 1; }
for f in config.json model.safetensors vocab.json merges.txt; do
  cmp -s "$work/a/$f" "$work/b/$f" || fail "two runs with seed 7 wrote different $f"
done
cmp -s "$work/a/model.safetensors" "$work/c/model.safetensors" && fail "seeds 7 and 8 wrote the same weights"
[ "$(grep -c . "$work/a/merges.txt")" = 65 ] || fail "merges.txt has $(grep -c . "$work/a/merges.txt") lines, expected the header and 64 merges"
layers=$("$2" -c 'import json,sys; print(json.load(open(sys.argv[1]))["n_layer"])' "$work/a/config.json")
for ((layer = 0; layer < layers; layer++)); do
  out=$("$1" trace --weights "$work/a" --layer "$layer" --text "The cat sat on the mat." 2>&1) ||
    fail "headsplit cannot open the trained folder at layer $layer: $out"
done
"$2" -c 'import json,sys; r=json.load(open(sys.argv[1])); assert r["steps"]==4 and r["seed"]==7 and len(r["heads"]["prev"])==4, r' \
  "$work/a/training.json" || fail "training.json does not record the run"
[ "$failures" = 0 ] || { echo "$failures check(s) failed"; exit 1; }
echo "train_tiny.py: same seed, same bytes; another seed, other weights; headsplit opens all $layers layers"
