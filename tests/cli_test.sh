#!/usr/bin/env bash
# Command-line contract of `headsplit trace`: the journey of shapes, --help, and bad
# options refused with one line on stderr, exit code 2, and no file written.
# Usage: cli_test.sh PATH/TO/headsplit [rss|no-rss]   (no-rss: the sanitizer build, whose
# resident memory says nothing about the estimate)
set -u
bin=$1
rss_check=${2:-rss}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# 1. The default example prints the journey of the data's shape.
out=$("$bin" trace) || fail "headsplit trace exited $?"
grep -qF 'shapes: [1, 3, 6] -> [1, 3, 2, 3] -> [1, 2, 3, 3] -> [1, 3, 2, 3] -> [1, 3, 6]' <<<"$out" ||
  fail "trace does not print the journey of shapes: $out"
[ "$(grep -cE '^[0-9]+ ' <<<"$out")" = 12 ] || fail "trace does not print 12 steps"
# 1a. The variants print their shape story and what the KV cache holds.
out=$("$bin" trace --preset llama3-8b --tokens 4) || fail "trace --preset llama3-8b exited $?"
grep -qF 'kv_heads=8' <<<"$out" || fail "llama3-8b does not say kv_heads=8: $out"
grep -qF 'kv cache: 8192 bytes per token per layer' <<<"$out" || fail "llama3-8b's cache per token: $out"
grep -qE '^[0-9]+ +repeat_kv +keys, values +\[1, 32, 4, 128\] +copy' <<<"$out" || fail "llama3-8b has no repeat_kv to 32 heads: $out"
out=$("$bin" trace --decode-from 2) || fail "trace --decode-from 2 exited $?"
grep -qE '^[0-9]+ +cache_append \(r1\) +keys, values +\[1, 2, 3, 3\] +in place' <<<"$out" || fail "decode: no in-place append in round 1: $out"
grep -qE '^[0-9]+ +assemble +output +\[1, 3, 6\] +copy' <<<"$out" || fail "decode: no assembled output: $out"
out=$("$bin" trace --text "the cat sleeps" --text "a dog" --context "le chat" --context "un chien dort") ||
  fail "trace with a batch and contexts exited $?"
grep -qE '^[0-9]+ +scores +attn_scores +\[2, 2, 3, 3\]' <<<"$out" || fail "batched cross-attention scores: $out"
grep -qE '^[0-9]+ +pad_mask ' <<<"$out" || fail "batched cross-attention has no pad_mask step: $out"
# 1b. The GPT-2 presets between small and xl run.
for preset in gpt2-medium gpt2-large; do
  "$bin" trace --preset "$preset" >/dev/null 2>"$work/stderr" || fail "trace --preset $preset exited $?: $(cat "$work/stderr")"
done

# 1c. `kernels` times every GL kernel and checks each product against OpenBLAS's
# (130 x 257 spans 2 x 3 of the tiled kernel's 128 x 128 tiles; K = 21 ends in a partial slice).
out=$("$bin" kernels --m 130 --k 21 --n 257 --repeat 1) || fail "kernels exited $?: $out"
for row in "cpu openblas" "gl plain" "gl blocked" "gl tiled" "gl tiled vec4"; do
  grep -qE "^$row +[0-9.]+ " <<<"$out" || fail "kernels has no '$row' row: $out"
done
want=tiled && grep -q "^GL: .*llvmpipe" <<<"$out" && want=blocked  # a software renderer keeps the blocked kernel
grep -qF "(the GL backend uses $want here)" <<<"$out" || fail "kernels does not say the GL backend uses $want: $out"
[ "$(grep -cE '^gl [a-z]+ .* ([0-9.]+e-0[5-9]|0[.]0e[+]00)$' <<<"$out")" = 4 ] || fail "kernels: a GL product differs from OpenBLAS's: $out"
# Whole tiles and slices, where the vec4 copy runs (256 x 384: 2 x 3 tiles; K = 40: 5 slices).
out=$("$bin" kernels --m 256 --k 40 --n 384 --repeat 1) || fail "kernels 256 x 40 x 384 exited $?: $out"
grep -qE '^gl tiled vec4 .* ([0-9.]+e-0[5-9]|0[.]0e[+]00)$' <<<"$out" || fail "kernels: the vec4 copy's product differs from OpenBLAS's: $out"

# 2. --help lists every option.
help=$("$bin" trace --help) || fail "trace --help exited $?"
for opt in --preset --text --tokens --d-in --d-out --heads --kv-heads --context --context-tokens --d-context \
           --decode-from --seed --causal --no-causal --mode --backend \
           --dropout --no-out-proj --scale-first --qkv-bias --memory-budget --json --step; do
  grep -q -- "$opt" <<<"$help" || fail "trace --help does not list $opt"
done

# 3. Bad options: one line on stderr naming the value, exit 2, nothing written.
check_refused() {  # expected-code substring args...
  local code=$1 want=$2
  shift 2
  local args="$*"
  [ "${#args}" -gt 160 ] && args="${args:0:160}..."
  rm -f "$work"/out.json "$work"/out.json.tmp.*
  # --json goes right after the subcommand, so that a trailing option lacks its value.
  "$bin" "$1" --json "$work/out.json" "${@:2}" >"$work/stdout" 2>"$work/stderr"
  local rc=$?
  [ "$rc" = "$code" ] || fail "'$args' exited $rc, expected $code"
  [ "$(wc -l <"$work/stderr")" = 1 ] || fail "'$args' wrote $(wc -l <"$work/stderr") lines to stderr: $(cat "$work/stderr")"
  grep -qF -- "$want" "$work/stderr" || fail "'$args' said '$(cat "$work/stderr")', expected it to mention '$want'"
  [ ! -e "$work/out.json" ] || fail "'$args' left $work/out.json behind"
  ls "$work" | grep -q 'tmp' && fail "'$args' left a temporary file behind"
  refused=$((refused + 1))
  return 0
}
refused=0
signalled=0
refused_quickly() {  # substring args...: as check_refused, within 20 s (a reader that blocks fails)
  local want=$1
  shift
  timeout 20 "$bin" "$@" >"$work/stdout" 2>"$work/stderr"
  local rc=$?
  [ "$rc" = 2 ] || fail "'$*' exited $rc, expected 2 (124: it hung) : $(head -c 300 "$work/stderr")"
  [ "$(wc -l <"$work/stderr")" = 1 ] || fail "'$*' wrote $(wc -l <"$work/stderr") lines to stderr: $(cat "$work/stderr")"
  grep -qF -- "$want" "$work/stderr" || fail "'$*' said '$(cat "$work/stderr")', expected it to mention '$want'"
  refused=$((refused + 1))
}
check_refused 2 "heads that divide 6: 1, 2, 3, 6" trace --heads 4
# An empty path is refused before anything runs, not dropped (exit 0 with nothing written),
# and the window's does not open an interactive window that never exits.
for empty in "trace --json" "bench --json" "export --python" "export --numpy" "handout --out" "--screenshot" \
             "--drive-report" "--layout-report" "--layout-audit"; do
  refused_quickly "${empty##* }: the path is empty; name a file or folder" $empty ""
done
check_refused 2 "--heads 0 is out of range" trace --heads 0
check_refused 2 "--heads -3" trace --heads -3
check_refused 2 "--d-in abc is not a whole number" trace --d-in abc
check_refused 2 "--d-out 1.5 is not a whole number" trace --d-out 1.5
check_refused 2 "--d-out 99999999999999999999" trace --d-out 99999999999999999999
check_refused 2 "--tokens 0 is out of range" trace --tokens 0
check_refused 2 "--text and --tokens" trace --text "a b" --tokens 3
check_refused 2 "has no words" trace --text "   "
check_refused 2 "dropout p = 1" trace --dropout 1
check_refused 2 "--dropout nan is not a number" trace --dropout nan
check_refused 2 "--mode sideways is not a mode; use loop, split, fused or flash" trace --mode sideways
check_refused 2 "--backend tpu is not a backend" trace --backend tpu
check_refused 2 "unknown preset \"gpt5\"" trace --preset gpt5
check_refused 2 "memory budget" trace --preset gpt3
check_refused 2 "memory budget" trace --memory-budget 1KiB
check_refused 2 "--memory-budget lots is not a size" trace --memory-budget lots
check_refused 2 "--step 12 does not exist" trace --step 12
check_refused 2 "--bogus" trace --bogus
check_refused 2 "--heads needs a value" trace --heads
check_refused 2 "sideways" sideways
check_refused 2 "--d-in nan is not a whole number" trace --d-in nan
check_refused 2 "--d-out 0 is out of range" trace --d-out 0
check_refused 2 "--d-in 70000 is out of range" trace --d-in 70000
check_refused 2 "--seed abc" trace --seed abc
check_refused 2 "dropout p = -0.1 is outside [0, 1)" trace --dropout -0.1
check_refused 2 "--dropout 1e999" trace --dropout 1e999
check_refused 2 "has no words" trace --text ""
# Unicode's spaces separate words as ASCII's do (Zs, U+2028, U+2029, and the zero-width U+200B,
# U+2060, U+180E, U+FEFF): "the<NBSP>cat sleeps" ran as two words, the first holding an invisible
# space. A text of those spaces only has no words. (Octal bytes: printf's \u needs a UTF-8
# locale.)
check_refused 2 "has no words" trace --text "$(printf '\342\200\203\302\240')"
check_refused 2 "has no words" trace --no-causal --text "a" --context "$(printf '\343\200\200\342\201\240')"
for space in '\302\240' '\343\200\200' '\342\200\211' '\342\200\250' '\342\200\213' '\342\201\240' '\341\240\216' '\357\273\277'; do
  "$bin" trace --json "$work/spaces.json" --text "$(printf "the${space}cat sleeps$space")" --context "$(printf "le${space}chat")" \
      --no-causal >/dev/null 2>"$work/stderr" &&
    /usr/bin/python3 -c "import json,sys; c=json.load(open(sys.argv[1]))['config']; t=(c['tokens'], c.get('context'))
assert t==(['the','cat','sleeps'],[['le','chat']]), t" "$work/spaces.json" ||
    fail "the text and context split at $space: $(cat "$work/stderr")"
done
# What shows nothing, by Unicode's properties (White_Space, Default_Ignorable_Code_Point,
# format characters), not a list: a Hangul filler, a variation selector, a tag character, a
# soft hyphen. Direction controls and control characters anywhere in a word (they reverse a
# handout's title, or retitle a terminal); bytes that are not UTF-8, named as bytes (an
# overlong '/' once read as U+002F). The same letters around a joiner or selector run.
check_refused 2 "word 2 of the text (U+3164) shows nothing" trace --text "$(printf 'a \343\205\244 b')"
check_refused 2 "word 2 of the text (U+FE0F) shows nothing" trace --text "$(printf 'a \357\270\217')"
check_refused 2 "word 1 of the text (U+E0021) shows nothing" trace --text "$(printf '\363\240\200\241 b')"
check_refused 2 "word 2 of the text (U+00AD) shows nothing" trace --text "$(printf 'a \302\255')"
check_refused 2 "word 3 of the text holds U+202E, a direction control" trace --text "$(printf 'the cat \342\200\256sleeps')"
check_refused 2 "word 1 of the text holds U+2067, a direction control" trace --text "$(printf '\342\201\247a b')"
check_refused 2 "word 2 of the text holds U+061C, a direction control" trace --text "$(printf 'a b\330\234')"
check_refused 2 "word 2 of the context holds U+200F, a direction control" trace --no-causal --context "$(printf 'le chat\342\200\217')"
check_refused 2 "word 2 of the text holds U+001B, a control character" trace --text "$(printf 'a \033]0;owned\007 b')"
check_refused 2 "word 1 of the text holds U+0085, a control character" trace --text "$(printf 'a\302\205 b')"
check_refused 2 "word 2 of the text has bytes that are not UTF-8 (0xC0 0xAF at byte 1)" trace --text "$(printf 'a b\300\257')"
check_refused 2 "word 1 of the text has bytes that are not UTF-8 (0xFF at byte 0)" trace --text "$(printf '\377 b')"
check_refused 2 "word 1 of sentence 2 has bytes that are not UTF-8 (0xED 0xA0 0x80 at byte 0)" trace --text a --text "$(printf '\355\240\200')"
check_refused 2 "the text holds U+202E, a direction control" trace --preset tiny-trained --text "$(printf 'the cat \342\200\256sleeps')"
check_refused 2 "the text holds U+001B, a control character" trace --preset tiny-trained --text "$(printf 'the \033[2J cat')"
# Bounds: a word of 101 characters (a label is drawn for each token; 100,000 letters took the
# window minutes); a window larger than an 8K screen is refused with the window's options.
check_refused 2 "word 2 of the text is longer than 100 characters" trace --text "the $(printf 'a%.0s' $(seq 101))"
check_refused 2 "word 3 of the text is longer than 100 characters" trace --preset tiny-trained --text "the cat $(printf 'b%.0s' $(seq 101))"
"$bin" trace --json "$work/joined.json" --text "$(printf '\360\237\221\251\342\200\215\360\237\222\273 \342\235\244\357\270\217 \327\251\327\234\327\225\327\235')" >/dev/null 2>"$work/stderr" &&
  /usr/bin/python3 -c "import json,sys; t=json.load(open(sys.argv[1]))['config']['tokens']; assert t==['\U0001F469\u200d\U0001F4BB','\u2764\ufe0f','\u05e9\u05dc\u05d5\u05dd'], t" "$work/joined.json" ||
  fail "an emoji joined by U+200D, a heart with its selector, a Hebrew word: $(cat "$work/stderr")"
check_refused 2 "--tokens needs a value" trace --preset gpt2-small --tokens
# Issue 13's options: GQA / MQA, cross-attention, padded batches, decoding.
check_refused 2 "--kv-heads 0 leaves the queries no keys; use a divisor of heads = 2: 1, 2" trace --kv-heads 0
check_refused 2 "kv_heads = 3 is more than heads = 2" trace --kv-heads 3
check_refused 2 "kv_heads = 5 does not divide heads = 12" trace --preset gpt2-small --kv-heads 5
check_refused 2 "--kv-heads -1" trace --kv-heads -1
check_refused 2 "--kv-heads x is not a whole number" trace --kv-heads x
check_refused 2 "--decode-from 0 is out of range" trace --decode-from 0
check_refused 2 "outside 0 < P < T = 3; use 1 to 2" trace --decode-from 3
check_refused 2 "only under a causal mask" trace --decode-from 1 --no-causal
check_refused 2 "use --mode split or fused with --decode-from" trace --decode-from 1 --mode loop
# flash mode: a tile larger than the text, a tile side without flash, dropout, decoding
check_refused 2 "block = 5 is outside 1 to T = 3" trace --mode flash --block 5
check_refused 2 "add --mode flash or drop --block" trace --block 2
check_refused 2 "--block 0 is" trace --mode flash --block 0
check_refused 2 "drop --dropout or use --mode split" trace --mode flash --dropout 0.1
check_refused 2 "drop --decode-from or use --mode split" trace --mode flash --decode-from 1
check_refused 2 "without dropout" trace --decode-from 2 --dropout 0.1
check_refused 2 "no cache to grow" trace --decode-from 2 --context "a b"
check_refused 2 "--context \"  \" has no words" trace --context "  "
check_refused 2 "--context-tokens 0 is out of range" trace --context-tokens 0
check_refused 2 "--context and --context-tokens" trace --context "a" --context-tokens 2
check_refused 2 "S = 4 tokens and the text T = 3" trace --context "a b c d" --causal
check_refused 2 "use --mode split or loop" trace --context "a b" --mode fused
check_refused 2 "there is no context" trace --d-context 4
check_refused 2 "2 contexts for 3 sentences" trace --text a --text b --text c --context x --context y
check_refused 2 "--text \"\" has no words" trace --text "a b" --text ""
check_refused 2 "preset llama3-8b shares 8 key/value heads, which cannot serve --heads 4" trace --preset llama3-8b --heads 4
check_refused 2 "over the memory budget" trace --preset gpt2-small --text "$(printf 'w%.0s ' $(seq 2000))" --text a --text b
# the shipped model's preset: its sizes, tokens and layers are the checkpoint's
check_refused 2 "--heads cannot be used with --preset tiny-trained: the checkpoint sets it" trace --preset tiny-trained --heads 2
check_refused 2 "--tokens cannot be used with --preset tiny-trained" trace --preset tiny-trained --tokens 5
check_refused 2 "is not a layer of this checkpoint; use 0 to" trace --preset tiny-trained --layer 99
check_refused 2 "--preset tiny-trained runs one sentence; give one --text" trace --preset tiny-trained --text a --text b
check_refused 2 "--preset cannot be used with --weights" trace --preset tiny-trained --weights /nonexistent
# A very long sentence (20,000 words, near the kernel's 128 KiB limit on one argument):
# refused by the memory budget with the estimate, before anything is allocated.
long_text=$(printf 'word %.0s' $(seq 20000))
check_refused 2 "over the memory budget" trace --text "$long_text"
# Flash tiles are steps of the trace: too many are refused at once, with the block that works
# (these took minutes, or never ended, before the count).
refused_quickly "flash at T = 65536 with block 1 makes 2147516416 tiles" trace --mode flash --block 1 --tokens 65536 --d-in 4 --d-out 4 --heads 1
refused_quickly "flash at T = 2048 with block 1 makes 2098176 tiles, each a step of the trace; at most 65536 can be traced: use --block 6 or more" trace --mode flash --block 1 --tokens 2048 --d-in 4 --d-out 4 --heads 1
refused_quickly "use --block 2905 or more" trace --preset llama2-7b --tokens 1048576 --mode flash
# The time budget: a run estimated (its FLOPs at a rate measured on the backend just then)
# to take longer is refused before it starts (llama2-7b at T = 2048 in flash mode took 71 s on
# the GL backend, llvmpipe, and T = 4096 would take about four times that); llama2-7b at
# T = 4096 (0.69 TFLOP) is over a 1-second budget on any CPU.
refused_quickly "GFLOP/s, measured on the cpu backend just now), over the time budget of 1 s; use fewer tokens or a smaller D_out, or raise --time-budget" trace --preset llama2-7b --tokens 4096 --mode flash --memory-budget 8GiB --time-budget 1
refused_quickly "measured on the gl backend just now), over the time budget of 60 s; use fewer tokens, the CPU backend or a smaller D_out, or raise --time-budget" trace --preset llama2-7b --tokens 4096 --mode flash --memory-budget 4GiB --backend gl
# A memory budget above the machine's memory: a run that needs more than the machine has is
# refused with the estimate, before anything is made (a million tokens of llama2-7b under a
# 64 TiB budget made 16 GB of inputs in 32 s before its time was refused, and with a longer
# time budget was killed by the kernel at 24 GB). Under it, the time estimate comes before the
# inputs and weights are made.
SECONDS=0
refused_quickly "of memory (whatever --memory-budget says); use fewer tokens or a smaller D_out" trace --preset llama2-7b --tokens 1048576 --mode flash --block 4096 --memory-budget 65536GiB --time-budget 86400
refused_quickly "over the time budget of 1 s" trace --preset llama2-7b --tokens 32768 --mode flash --block 4096 --memory-budget 16GiB --time-budget 1
# (Both take 7 s under the address sanitizer on an idle 2-core machine, most of it making a
# million token names; what this guards against took 32 s or never ended.)
[ "$SECONDS" -le 20 ] || fail "two runs too large for the machine took $SECONDS s to refuse"
#    ... and without making its inputs (x alone is 512 MiB there).
peak=$(/usr/bin/python3 -c 'import resource, subprocess, sys
subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)' "$bin" trace --preset llama2-7b --tokens 32768 --mode flash \
  --block 4096 --memory-budget 16GiB --time-budget 1)
[ "${peak:-999999999}" -lt 200000 ] || fail "refusing llama2-7b at T = 32768 for its time took ${peak} KiB (the inputs were made first)"
check_refused 2 "--time-budget 0 is out of range; use a whole number from 1 to 86400" trace --time-budget 0
# The JSON writer's piece counts against the budget when --json is given (check_refused adds it):
# 113.6 MiB fits 114 MiB without it.
check_refused 2 "needs about 114.4 MiB (backend buffers 240.5 KiB, host copies 160.5 KiB, trace 113.2 MiB, writing its JSON 864.0 KiB)" \
  trace --mode flash --block 8 --tokens 2048 --d-in 4 --d-out 4 --heads 1 --memory-budget 114MiB
# The memory estimate holds what a run holds: the values and the steps' records (a flash
# trace of 32,896 tiles held 124 MB where the estimate said 14.9 MiB), measured as the peak
# resident size above a trivial run's. Writing its JSON holds a piece of 65,536 values at a
# time, not the document (800 MB for this 95 MB file once, then its text, 2.5 times its size).
peak_kib() {  # args...: the peak resident KiB of `headsplit args...`
  /usr/bin/python3 -c 'import resource, subprocess, sys
subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, check=True)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)' "$bin" "$@"
}
# (Not in the sanitizer build: its allocator's shadow and quarantine are resident too.)
if [ "$rss_check" = rss ]; then
tiles=(trace --mode flash --block 8 --tokens 2048 --d-in 4 --d-out 4 --heads 1)
estimate=$("$bin" "${tiles[@]}" --memory-budget 1KiB 2>&1 | sed -n 's/.*needs about \([0-9.]*\) MiB.*/\1/p')
base=$(peak_kib trace)
peak=$(peak_kib "${tiles[@]}")
peak_json=$(peak_kib "${tiles[@]}" --json "$work/tiles.json")
/usr/bin/python3 - "$estimate" "$base" "$peak" "$peak_json" <<'PY' || fail "memory estimate against the run: $estimate MiB estimated, peaks $peak / $peak_json KiB over $base"
import sys
est, base, peak, peak_json = float(sys.argv[1]) * 1024, *map(int, sys.argv[2:])
held = peak - base
assert 0.8 * held <= est <= 1.5 * held, (est, held)  # within 20% below, 50% above
assert peak_json <= 1.05 * peak + 4096, (peak_json, peak)  # a piece at a time: the 95 MB file adds ~nothing
PY
fi

# 3a. A hostile checkpoint folder (the shipped tiny model, copied, then broken one file at a
#     time): only regular files are opened, so nothing blocks or reads forever; each refusal
#     names the file and says what it is; a weight that is not a finite number is refused with
#     its tensor and index.
shipped=$(cd "$(dirname "$0")/../assets/tiny-gpt2" && pwd)
hostile() {  # name: a fresh copy of the shipped model in $work/ckpt-name
  rm -rf "$work/ckpt-$1" && cp -r "$shipped" "$work/ckpt-$1" && echo "$work/ckpt-$1"
}
d=$(hostile fifo) && rm "$d/config.json" && mkfifo "$d/config.json"
refused_quickly "config.json: a named pipe (reading it could wait forever), not a file" trace --weights "$d"
d=$(hostile zero) && rm "$d/vocab.json" && ln -s /dev/zero "$d/vocab.json"
refused_quickly "vocab.json: a device, not a file" trace --weights "$d"
d=$(hostile folder) && rm "$d/model.safetensors" && mkdir "$d/model.safetensors"
refused_quickly "model.safetensors: a folder, not a file" trace --weights "$d"
d=$(hostile loop) && rm "$d/config.json" && ln -s config.json "$d/config.json"
refused_quickly "config.json: a symlink loop" trace --weights "$d"
poison() {  # checkpoint-folder tensor-suffix row column value: one float of that tensor replaced
  /usr/bin/python3 - "$1/model.safetensors" "$2" "$3" "$4" "$5" <<'PY' || fail "could not put $5 into $2 of the copied checkpoint"
import json, struct, sys
path, suffix, row, col, value = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5])
with open(path, "r+b") as f:
    n = struct.unpack("<Q", f.read(8))[0]
    header = json.loads(f.read(n))
    name = next(k for k in header if k.endswith(suffix))
    assert header[name]["dtype"] == "F32"
    f.seek(8 + n + header[name]["data_offsets"][0] + 4 * (row * header[name]["shape"][1] + col))
    f.write(struct.pack("<f", value))
PY
}
d=$(hostile nan) && poison "$d" h.0.attn.c_attn.weight 2 5 nan
refused_quickly "c_attn.weight\" holds NaN at [2, 5]; a checkpoint's weights must be finite numbers" trace --weights "$d" --layer 0
# the same with +Inf in a position's embedding row (only the rows of the sentence's tokens are read)
d=$(hostile inf) && poison "$d" wpe.weight 1 3 inf
refused_quickly "wpe.weight\" holds Inf at [1, 3]" trace --weights "$d" --text "the cat"

# Finite weights too large for float32's sums (c_attn all 1e30): the result would be NaN, which
# is refused (it ran and exited 0 before, and the JSON held null, read as a masked score).
d=$(hostile huge) && /usr/bin/python3 - "$d/model.safetensors" <<'PY' || fail "could not fill c_attn with 1e30"
import json, struct, sys
with open(sys.argv[1], "r+b") as f:
    n = struct.unpack("<Q", f.read(8))[0]
    header = json.loads(f.read(n))
    name = next(k for k in header if k.endswith("h.0.attn.c_attn.weight"))
    begin, end = header[name]["data_offsets"]
    f.seek(8 + n + begin)
    f.write(struct.pack("<f", 1e30) * ((end - begin) // 4))
PY
rm -f "$work/huge.json"
"$bin" trace --weights "$d" --layer 0 --json "$work/huge.json" >/dev/null 2>"$work/stderr"
rc=$?
[ "$rc" = 1 ] && [ "$(wc -l <"$work/stderr")" = 1 ] &&
  grep -qF "values that are not finite" "$work/stderr" && grep -qF "the weights or the inputs are too large" "$work/stderr" ||
  fail "c_attn at 1e30: exit $rc, '$(cat "$work/stderr")'"
[ ! -e "$work/huge.json" ] || fail "c_attn at 1e30: a JSON was written"

# 3b. The same for bench's options.
check_refused 2 "--repeat 0 is out of range" bench --repeat 0
check_refused 2 "--tokens \"1 2\" is not a whole number" bench --preset gpt2-small --tokens "1 2" --repeat 5
check_refused 2 "--modes: \"split flash\" is not a mode" bench --modes "split flash" --repeat 5
# A list's empty last item is refused as an empty one inside it is.
check_refused 2 "--tokens \"\" is not a whole number" bench --preset gpt2-small --tokens 1,2, --repeat 5
check_refused 2 "--modes: \"\" is not a mode" bench --modes split, --repeat 5
# Many stray arguments: the first three named, the rest counted, in one short line.
check_refused 2 "and 17 more" trace $(seq 1 20)
# The table's header cuts a long text between characters, never inside one.
out=$("$bin" trace --text "$(printf '%055d \303\251\303\251\303\251 b' 0 | tr 0 a)" | head -1)
case $out in *'\x'*) fail "the table's header cuts a character: $out" ;; esac
check_refused 2 "--dropout abc is not a number" bench --preset cat-sleeps --dropout abc
check_refused 2 "dropout" bench --preset cat-sleeps --dropout 1.5
check_refused 2 "--repeat -2 is out of range" bench --repeat -2
check_refused 2 "--repeat abc is not a whole number" bench --repeat abc
check_refused 2 "--repeat 1.5 is not a whole number" bench --repeat 1.5
check_refused 2 "--repeat nan is not a whole number" bench --repeat nan
check_refused 2 "--repeat 100000000 is out of range" bench --repeat 100000000
check_refused 2 "--tokens needs --preset" bench --tokens 64
check_refused 2 "--tokens cannot be used with --preset tiny-trained: the checkpoint sets the tokens" bench --preset tiny-trained --tokens 64
check_refused 2 "--tokens 0 is out of range" bench --preset gpt2-small --tokens 0
check_refused 2 "--tokens 1e9 is not a whole number" bench --preset gpt2-small --tokens 1e9
check_refused 2 "--tokens 2000000 is out of range" bench --preset gpt2-small --tokens 2000000
check_refused 2 "--backend tpu is not a backend; use cpu, gl or all" bench --backend tpu
check_refused 2 "unknown preset \"gpt5\"" bench --preset gpt5
check_refused 2 "over the memory budget" bench --preset gpt3
check_refused 2 "--bogus" bench --bogus
check_refused 2 "--repeat needs a value" bench --repeat

# 3c. The visualizer's options are refused before any window opens (no display here).
check_refused_gui() {  # substring args...
  local want=$1
  shift
  rm -f "$work"/shot.png
  env -u DISPLAY "$bin" --screenshot "$work/shot.png" "$@" >"$work/stdout" 2>"$work/stderr"
  local rc=$?
  [ "$rc" = 2 ] || fail "'$*' exited $rc, expected 2"
  [ "$(wc -l <"$work/stderr")" = 1 ] || fail "'$*' wrote $(wc -l <"$work/stderr") lines to stderr: $(cat "$work/stderr")"
  grep -qF -- "$want" "$work/stderr" || fail "'$*' said '$(cat "$work/stderr")', expected it to mention '$want'"
  [ ! -e "$work/shot.png" ] || fail "'$*' left a screenshot behind"
  refused=$((refused + 1))
}
check_refused_gui "--step -1 is out of range" --step -1
check_refused_gui "--heatmap 2 is out of range; use a whole number from 0 to 1" --heatmap 2
check_refused_gui "--audit-windows abc is not a size" --layout-audit "$work/a.json" --audit-windows abc
check_refused_gui "--audit-windows width 10 is out of range" --layout-audit "$work/a.json" --audit-windows 10x10
check_refused_gui "--audit-fonts 9 is not a scale from 0.75 to 2.5" --layout-audit "$work/a.json" --audit-fonts 1,9
check_refused_gui "--audit-fonts \"\" is not a scale" --layout-audit "$work/a.json" --audit-fonts ""
check_refused_gui "--audit-cases: nope is not an audit configuration; use some of default,journey," --layout-audit "$work/a.json" --audit-cases default,nope
check_refused_gui "--font-scale nan is not a scale from 0.75 to 2.5" --font-scale nan
check_refused_gui "--font-scale 0 is not a scale" --font-scale 0
check_refused_gui "--window width 0 is out of range" --window 0x0
check_refused_gui "--window abc is not a size" --window abc
check_refused_gui "--window height 99999 is out of range" --window 1024x99999
check_refused_gui "--window width 16384 is out of range; use a whole number from 320 to 7680" --window 16384x16384
check_refused_gui "--tab foo is not a panel; use heatmaps, weights, weights-matmuls, weights-kv, why, why-sweep, why-kv or train" --tab foo
check_refused_gui "--step 10000 does not exist; this trace has steps 0 to 11" --step 10000
check_refused_gui "--zoom 9 is not a zoom from 1 to 8" --zoom 9
check_refused_gui "--zoom abc is not a zoom" --zoom abc
check_refused_gui "--pan 1,2 is not TOKEN,COLUMN,HEAD" --pan 1,2
check_refused_gui "--pan column" --pan 1,-2,0
check_refused_gui "--drive 0 is out of range" --drive 0
check_refused_gui "--drive -5 is out of range" --drive -5
check_refused_gui "heads that divide 6: 1, 2, 3, 6" --heads 4
check_refused_gui "--d-out 0 is out of range" --d-out 0
check_refused_gui "has no words" --text "   "
check_refused_gui "unknown preset" --preset nope
check_refused_gui "--bogus" --bogus
check_refused_gui "--tab needs a value" --tab

# 4. A path that cannot be written: exit 1, one line, nothing left, and (for bench and the
#    window) found out before the work starts, not after it.
check_unwritable() {  # args... (the unwritable path is $work/no/such/dir/out)
  SECONDS=0
  "$bin" "$@" >/dev/null 2>"$work/stderr"
  local rc=$?
  [ "$rc" = 1 ] || fail "'$*' exited $rc, expected 1"
  [ "$(wc -l <"$work/stderr")" = 1 ] || fail "'$*' wrote $(wc -l <"$work/stderr") lines: $(cat "$work/stderr")"
  grep -qF "cannot write $work/no/such/dir/out" "$work/stderr" || fail "'$*': $(cat "$work/stderr")"
  [ "$SECONDS" -le 5 ] || fail "'$*' took ${SECONDS} s to find out it cannot write"
  [ ! -e "$work/no" ] || fail "'$*' created $work/no"
  refused=$((refused + 1))
}
check_unwritable trace --json "$work/no/such/dir/out.json"
check_unwritable bench --json "$work/no/such/dir/out.json"
check_unwritable --screenshot "$work/no/such/dir/out.png"
check_unwritable --drive 100 --drive-report "$work/no/such/dir/out.json"

# 4b. Outputs that are not plain files, and writes that fail: refused at once, or failed
#     with what was there kept and no temporary file left.
mkdir -p "$work/adir"
refused_quickly "$work/adir is a folder; give a file name" trace --json "$work/adir"
refused_quickly "$work/adir is a folder; give a file name" bench --json "$work/adir" --repeat 5
/usr/bin/python3 -c 'import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' "$work/sock"
refused_quickly "$work/sock is a socket, which cannot be opened as a file" trace --json "$work/sock"
refused_quickly "--python and --numpy both name $work/lab.py" export --python "$work/lab.py" --numpy "$work/./lab.py"
check_refused 2 "--text \"\" has no words" trace --preset tiny-trained --text ""
check_refused 2 "--text \"\" has no words" trace --weights "$shipped" --text ""
check_refused 2 "--dropout 1e-400 is too small for a float" trace --dropout 1e-400
# A p that float32 rounds to 1 (every weight dropped) or to 0 (a dropout step dropping nothing).
check_refused 2 "dropout p = 0.99999999999 is too close to 1 for a float32 probability" trace --dropout 0.99999999999
check_refused 2 "dropout p = 1e-46 is too close to 0" trace --dropout 1e-46
#    The same file named twice when it does not exist yet, relative and absolute.
cd "$work" || exit 1
refused_quickly "--python and --numpy both name new.py" export --python new.py --numpy "$work/new.py"
[ ! -e new.py ] || fail "export --python new.py --numpy $work/new.py wrote new.py"
cd - >/dev/null || exit 1
ln -s loop-b "$work/loop-a" && ln -s loop-a "$work/loop-b"
refused_quickly "$work/loop-a: a symlink loop" trace --json "$work/loop-a"
#    A symlink to a file is written through: the link stays a link, its target gets the trace.
ln -s target.json "$work/link.json"
"$bin" trace --json "$work/link.json" >/dev/null || fail "trace --json through a symlink exited $?"
[ -L "$work/link.json" ] && [ -s "$work/target.json" ] || fail "trace --json replaced the symlink instead of writing its target"
rm -f "$work/link.json" "$work/target.json"
#    A full disk (a 64 KiB tmpfs; root only): exit 1, one line, the old file kept, nothing left over.
if [ "$(id -u)" = 0 ] && mkdir -p "$work/small" && mount -t tmpfs -o size=64k tmpfs "$work/small" 2>/dev/null; then
  echo old >"$work/small/keep.json"
  head -c 60000 /dev/zero >"$work/small/fill" 2>/dev/null
  "$bin" trace --json "$work/small/keep.json" >/dev/null 2>"$work/stderr"
  rc=$?
  [ "$rc" = 1 ] && grep -qF "No space left on device; nothing there was replaced" "$work/stderr" ||
    fail "trace --json onto a full disk: exit $rc, '$(cat "$work/stderr")'"
  [ "$(cat "$work/small/keep.json")" = old ] || fail "trace --json onto a full disk changed the file that was there"
  [ -z "$(ls "$work/small" | grep tmp)" ] || fail "trace --json onto a full disk left $(ls "$work/small")"
  "$bin" export --python "$work/small/keep.json" >/dev/null 2>"$work/stderr" && fail "export onto a full disk exited 0"
  [ "$(cat "$work/small/keep.json")" = old ] || fail "export onto a full disk changed the file that was there"
  umount "$work/small"
else
  echo "note: not root or no tmpfs here; the full-disk case is not run"
fi
#    The command export prints is quoted for a POSIX shell: pasted into sh -c it runs the script
#    at a path with spaces, quotes and $( ) in it, and runs nothing else.
hostile_dir="$work/lab 'one' \$(touch $work/pwned-export)"
mkdir -p "$hostile_dir"
out=$("$bin" export --numpy "$hostile_dir/take home.py" 2>&1) || fail "export to a hostile path exited $?: $out"
cmd=${out#*run it with }
(cd "$work" && PATH=/usr/bin:/bin sh -c "$cmd" >"$work/export-run.out" 2>&1) ||
  fail "the printed command '$cmd' did not run the script: $(tail -2 "$work/export-run.out")"
[ -e "$work/pwned-export" ] && fail "the printed command ran a command from the path"
#    A path that starts with "-": the printed command names it as ./-... (python3 -mthis would
#    run Python's module), and pasted it runs the script.
out=$(cd "$work" && "$bin" export --numpy=-mthis 2>&1) || fail "export --numpy=-mthis exited $?: $out"
grep -qF "run it with python3 ./-mthis" <<<"$out" || fail "export --numpy=-mthis printed '$out'"
(cd "$work" && PATH=/usr/bin:/bin sh -c "${out#*run it with }" >"$work/dash-run.out" 2>&1) ||
  fail "the printed command '${out#*run it with }' did not run the script: $(tail -2 "$work/dash-run.out")"
grep -q "Zen of Python" "$work/dash-run.out" && fail "the printed command ran Python's this module"
#    A file written again keeps its permissions: a private trace stays private, a script its x.
"$bin" trace --json "$work/private.json" >/dev/null && chmod 600 "$work/private.json" &&
  "$bin" trace --json "$work/private.json" >/dev/null || fail "trace --json over a 0600 file exited $?"
[ "$(stat -c %a "$work/private.json")" = 600 ] || fail "trace --json made a 0600 file $(stat -c %a "$work/private.json")"
"$bin" export --python "$work/run.py" >/dev/null && chmod 755 "$work/run.py" &&
  "$bin" export --python "$work/run.py" >/dev/null || fail "export over a 0755 script exited $?"
[ "$(stat -c %a "$work/run.py")" = 755 ] || fail "export made a 0755 script $(stat -c %a "$work/run.py")"
#    A signal that ends the process while a large --json is written (SIGTERM; SIGHUP: the
#    terminal closed; SIGPIPE; SIGINT is ignored by a job started in the background like this
#    one, and the handler keeps it so): the temporary file goes with the process.
# Every signal whose default action ends the process cleans up the same way (SIGXCPU and
# SIGXFSZ would also dump core: none is kept here; SIGQUIT, like SIGINT, is ignored by a job
# started in the background).
ulimit -c 0
for sig in TERM HUP PIPE ALRM VTALRM PROF XCPU USR1 USR2 XFSZ; do
  # A run whose temporary file came and went between two looks is tried again (up to 3 times).
  for _ in 1 2 3; do
    rm -f "$work"/big.json*
    "$bin" trace --preset gpt2-small --tokens 512 --json "$work/big.json" >/dev/null 2>&1 &
    pid=$!
    for _ in $(seq 600); do
      ls "$work" | grep -q '^big.json.tmp' && break
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.02
    done
    ls "$work" | grep -q '^big.json.tmp' && break
    wait "$pid"
  done
  if ls "$work" | grep -q '^big.json.tmp'; then
    kill -"$sig" "$pid"
    wait "$pid"
    rc=$?
    [ "$rc" = $((128 + $(kill -l "$sig"))) ] || fail "trace --json killed by SIG$sig exited $rc"
    signalled=$((signalled + 1))
    [ -z "$(ls "$work" | grep '^big.json')" ] || fail "SIG$sig during --json left $(ls "$work" | grep '^big.json')"
  else
    wait "$pid"
    fail "trace --preset gpt2-small --tokens 512 --json: no temporary file seen within 30 s"
  fi
done

# 4c. Output lost on the way out: standard output onto a full disk or closed, each subcommand
#     that prints; the file size limit; a reader that has gone. Each fails in one line, exit 1
#     (a gone reader: quietly, as SIGPIPE ends a process).
lost=0
check_lost() {  # substring command... (run with its output already redirected by the caller)
  local want=$1
  shift
  local rc
  "$@" 2>"$work/stderr"
  rc=$?
  [ "$rc" = 1 ] || fail "'${*:2}' exited $rc, expected 1: $(head -c 300 "$work/stderr")"
  [ "$(wc -l <"$work/stderr")" = 1 ] || fail "'${*:2}' wrote $(wc -l <"$work/stderr") lines to stderr: $(cat "$work/stderr")"
  grep -qF -- "$want" "$work/stderr" || fail "'${*:2}' said '$(cat "$work/stderr")', expected '$want'"
  lost=$((lost + 1))
}
to_full() { "$@" >/dev/full; }
to_closed() { "$@" >&-; }
for cmd in "trace" "trace --step 4" "bench --preset cat-sleeps --modes split --repeat 5" "kernels --m 4 --k 4 --n 4 --repeat 1" \
           "export --python $work/lost.py" "--help" "trace --help"; do
  # shellcheck disable=SC2086
  check_lost "cannot write standard output: No space left on device" to_full "$bin" $cmd
  # shellcheck disable=SC2086
  check_lost "cannot write standard output: it is closed" to_closed "$bin" $cmd
done
#    A closed standard output is not taken by the next file opened: the JSON holds no table.
rm -f "$work/closed.json"
check_lost "cannot write standard output: it is closed" to_closed "$bin" trace --json "$work/closed.json"
/usr/bin/python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$work/closed.json" 2>/dev/null ||
  fail "trace --json with standard output closed wrote a JSON that does not parse"
#    The file size limit (ulimit -f, in 1024-byte blocks) on a file and on standard output: named
#    in one line instead of SIGXFSZ ending the run, nothing half-written left.
echo old >"$work/limit.json"
check_lost "the file size limit (ulimit -f) was reached writing $work/limit.json; nothing there was replaced" \
  sh -c 'ulimit -f 16; exec "$@" >/dev/null' sh "$bin" trace --preset gpt2-small --tokens 16 --json "$work/limit.json"
[ "$(cat "$work/limit.json")" = old ] && [ -z "$(ls "$work" | grep '^limit.json.tmp')" ] ||
  fail "the file size limit: $work/limit.json changed or a temporary file was left: $(ls "$work" | grep limit)"
check_lost "the file size limit (ulimit -f) was reached writing $work/limit.py; nothing there was replaced" \
  sh -c 'ulimit -f 16; exec "$@" >/dev/null' sh "$bin" export --python "$work/limit.py" --tokens 16 --d-in 48 --d-out 48 --heads 12
[ ! -e "$work/limit.py" ] || fail "the file size limit: export left $work/limit.py"
check_lost "the file size limit (ulimit -f) was reached writing standard output" \
  sh -c 'ulimit -f 1; exec "$@" >"$0"' "$work/limit.txt" "$bin" trace --tokens 40 --step 4
#    A reader that has gone (the read end of the pipe closed before anything is written): no
#    message and no success, whether SIGPIPE ends the run (the default) or is ignored (141).
for ignore in no yes; do
  /usr/bin/python3 - "$ignore" "$bin" trace --json "$work/gone.json" <<'PY' || fail "a gone reader (SIGPIPE ignored: $ignore)"
import os, signal, subprocess, sys
ignore, cmd = sys.argv[1] == "yes", sys.argv[2:]
r, w = os.pipe()
os.close(r)
pre = (lambda: signal.signal(signal.SIGPIPE, signal.SIG_IGN)) if ignore else None
p = subprocess.run(cmd, stdout=w, stderr=subprocess.PIPE, preexec_fn=pre)
want = 141 if ignore else -signal.SIGPIPE
if p.returncode != want or p.stderr:
    sys.exit(f"exit {p.returncode} (expected {want}), stderr {p.stderr!r}")
PY
done
#    A target that is not a regular file is written in place, never renamed over: standard
#    output redirected to a file keeps the table before the JSON, a pipe gets both, a named
#    pipe and a device are opened for writing.
"$bin" trace --json /dev/stdout >"$work/log" 2>"$work/stderr" || fail "trace --json /dev/stdout > log exited $?: $(cat "$work/stderr")"
/usr/bin/python3 - "$work/log" <<'PY' || fail "trace --json /dev/stdout > log: the table and the JSON are not both there"
import json, sys
log = open(sys.argv[1]).read()
assert log.startswith("HeadSplit trace: "), log[:80]
begin, end = log.index('{"'), log.rindex("wrote /dev/stdout")
assert json.loads(log[begin:end])["format"] == "headsplit-trace"
PY
out=$("$bin" trace --json /dev/stdout | cat) && grep -qF '"format":"headsplit-trace"' <<<"$out" ||
  fail "trace --json /dev/stdout | cat: no JSON came through"
out=$("$bin" export --python /dev/fd/1 | head -1) && [ "$out" = "#!/usr/bin/env python3" ] ||
  fail "export --python /dev/fd/1 | head -1 printed '$out'"
mkfifo "$work/fifo"
cat "$work/fifo" >"$work/fifo.out" &
reader=$!
timeout 60 "$bin" trace --json "$work/fifo" >/dev/null || fail "trace --json into a named pipe exited $?"
wait "$reader"
/usr/bin/python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$work/fifo.out" || fail "the named pipe did not get the JSON"
[ -p "$work/fifo" ] || fail "trace --json replaced the named pipe"
"$bin" trace --json /dev/null >/dev/null || fail "trace --json /dev/null exited $?"
check_lost "cannot write /dev/full: No space left on device" "$bin" trace --json /dev/full >/dev/null
#    Legal names up to NAME_MAX (255 bytes) are written, though NAME.tmp.PID would pass it.
for n in 246 255; do
  name=$(head -c $((n - 5)) /dev/zero | tr '\0' a).json
  "$bin" trace --json "$work/$name" >/dev/null 2>"$work/stderr" || fail "a $n-byte name: $(cat "$work/stderr")"
  [ -s "$work/$name" ] || fail "a $n-byte name was not written"
  rm -f "$work/$name"
done
[ -z "$(ls "$work" | grep tmp)" ] || fail "a long name left a temporary file: $(ls "$work" | grep tmp)"
#    One file for two outputs (the same path, another spelling, a symlink, a hard link, a new
#    file by relative and absolute paths): refused naming both options, the file as it was.
echo mine >"$work/one.png" && ln "$work/one.png" "$work/hard.png" && ln -s one.png "$work/soft.png"
for pair in "--screenshot --layout-report:--screenshot $work/one.png --layout-report $work/one.png" \
            "--screenshot --layout-report:--screenshot $work/one.png --layout-report $work/hard.png" \
            "--screenshot --drive-report:--screenshot $work/soft.png --drive 5 --drive-report $work/one.png" \
            "--drive-report --layout-audit:--layout-audit $work/one.png --drive 5 --drive-report $work/./one.png"; do
  names=${pair%%:*}
  # shellcheck disable=SC2086
  refused_quickly "${names% *} and ${names#* } both name" ${pair#*:}
  [ "$(cat "$work/one.png")" = mine ] || fail "'${pair#*:}' changed the file"
done
refused_quickly "--python and --numpy both name $work/one.png (as $work/hard.png)" export --python "$work/one.png" --numpy "$work/hard.png"
#    Words after "--" and a flash block without flash, in bench as in trace.
check_refused 2 "headsplit takes no arguments after --, and was given --heads 4" trace -- --heads 4
check_refused 2 "headsplit takes no arguments after --, and was given x" bench --repeat 5 -- x
refused_quickly "headsplit takes no arguments after --, and was given --heads 4" -- --heads 4
check_refused 2 "block = 2 is the tile side of flash mode, but the mode is loop; add flash to --modes or drop --block" \
  bench --preset cat-sleeps --modes loop --block 2
"$bin" bench --preset cat-sleeps --modes split,flash --block 2 --repeat 5 >/dev/null || fail "bench --modes split,flash --block 2 exited $?"

# 4d. What reaches the terminal: a blank around a number is shown and refused the same way by
#     every numeric option; control characters (ESC, C1, DEL) in values, text and paths are
#     shown escaped in messages and tables, never sent.
check_refused 2 "--heads \"2 \" has a blank before or after it; give the value alone: --heads 2" trace --heads "2 "
check_refused 2 "--heads \" 2\" has a blank before or after it" trace --heads " 2"
check_refused 2 "--memory-budget \" 2GiB\" has a blank before or after it" trace --memory-budget " 2GiB"
check_refused 2 "--dropout \"0.1\\n\" has a blank before or after it; give the value alone: --dropout 0.1" trace --dropout $'0.1\n'
check_refused 2 "--tokens \"\\t3\" has a blank" trace --tokens "$(printf '\t3')"
check_refused 2 "--repeat \"5 \" has a blank" bench --repeat "5 "
check_refused_gui "--window \"1024x768 \" has a blank" --window "1024x768 "
check_refused_gui "--font-scale \" 1\" has a blank" --font-scale " 1"
check_refused 2 "--mode \"split \" is not a mode" trace --mode "split "
has_control() {  # file: whether it holds an ESC, DEL or C1 CSI byte
  LC_ALL=C grep -q "$(printf '[\033\177]')" "$1" || LC_ALL=C grep -q "$(printf '\302\233')" "$1"
}
no_escape() {  # what file
  has_control "$2" && fail "$1 sent a control character: $(cat -v "$2")"
  return 0
}
printf 'a\302\233b' >"$work/raw" && has_control "$work/raw" || fail "the check for control characters misses a raw CSI"
check_refused 2 'unknown preset "\x1b]0;owned\x07"' trace --preset "$(printf '\033]0;owned\007')"
no_escape "an OSC sequence in --preset" "$work/stderr"
check_refused 2 '--heads "\x1b[2J\u009b\x7f" is not a whole number' trace --heads "$(printf '\033[2J\302\233\177')"
no_escape "ESC, CSI and DEL in --heads" "$work/stderr"
check_refused 2 '--heads "\xc0\xaf" is not a whole number' trace --heads "$(printf '\300\257')"
check_refused 2 'The following argument was not expected: \x1b[31mred' trace "$(printf '\033[31mred')"
no_escape "an unexpected argument" "$work/stderr"
# A text holding ESC is refused (no sentence needs one), and the refusal names it, raw never.
check_refused 2 "word 2 of the text holds U+001B, a control character" trace --text "$(printf 'the \033[31mred\033[0m cat')"
no_escape "the refusal of a text with ESC" "$work/stderr"
"$bin" trace --json "$work/$(printf 'esc\033]0;x\007.json')" >"$work/stdout" 2>&1 || fail "a path with ESC exited $?"
grep -qF "wrote $work/esc\x1b]0;x\x07.json" "$work/stdout" || fail "the path in 'wrote': $(cat -v "$work/stdout")"
no_escape "the 'wrote' line" "$work/stdout"
rm -f "$work"/esc*
"$bin" trace --json "$work/no/$(printf '\033]0;x\007')/out.json" >/dev/null 2>"$work/stderr"
[ $? = 1 ] && grep -qF "cannot write $work/no/\x1b]0;x\x07/out.json" "$work/stderr" || fail "an unwritable path with ESC: $(cat -v "$work/stderr")"
no_escape "an unwritable path" "$work/stderr"

#    Where the numbers came from: a checkpoint's script names its folder and layer, the shipped
#    model's its preset, never a seed that played no part.
"$bin" export --python "$work/ckpt.py" --weights "$shipped" --layer 1 --text "the cat" >/dev/null || fail "export --weights exited $?"
grep -qF "Weights: \"the GPT-2 checkpoint in $shipped, layer 1 of 4\"." "$work/ckpt.py" || fail "export --weights: $(sed -n 3,5p "$work/ckpt.py")"
sed -n 1,6p "$work/ckpt.py" | grep -q "seed=" && fail "export --weights names a seed: $(sed -n 3p "$work/ckpt.py")"
out=$("$bin" trace --weights "$shipped" --layer 2) && grep -qxF "weights: the GPT-2 checkpoint in $shipped, layer 2 of 4" <<<"$out" ||
  fail "trace --weights: the table does not name the checkpoint: $(head -2 <<<"$out")"
"$bin" export --python "$work/tiny.py" --preset tiny-trained >/dev/null || fail "export --preset tiny-trained exited $?"
grep -qF "Weights: \"the tiny-trained preset: the GPT-2 checkpoint shipped with HeadSplit" "$work/tiny.py" ||
  fail "export --preset tiny-trained: $(sed -n 3,5p "$work/tiny.py")"
"$bin" export --python "$work/seeded.py" --seed 7 >/dev/null && grep -qF "Weights: \"random, from seed 7\"." "$work/seeded.py" ||
  fail "export --seed 7: $(sed -n 3,5p "$work/seeded.py")"

# 5. A good --json is complete JSON, written in one piece.
"$bin" trace --mode fused --json "$work/good.json" >/dev/null || fail "trace --json exited $?"
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert d['format']=='headsplit-trace' and d['version']==4" \
  "$work/good.json" || fail "trace --json did not write a headsplit-trace v3 document"
[ -z "$(ls "$work" | grep tmp)" ] || fail "trace --json left a temporary file"

# 6. The GL backend runs headless; a kernel that fails to compile falls back to the CPU
#    with one line naming the shader and its line, and the run still succeeds.
out=$(env -u DISPLAY "$bin" trace --backend gl 2>"$work/stderr") || fail "trace --backend gl exited $?"
grep -q 'backend=gl' <<<"$out" || fail "trace --backend gl did not run on GL: $out"
[ ! -s "$work/stderr" ] || fail "trace --backend gl printed: $(cat "$work/stderr")"
out=$(HEADSPLIT_GL_BREAK_SHADER=matmul_blocked.comp "$bin" trace --backend gl 2>"$work/stderr") ||
  fail "a broken shader made trace exit $?"
grep -q 'backend=cpu' <<<"$out" || fail "a broken shader did not fall back to the CPU: $out"
[ "$(wc -l <"$work/stderr")" = 1 ] || fail "the fallback notice is not one line: $(cat "$work/stderr")"
grep -q 'shader matmul_blocked.comp failed to compile at matmul_blocked.comp line [0-9]*: .*using the CPU backend' \
  "$work/stderr" || fail "the fallback notice does not name the shader and line: $(cat "$work/stderr")"

# 6b. A GL error during a step: one line naming it, the run finishes on the CPU.
out=$(HEADSPLIT_GL_FAIL_DISPATCH=softmax "$bin" trace --backend gl 2>"$work/stderr") || fail "a GL error made trace exit $?"
grep -q 'backend=cpu' <<<"$out" || fail "a GL error did not fall back to the CPU: $out"
grep -q '^headsplit: GL error 0x0501 while softmax; using the CPU backend$' "$work/stderr" ||
  fail "the GL error notice: $(cat "$work/stderr")"

# 7. No GL 4.3 context, for real: Mesa capped at GL 3.3, and an EGL with no vendor library.
#    The one backend policy: the CPU takes over, with one notice line naming the reason.
no_context() {  # reason-substring
  out=$("$bin" trace --backend gl 2>"$work/stderr") || fail "no GL context ($1): trace exited $?"
  grep -q 'backend=cpu' <<<"$out" || fail "no GL context ($1): did not run on the CPU: $out"
  [ "$(wc -l <"$work/stderr")" = 1 ] || fail "no GL context ($1): notice is not one line: $(cat "$work/stderr")"
  grep -qF -- "$1" "$work/stderr" && grep -q 'using the CPU backend$' "$work/stderr" ||
    fail "no GL context ($1): the notice said '$(cat "$work/stderr")'"
}
export MESA_GL_VERSION_OVERRIDE=3.3
no_context "no headless OpenGL 4.3 context: eglCreateContext for GL 4.3 core failed"
unset MESA_GL_VERSION_OVERRIDE
export __EGL_VENDOR_LIBRARY_FILENAMES=/nonexistent/vendor.json
no_context "no headless OpenGL 4.3 context"
unset __EGL_VENDOR_LIBRARY_FILENAMES

if [ "$failures" -gt 0 ]; then
  echo "$failures CLI check(s) failed"
  exit 1
fi
echo "all CLI checks passed ($refused bad invocations refused, $lost lost outputs reported, $signalled signals cleaned up after)"
