#!/usr/bin/env bash
# Training against PyTorch: tests/train_dump.cpp's ten steps of each task's model on one
# backend, in every mode, checked by tests/oracle_train.py in one process (losses, every
# gradient, Adam's updates); then its self-test proves it can fail.
# Usage: oracle_train_test.sh PATH/TO/train_dump PATH/TO/python3 BACKEND
set -u
dump=$1
python=$2
backend=$3
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

runs=(
  "copy split 1"
  "copy loop 2"
  "induction split 1"
  "induction fused 3"
  "induction loop 1"
  "sort split 2"
  "reverse fused 4 identical"
  "copy split 5 unscaled"
  "induction loop 6 head_dim"
)
files=()
i=0
for r in "${runs[@]}"; do
  read -r task mode seed extra <<<"$r"
  "$dump" "$task" "$backend" "$mode" "$seed" $extra >"$work/$i.json" || fail "train_dump $r"
  files+=("$work/$i.json")
  i=$((i + 1))
done
"$python" "$here/oracle_train.py" "${files[@]}" || fail "a $backend run differs from PyTorch"
# The oracle must fail on a wrong gradient, a wrong loss, a wrong update.
"$python" "$here/oracle_train.py" --self-test "$work/2.json" || fail "the oracle cannot fail"
echo "ok: ${#runs[@]} training runs on $backend equal PyTorch"
