#!/usr/bin/env bash
# tools/check_commits.sh on a throwaway repository: a base commit, then commits whose subjects
# keep the rules (pass) and ones that break each rule (fail, naming the commit); a merge is
# skipped; a base the clone does not have means every commit is checked, after one line.
# Usage: commit_check_test.sh PATH/TO/check_commits.sh
set -u
check=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# No user or system git configuration (signing, hooks, templates) reaches the repository.
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null HOME=$work
export GIT_AUTHOR_NAME=test GIT_AUTHOR_EMAIL=test@example.org
export GIT_COMMITTER_NAME=test GIT_COMMITTER_EMAIL=test@example.org
repo=$work/repo
git init -q -b main "$repo" || { echo "FAIL: git init"; exit 1; }
cd "$repo" || exit 1
commit() { git commit -q --allow-empty -m "$1"; }
commit "initial work, before the rule came in." # the base may break the rules
base=$(git rev-parse HEAD)

# expect RC PATTERN ARGS...: the script's exit code is RC and its output holds PATTERN.
expect() {
  local rc=$1 pattern=$2
  shift 2
  "$check" "$@" >"$work/out" 2>&1
  local got=$?
  [ "$got" = "$rc" ] || fail "check_commits $* exited $got, expected $rc: $(cat "$work/out")"
  grep -qF -- "$pattern" "$work/out" || fail "check_commits $* did not say '$pattern': $(cat "$work/out")"
}

commit "Split the README into a front page and docs/"
commit "Embed the shaders at build time"   # a stem that ends in "ed"
commit "Bring the strip into view"         # and one in "ing"
commit "$(printf 'Keep the step\n\nA body of any length: %0100d' 0)"
expect 0 "4 commit subjects after" "$base"

git checkout -q -b side
commit "Add a side branch"
git checkout -q main
commit "Add a line on main"
git merge -q --no-ff -m "Merge branch 'side' into a subject far longer than seventy-two characters." side
expect 0 "6 commit subjects after" "$base"

good=$(git rev-parse HEAD)
for bad in "Added the docs" "Fixing the strip" "Split the README." \
           "Split the README into a front page and docs/, moving the guide, the benchmarks out"; do
  git reset -q --hard "$good"
  commit "$bad"
  expect 1 "$(git rev-parse --short=12 HEAD)" "$base"
  expect 1 "1 of 7 commit subjects" "$base"
done
grep -qF "over 72" "$work/out" || fail "the long subject's line does not say why: $(cat "$work/out")"
expect 0 "6 commit subjects after" "$base" "$good"  # TIP before the bad commit

# A base this clone does not have (as in a shallow clone): one line, then every commit.
expect 1 "is not in this clone's history" 0123456789abcdef0123456789abcdef01234567
git reset -q --hard "$good"
expect 1 "commit subjects in this clone break the rules" 0123456789abcdef0123456789abcdef01234567
shallow=$work/shallow
git clone -q --depth 2 "file://$repo" "$shallow" || fail "git clone --depth 2"
(cd "$shallow" && "$check" "$base") >"$work/out" 2>&1
rc=$?
[ "$rc" = 0 ] || fail "the shallow clone's 2 commits failed: $(cat "$work/out")"
[ "$(grep -c "not in this clone's history" "$work/out")" = 1 ] ||
  fail "the shallow clone did not say once that the base is missing: $(cat "$work/out")"
grep -qF "2 commit subjects in this clone" "$work/out" || fail "the shallow clone: $(cat "$work/out")"

if [ "$failures" -gt 0 ]; then
  echo "$failures commit-check check(s) failed"
  exit 1
fi
echo "commit check: good subjects pass, each broken rule fails, merges skipped, shallow clones checked"
