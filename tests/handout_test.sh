#!/usr/bin/env bash
# The handout (issue 12): `headsplit handout --out DIR`, drawn offscreen through EGL with no
# display. DIR gets one picture per step of the trace (1600x1000, the light theme, not blank,
# each step its own picture) and index.html: self-contained (no network address, the pictures
# beside it), each step's number, op, shape change and PyTorch line as `headsplit trace --json`
# records them, and the matmul counts of loop / split / fused as their traces count them.
# No temporary file is left. A DIR that cannot be written is refused before any work, in one line.
# Usage: handout_test.sh PATH/TO/headsplit PATH/TO/png_stats PATH/TO/python3
set -u
bin=$1
stats=$2
python=$3
work=$(mktemp -d)
shipped=$(cd "$(dirname "$0")/../assets/tiny-gpt2" && pwd)
trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
unset DISPLAY WAYLAND_DISPLAY  # no display: the handout needs none
# Under the sanitizers, LeakSanitizer's scan of thread-local storage reads glibc 2.36's table
# of dlopened TLS blocks and can crash on an entry Mesa's offscreen context left ("Tracer
# caught signal 11", DTLS), a fault of the checker, not a finding: the handout's runs leave
# TLS unscanned. Fewer roots can only report more, never hide a leak.
if [ -n "${LSAN_OPTIONS:-}" ]; then export LSAN_OPTIONS="$LSAN_OPTIONS:use_tls=0"; fi

check_handout() {  # name args...
  local name=$1
  shift
  local dir="$work/$name"
  "$bin" handout --out "$dir" "$@" >"$work/$name.out" 2>"$work/$name.err" || {
    fail "$name: handout exited non-zero: $(head -c 400 "$work/$name.err")"
    return
  }
  "$bin" trace --json "$work/$name.json" "$@" >/dev/null 2>&1 || { fail "$name: trace failed"; return; }
  local rest=() skip=0 a
  for a in "$@"; do  # the same options without --mode, for one trace per mode
    if [ "$skip" = 1 ]; then skip=0; elif [ "$a" = --mode ]; then skip=1; else rest+=("$a"); fi
  done
  for m in loop split fused; do  # a mode the configuration cannot take leaves no file: the page must say so
    "$bin" trace --json "$work/$name-$m.json" "${rest[@]}" --mode $m >/dev/null 2>&1 || rm -f "$work/$name-$m.json"
  done
  # The page's "rerun it" command gives the same trace.
  local rerun
  rerun=$("$python" -c 'import html,re,sys; m = re.search(r"<code dir=\"ltr\"><bdi>headsplit trace (.*?)</bdi></code>", open(sys.argv[1]).read()); print(html.unescape(m.group(1)) if m else "")' "$dir/index.html")
  if [ -z "$rerun" ]; then
    fail "$name: no rerun command on the page"
  else
    eval "\"\$bin\" trace --json \"\$work/\$name-rerun.json\" $rerun" >/dev/null 2>&1 || fail "$name: the rerun command failed: $rerun"
    "$python" - "$work/$name.json" "$work/$name-rerun.json" <<'PY' || fail "$name: the rerun command gives another trace: $rerun"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
# The page gives no --backend: a GL handout reruns on the CPU, equal within 1e-4.
flat = lambda d: [v for s in d["steps"] for t in s["tensors"] for v in t["data"]]
same = [x is None and y is None or (x is not None and y is not None and abs(x - y) <= 1e-4) for x, y in zip(flat(a), flat(b))]
ok = len(flat(a)) == len(flat(b)) and all(same) and a["config"]["batch_tokens"] == b["config"]["batch_tokens"]
ok = ok and [s["op"] for s in a["steps"]] == [s["op"] for s in b["steps"]]
sys.exit(0 if ok else 1)
PY
  fi
  ls "$dir" | grep -q 'tmp' && fail "$name: a temporary file is left: $(ls "$dir")"
  local steps
  steps=$("$python" -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["steps"]))' "$work/$name.json")
  local pngs
  pngs=$(ls "$dir" | grep -c '^step-[0-9][0-9]\.png$')
  [ "$pngs" = "$steps" ] || fail "$name: $pngs pictures for $steps steps"
  local prev=""
  for f in "$dir"/step-*.png; do
    read -r _ w h _ n _ b <<<"$("$stats" "$f" | grep '^size')"
    [ "$w $h" = "1600 1000" ] || fail "$name: $(basename "$f") is ${w}x${h}, not 1600x1000"
    [ "${n:-0}" -gt 100 ] || fail "$name: $(basename "$f") looks blank ($n colours)"
    [ "${b:-0}" -gt 170 ] || fail "$name: $(basename "$f") is not the light theme (mean brightness $b)"
    if [ -n "$prev" ]; then
      d=$("$stats" "$prev" "$f" | awk '/^differ/ {print $2}')
      "$python" -c "import sys; sys.exit(0 if float('$d') > 0.001 else 1)" || fail "$name: $(basename "$f") is the same picture as $(basename "$prev")"
    fi
    prev=$f
  done
  "$python" - "$dir/index.html" "$work/$name.json" "$work/$name-loop.json" "$work/$name-split.json" "$work/$name-fused.json" <<'PY' || fail "$name: index.html"
import html, json, re, sys
page = open(sys.argv[1], encoding="utf-8").read()
trace = json.load(open(sys.argv[2]))
problems = []
if re.search(r"(https?:)?//[a-z]", page, re.I) or "<link" in page or "<script" in page:
    problems.append("refers to something outside the folder")
text = html.unescape(page)
sections = re.findall(r'<section class="step">(.*?)</section>', page, re.S)
if len(sections) != len(trace["steps"]) + 1:
    problems.append(f"{len(sections)} sections for {len(trace['steps'])} steps and the counts")
def shape(s): return "[" + ", ".join(str(d) for d in s) + "]"
for s, sec in zip(trace["steps"], sections):
    if f'src="step-{s["index"]:02d}.png"' not in sec:
        problems.append(f"step {s['index']}: no picture step-{s['index']:02d}.png")
    sec = html.unescape(re.sub(r"<[^>]+>", "", sec))  # the text a reader sees
    out = s["tensors"][0 if s["op"] == "input" else -1]  # the step's result (x for the input)
    want = [f"Step {s['index']}: {s['op']}", shape(out["shape"]), "strides " + shape(out["strides"]),
            s["code"], s["explain"]]
    if out.get("from"):
        link = out["from"][0]
        if "step" in link:
            src = next(t for t in trace["steps"][link["step"]]["tensors"] if t["name"] == link["tensor"])
            want.append(shape(src["shape"]) + " \u2192 " + shape(out["shape"]))
    for w in want:
        if w not in sec:
            problems.append(f"step {s['index']}: '{w}' missing")
for mode, path in zip(["loop", "split", "fused"], sys.argv[3:]):
    try:
        t = json.load(open(path))
    except OSError:  # refused for this configuration: the row says so
        if not re.search(rf"<td>{mode}</td><td>-</td><td>not with this configuration: ", page):
            problems.append(f"the counts: {mode} is refused here and the page does not say so")
        continue
    n = sum(st["matmuls"] for st in t["steps"])
    if not re.search(rf"<td>{mode}</td><td>{n}</td><td>{len(t['steps'])}</td>", page):
        problems.append(f"the counts: {mode} should be {n} matmuls in {len(t['steps'])} steps")
for p in problems[:10]:
    print(p)
sys.exit(1 if problems else 0)
PY
}

check_handout default
check_handout nine-words-loop --text "the quick brown fox jumps over the lazy dog" --d-in 12 --d-out 12 --heads 3 --mode loop
check_handout dropout --dropout 0.3 --mode fused --backend gl
# Issue 13: a padded batch with one key/value head; cross-attention (fused refused); decoding
# (loop refused) on the GL backend.
check_handout batch-mqa --text "the cat sleeps on the mat" --text "a dog" --kv-heads 1
check_handout cross --context "le chat dort sur le tapis" --heads 3
check_handout decode --text "the cat sleeps here" --decode-from 2 --kv-heads 1 --backend gl
# Hostile input: a sentence with quotes, a command substitution and a backquote must rerun as
# the same text and run nothing (the marker files must not appear); flash's tile side reruns too.
check_handout quotes --text "say \"hi\" it's \$(touch $work/pwned) \`touch $work/pwned2\`" --heads 3
[ -e "$work/pwned" ] || [ -e "$work/pwned2" ] && fail "the rerun command ran a command from the sentence"
"$bin" handout --out "$work/flash" --text "the quick brown fox jumps" --mode flash --block 2 >/dev/null 2>&1 &&
  grep -q -- "--mode flash --seed 0 --block 2" "$work/flash/index.html" || fail "flash: the rerun command lacks --block 2"

# A folder reused: the earlier, longer handout's extra pictures go, and the command says so.
"$bin" handout --out "$work/reused" --mode flash --text "the cat sleeps on the mat" --block 2 >/dev/null 2>&1 ||
  fail "reused: the first handout failed"
before=$(ls "$work/reused" | grep -c '^step-')
out=$("$bin" handout --out "$work/reused" 2>&1) || fail "reused: the second handout failed: $out"
after=$(ls "$work/reused" | grep -c '^step-')
[ "$after" = 12 ] || fail "reused: $after pictures after replacing a $before-picture handout with a 12-step one"
grep -qF "replaced the handout that was in $work/reused and removed its $((before - 12)) pictures past step 11" <<<"$out" ||
  fail "reused: the command did not say what it replaced: $out"

# The GL backend's handout reruns on the GL backend.
grep -q -- "--backend gl" "$work/decode/index.html" || fail "decode: the rerun command lacks --backend gl"

# A folder whose index.html is the user's own page: refused, the page kept.
mkdir -p "$work/mine" && echo "<html><title>my notes</title></html>" >"$work/mine/index.html"
"$bin" handout --out "$work/mine" >/dev/null 2>"$work/mine.err" && fail "a folder with the user's own index.html was accepted"
grep -qF "$work/mine/index.html is there and is not a HeadSplit handout" "$work/mine.err" || fail "the user's page: $(cat "$work/mine.err")"
grep -q "my notes" "$work/mine/index.html" || fail "the user's own index.html was replaced"

# A folder where a picture would go: refused before anything moves, the earlier handout whole.
"$bin" handout --out "$work/blocked" --heads 2 >/dev/null 2>&1 || fail "blocked: the first handout failed"
(cd "$work/blocked" && md5sum * >"$work/blocked.md5")
mkdir "$work/blocked/step-12.png"
"$bin" handout --out "$work/blocked" --mode flash --block 2 --text "the cat sleeps on the mat" >/dev/null 2>"$work/blocked.err" &&
  fail "a handout over a folder named step-12.png exited 0"
grep -qF "$work/blocked/step-12.png is a folder or a device, not a file" "$work/blocked.err" || fail "blocked: $(cat "$work/blocked.err")"
(cd "$work/blocked" && md5sum -c --quiet "$work/blocked.md5" >/dev/null 2>&1) || fail "blocked: the earlier handout changed"
[ -z "$(ls -A "$work/blocked" | grep '^\.headsplit-handout')" ] || fail "blocked: the staging folder was left"

# A handout that cannot be finished (a full disk; SIGTERM) leaves the earlier one whole: the
# same files, byte for byte, and nothing of the new one.
same_as_before() {  # dir what
  (cd "$1" && md5sum -c --quiet "$work/before.md5" >/dev/null 2>&1) || fail "$2: the earlier handout changed"
  [ "$(ls -A "$1" | wc -l)" = "$(wc -l <"$work/before.md5")" ] || fail "$2: files were added: $(ls -A "$1")"
}
if [ "$(id -u)" = 0 ] && mkdir -p "$work/disk" && mount -t tmpfs -o size=2600k tmpfs "$work/disk" 2>/dev/null; then
  "$bin" handout --out "$work/disk/h" --heads 2 >/dev/null 2>&1 || fail "full disk: the first handout failed"
  (cd "$work/disk/h" && ls -A | xargs md5sum >"$work/before.md5")
  "$bin" handout --out "$work/disk/h" --heads 3 --text "the quick brown fox jumps over" >/dev/null 2>"$work/disk.err" &&
    fail "a handout onto a full disk exited 0"
  grep -qF "No space left on device; nothing there was replaced" "$work/disk.err" || fail "full disk: $(cat "$work/disk.err")"
  same_as_before "$work/disk/h" "full disk"
  umount "$work/disk"
else
  echo "note: not root or no tmpfs here; the full-disk handout is not run"
fi
"$bin" handout --out "$work/killed" --heads 2 >/dev/null 2>&1 || fail "the handout to kill: the first one failed"
(cd "$work/killed" && ls -A | xargs md5sum >"$work/before.md5")
# (Flash with one key per tile: 53 steps, so the kill lands while the pictures are made.) Every
# signal that ends a process by default does the same (a few of them here; cli_test.sh has all).
for sig in TERM ALRM USR1 XCPU; do
  "$bin" handout --out "$work/killed" --mode flash --block 1 --text "the quick brown fox jumps over the lazy dog" >/dev/null 2>&1 &
  pid=$!
  for _ in $(seq 600); do
    [ "$(ls -A "$work"/killed/.headsplit-handout.* 2>/dev/null | grep -c '^step-')" -ge 2 ] && break
    sleep 0.02
  done
  kill -"$sig" "$pid"
  wait "$pid"
  rc=$?
  [ "$rc" = $((128 + $(kill -l "$sig"))) ] || fail "a handout killed by SIG$sig exited $rc (it had finished?)"
  same_as_before "$work/killed" "SIG$sig"
done
# The file size limit (ulimit -f, 1024-byte blocks: a picture is larger): one line naming it and
# the picture, the earlier handout whole.
(ulimit -c 0 -f 64; exec "$bin" handout --out "$work/killed" --heads 3 >/dev/null 2>"$work/limit.err")
rc=$?
[ "$rc" = 1 ] && grep -qF "the file size limit (ulimit -f) was reached writing $work/killed/step-00.png" "$work/limit.err" ||
  fail "a handout past the file size limit: exit $rc, $(cat "$work/limit.err")"
same_as_before "$work/killed" "the file size limit"

# A folder keeps every file the handout did not make: a picture of the user's where one would
# go, or past the last step, or an earlier handout's picture changed since, is refused by name
# before any work, and stays as it was. The handout knows its own files by its manifest.
mkdir -p "$work/theirs" && echo "my picture" >"$work/theirs/step-00.png"
"$bin" handout --out "$work/theirs" >/dev/null 2>"$work/theirs.err" && fail "a folder holding the user's step-00.png was accepted"
grep -qF "$work/theirs/step-00.png is there and was not made by a HeadSplit handout" "$work/theirs.err" || fail "the user's picture: $(cat "$work/theirs.err")"
[ "$(cat "$work/theirs/step-00.png")" = "my picture" ] && [ "$(ls -A "$work/theirs")" = step-00.png ] ||
  fail "the user's picture was replaced or files were added: $(ls -A "$work/theirs")"
"$bin" handout --out "$work/own" >/dev/null 2>&1 || fail "own: the first handout failed"
grep -q '^step-11.png [0-9]' "$work/own/.headsplit-manifest" || fail "own: the manifest does not list step-11.png"
echo "my picture" >"$work/own/step-40.png"
"$bin" handout --out "$work/own" >/dev/null 2>"$work/own.err" && fail "a handout over the user's step-40.png exited 0"
grep -qF "$work/own/step-40.png is there and was not made" "$work/own.err" || fail "own, step-40: $(cat "$work/own.err")"
rm "$work/own/step-40.png"
echo "drawn over" >>"$work/own/step-03.png"
"$bin" handout --out "$work/own" >/dev/null 2>"$work/own.err" && fail "a handout over an edited step-03.png exited 0"
grep -qF "$work/own/step-03.png is there and was not made by a HeadSplit handout (or was changed since)" "$work/own.err" ||
  fail "own, edited: $(cat "$work/own.err")"
tail -c 11 "$work/own/step-03.png" | grep -q "drawn over" || fail "the edited picture was replaced"

# Where the numbers came from: a checkpoint's handout names its folder and layer and reruns
# it; the shipped model's names its preset; neither says "seed".
check_handout weights --weights "$shipped" --layer 1 --text "the cat"
grep -qF "<td>weights</td><td>the GPT-2 checkpoint in $shipped, layer 1 of 4" "$work/weights/index.html" ||
  fail "weights: the page does not name the checkpoint and layer: $(grep -o '<td>weights</td><td>[^<]*' "$work/weights/index.html")"
grep -qF "<code dir=\"ltr\"><bdi>headsplit trace --weights $shipped --text 'the cat' --layer 1" "$work/weights/index.html" ||
  fail "weights: no rerun line naming the folder"
check_handout tiny --preset tiny-trained --layer 2
grep -qF "<td>weights</td><td>the tiny-trained preset: the GPT-2 checkpoint shipped with HeadSplit" "$work/tiny/index.html" ||
  fail "tiny-trained: the page does not name the preset: $(grep -o '<td>weights</td><td>[^<]*' "$work/tiny/index.html")"
for d in weights tiny; do
  grep -o '<td>weights</td><td>[^<]*' "$work/$d/index.html" | grep -q seed && fail "$d: the page names a seed"
done

# Refused before any work, one line, nothing written.
for bad in /proc/headsplit-handout "$work/default/index.html"; do
  if "$bin" handout --out "$bad" >"$work/bad.out" 2>"$work/bad.err"; then
    fail "handout --out $bad was accepted"
  else
    [ "$(wc -l <"$work/bad.err")" = 1 ] || fail "handout --out $bad: not one line: $(cat "$work/bad.err")"
    grep -q "$bad" "$work/bad.err" || fail "handout --out $bad: the message does not name it: $(cat "$work/bad.err")"
  fi
done
mkdir "$work/locked" && chmod 500 "$work/locked"
if [ "$(id -u)" != 0 ]; then  # root writes anywhere: only a user can be refused here
  "$bin" handout --out "$work/locked" >/dev/null 2>&1 && fail "an unwritable folder was accepted"
fi
"$bin" handout --out "$work/big" --preset gpt3 >/dev/null 2>"$work/big.err" && fail "gpt3 (shapes only) made a handout"
[ -z "$(ls -A "$work/big" 2>/dev/null)" ] || fail "a refused handout left files: $(ls "$work/big")"
# A right-to-left sentence is isolated: it cannot reorder the title, the heading or the rerun line.
"$bin" handout --out "$work/rtl" --text "$(printf '\327\251\327\234\327\225\327\235 cat')" >/dev/null 2>"$work/rtl.err" || fail "a Hebrew sentence: $(cat "$work/rtl.err")"
"$python" - "$work/rtl/index.html" <<'PY' || fail "a Hebrew sentence is not isolated in the handout"
import sys
page = open(sys.argv[1], encoding="utf-8").read()
word = "\u05e9\u05dc\u05d5\u05dd cat"
for want in ("<title>HeadSplit handout: \u2068" + word + "\u2069</title>", "&ldquo;<bdi>" + word + "</bdi>&rdquo;",
             "<code dir=\"ltr\"><bdi>headsplit trace --text '" + word + "'"):
    if want not in page:
        sys.exit(f"missing: {want!r}")
PY
# A flash trace of many tiles: 536 steps, a picture each, refused before any work past the
# 300 drawn by default, with the count to ask for; asked for, it is drawn.
"$bin" handout --out "$work/tiles" --tokens 64 --d-out 8 --heads 2 --mode flash --block 2 >/dev/null 2>"$work/tiles.err"
[ $? = 2 ] && grep -qF "the handout would draw 536 pictures, one a step, more than the 300 it draws unless --max-pictures 536" "$work/tiles.err" ||
  fail "a 536-step handout: $(cat "$work/tiles.err")"
[ -z "$(ls -A "$work/tiles" 2>/dev/null)" ] || fail "a refused 536-step handout left files: $(ls "$work/tiles")"
"$bin" handout --out "$work/tiles" --tokens 8 --d-out 8 --heads 2 --mode flash --block 2 --max-pictures 40 >/dev/null 2>"$work/tiles.err" ||
  fail "a handout within --max-pictures: $(cat "$work/tiles.err")"

if [ "$failures" -gt 0 ]; then
  echo "$failures failure(s)"
  exit 1
fi
echo "handout: all checks passed"
