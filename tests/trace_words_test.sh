#!/usr/bin/env bash
# Every trace shown to people is narrated: for configurations across the modes and variants,
# `headsplit trace --json` gives every step a PyTorch line and a sentence, and `--step N`
# prints that step's line and sentence under its values. Nothing here asks the narration
# what it would say: the checks are on what the command wrote.
# Usage: trace_words_test.sh PATH/TO/headsplit PATH/TO/python3
set -u
bin=$1
python=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

check_words() {  # name args...
  local name=$1
  shift
  if ! "$bin" trace "$@" --json "$work/$name.json" >/dev/null 2>"$work/$name.err"; then
    fail "$name: headsplit trace $* exited non-zero: $(head -n 2 "$work/$name.err")"
    return
  fi
  # Each step: a code line that reads as Python (an assignment, a call or a slice) and an
  # explanation that is a sentence (a capital or a word first, a full stop last).
  local last
  if ! last=$("$python" - "$work/$name.json" <<'PY'
import json, sys
steps = json.load(open(sys.argv[1]))["steps"]
def problem(s):
    code, explain = s.get("code"), s.get("explain")
    if not isinstance(code, str) or not code.strip(): return "no code line: %r" % code
    if not any(c in code for c in "=(["): return "code that is not Python: %r" % code
    if not isinstance(explain, str) or len(explain.split()) < 4: return "no sentence: %r" % explain
    if not explain.rstrip().endswith("."): return "a sentence without its full stop: %r" % explain
    return None
bad = ["step %d (%s): %s" % (s["index"], s["op"], problem(s)) for s in steps if problem(s)]
if not steps or bad:
    print("; ".join(bad) if bad else "no steps")
    sys.exit(1)
print(len(steps) - 1, steps[-1]["code"], sep="\t")
PY
  ); then
    fail "$name ($*): $last"
    return
  fi
  # The last step's values, then its code line, as --step prints them.
  local index=${last%%$'\t'*} code=${last#*$'\t'}
  "$bin" trace "$@" --step "$index" >"$work/$name.step" 2>&1 || { fail "$name: --step $index exited non-zero"; return; }
  grep -qF -- "$code" "$work/$name.step" || fail "$name: --step $index does not print the step's code line: $code"
}

check_words default
check_words heads3 --heads 3
check_words loop --mode loop --heads 3
check_words fused_gqa --mode fused --d-out 8 --heads 4 --kv-heads 2 --qkv-bias
check_words flash --mode flash --tokens 7 --block 3
check_words decoding --decode-from 2 --tokens 5
check_words cross --context "le chat dort sur"
check_words batch --text "the cat sleeps" --text "a dog"
check_words dropout --dropout 0.25 --no-out-proj --scale-first
check_words checkpoint --preset tiny-trained

[ "$failures" = 0 ] || { echo "$failures check(s) failed"; exit 1; }
echo "trace words: every step of 10 configurations has its code line and its sentence"
