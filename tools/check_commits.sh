#!/usr/bin/env bash
# Commit subjects that read as history (issue 43): every commit after BASE that is not a merge
# has a subject of at most 72 characters in the imperative. "Imperative" is checked the only
# way a script can: the subject does not end with a period, and its first word does not end in
# "ed" or "ing" ("Added", "Fixing"), apart from verbs whose stem ends so ("Embed", "Bring").
# Details belong in the commit's body, which is not checked.
#
# Usage: tools/check_commits.sh [BASE [TIP]]   (run inside the repository)
#   BASE  the last commit before the rule; default 2341c34, the last commit before issue 43
#   TIP   the last commit checked; default HEAD
# Where BASE is not in this clone's history (a shallow clone), every commit the clone has up to
# TIP is checked, after one line saying so. Exit 0: all good; 1: a subject breaks a rule;
# 2: TIP is not a commit.
set -euo pipefail
export LC_ALL=C.UTF-8  # ${#subject} counts characters, not bytes

base=${1:-2341c34f489bbc01700382cc85536acfcee984fe}
tip=${2:-HEAD}
max=72
# First words that end in "ed" or "ing" and are imperative all the same.
stems=" bed embed exceed feed heed need proceed seed shed shred speed succeed "
stems+="bring cling fling ping ring sing sting string swing wring "

if ! command -v git >/dev/null; then
  echo "check_commits: git is not installed; commit subjects not checked"
  exit 0
fi
if ! git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  echo "check_commits: not a git checkout; commit subjects not checked"
  exit 0
fi
if ! git rev-parse -q --verify "$tip^{commit}" >/dev/null; then
  echo "check_commits: $tip is not a commit" >&2
  exit 2
fi
if git rev-parse -q --verify "$base^{commit}" >/dev/null; then
  range=("$base..$tip")
  what="after ${base:0:12}"
else
  echo "check_commits: base ${base:0:12} is not in this clone's history (shallow?); checking every commit it has"
  range=("$tip")
  what="in this clone"
fi

checked=0
bad=0
while IFS=$'\t' read -r hash subject; do
  checked=$((checked + 1))
  first=${subject%% *}
  lower=${first,,}
  why=()
  [ "${#subject}" -le "$max" ] || why+=("${#subject} characters, over $max")
  [[ "$subject" != *. ]] || why+=("ends with a period")
  if [[ "$lower" =~ (ed|ing)$ ]] && [[ "$stems" != *" $lower "* ]]; then
    why+=("'$first' is not imperative (say 'Add', not 'Added' or 'Adding')")
  fi
  [ -n "$subject" ] || why+=("empty subject")
  if [ "${#why[@]}" -gt 0 ]; then
    bad=$((bad + 1))
    reasons=$(printf '%s; ' "${why[@]}")
    echo "${hash:0:12} ${reasons%; }: $subject"
  fi
done < <(git log --no-merges --format='%H%x09%s' "${range[@]}")

subjects="commit subject$([ "$checked" = 1 ] || echo s)"
if [ "$bad" -gt 0 ]; then
  echo "check_commits: $bad of $checked $subjects $what break the rules (at most $max characters, imperative, no final period)"
  exit 1
fi
echo "check_commits: $checked $subjects $what: at most $max characters, imperative, no final period"
