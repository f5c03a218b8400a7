#!/usr/bin/env bash
# GPT-2 checkpoints: tests/gpt2_checkpoint.py in a temporary folder (it writes the checkpoint,
# runs headsplit on both backends, checks against PyTorch and the oracle, and the refusals).
# With --shipped DIR: the same checks on the shipped tiny model and the tiny-trained preset.
# Usage: gpt2_test.sh PATH/TO/headsplit PATH/TO/python3 [--shipped DIR]
set -u
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$2" "$here/gpt2_checkpoint.py" "$1" "$here/oracle.py" "$work" "${@:3}"
