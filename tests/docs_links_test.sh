#!/usr/bin/env bash
# README.md and docs/*.md name only files that exist (tools/check_docs_links.py), and the check
# itself fails where it should: on a scratch tree with a missing link target, a missing
# heading, a missing backquoted path and an abbreviated one.
# Usage: docs_links_test.sh PYTHON3 PATH/TO/check_docs_links.py REPOSITORY_ROOT
set -u
python=$1
check=$2
root=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# 1. The repository's own documents.
"$python" "$check" "$root" || fail "the repository's documents name files that do not exist (above)"

# 2. A scratch tree: good references pass, each broken one is named with its line.
mkdir -p "$work/docs" "$work/core/src" "$work/tests"
touch "$work/core/src/a.cpp" "$work/tests/test_x.cpp" "$work/docs/p.png"
cat >"$work/README.md" <<'EOF'
# Title
See [the guide](docs/guide.md#a-section), ![p](docs/p.png), `core/src/a.cpp:12`,
`tests/test_*.cpp`, `docs/{guide.md,p.png}` and [a site](https://example.org/x).
```
core/src/not-checked-in-a-code-block.cpp
```
EOF
printf '# Guide\n\n## A section\n\nBack to [the top](../README.md#title).\n' >"$work/docs/guide.md"
"$python" "$check" "$work" >"$work/out" 2>&1 || fail "good references refused: $(cat "$work/out")"

cat >>"$work/docs/guide.md" <<'EOF'
[gone](missing.md) [no heading](../README.md#nowhere) `core/src/b.cpp` `core/.../a.cpp`
EOF
"$python" "$check" "$work" >"$work/out" 2>&1 && fail "broken references passed: $(cat "$work/out")"
for want in "docs/guide.md:6: link to missing.md" "has no heading #nowhere" "\`core/src/b.cpp\` does not exist" \
            "\`core/.../a.cpp\` is not a whole path"; do
  grep -qF -- "$want" "$work/out" || fail "the check did not say '$want': $(cat "$work/out")"
done

if [ "$failures" -gt 0 ]; then
  echo "$failures docs-links check(s) failed"
  exit 1
fi
echo "docs links: the repository's documents name only files that exist; broken references are caught"
