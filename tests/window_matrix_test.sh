#!/usr/bin/env bash
# Every bottom tab x both backends x the option combinations a teacher reaches (dropout in
# each mode, Q/K/V bias, no output projection, scale first, no causal mask, journey,
# heads = D_out, one token, a ten-word sentence; issue 13's MQA, a padded batch of two,
# cross-attention, decoding): each window renders, exits 0 and saves a
# non-blank PNG. The why tab measures the shape (its first runs record nothing), which is
# where dropout used to crash.
# Usage: window_matrix_test.sh PATH/TO/headsplit PATH/TO/png_stats [all|each]   (inside xvfb-run)
# each: every combination once, the tab and backend taken in turn (the sanitizers' run).
set -u
bin=$1
stats=$2
sweep=${3:-all}
case "$sweep" in all | each) ;; *) echo "window_matrix_test.sh: the sweep is all or each, not '$sweep'"; exit 2 ;; esac
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
runs=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
colours() { "$stats" "$1" | awk '/^size/ {print $5}'; }

combos=(
  "--dropout 0.1 --mode loop"
  "--dropout 0.1 --mode split"
  "--dropout 0.1 --mode fused --qkv-bias"
  "--qkv-bias"
  "--no-out-proj"
  "--scale-first"
  "--no-causal"
  "--preset journey"
  "--heads 6"
  "--text cat"
  "ten-words"
  "--kv-heads 1"
  "two-sentences"
  "--context-tokens 5 --kv-heads 1"
  "--decode-from 1 --kv-heads 1"
)
sentence="the quick brown fox jumps over the lazy sleeping dog"
turn=0
for tab in heatmaps weights why; do
  for backend in cpu gl; do
    for combo in "${combos[@]}"; do
      turn=$((turn + 1))
      # (each: the k-th combination under the (5 - k mod 6)-th of the 6 tab and backend pairs,
      # so that dropout in loop and split mode meets the why tab, where it used to crash.)
      [ "$sweep" = each ] && [ $((5 - (turn - 1) % ${#combos[@]} % 6)) != $(((turn - 1) / ${#combos[@]})) ] && continue
      shot="$work/shot.png"
      rm -f "$shot"
      runs=$((runs + 1))
      if [ "$combo" = ten-words ]; then
        "$bin" --screenshot "$shot" --step 6 --tab "$tab" --backend "$backend" --text "$sentence" 2>"$work/err"
      elif [ "$combo" = two-sentences ]; then
        "$bin" --screenshot "$shot" --step 6 --tab "$tab" --backend "$backend" --text "$sentence" --text "a dog" 2>"$work/err"
      else
        # shellcheck disable=SC2086
        "$bin" --screenshot "$shot" --step 6 --tab "$tab" --backend "$backend" $combo 2>"$work/err"
      fi
      rc=$?
      what="--tab $tab --backend $backend $combo"
      if [ $rc != 0 ]; then
        fail "'$what' exited $rc: $(head -c 300 "$work/err")"
        continue
      fi
      [ -s "$shot" ] || { fail "'$what' saved no PNG"; continue; }
      n=$(colours "$shot")
      [ "${n:-0}" -gt 200 ] || fail "'$what' looks blank ($n colours)"
    done
  done
done
if [ "$failures" -gt 0 ]; then
  echo "$failures of $runs window runs failed"
  exit 1
fi
echo "all $runs window runs rendered"
