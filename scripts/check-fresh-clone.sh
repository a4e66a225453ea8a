#!/usr/bin/env bash
# Runs .ci/run in a fresh clone of the committed HEAD, the way CI does: catches files that were
# never committed, lockfile drift and anything installed only by hand.
set -euo pipefail
repo=$(git rev-parse --show-toplevel)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
git clone --quiet "$repo" "$work/clone"
# CI puts shared/ next to the clone; do the same where it exists.
[ -d "$repo/../shared" ] && ln -s "$repo/../shared" "$work/shared"
cd "$work/clone"
CI=true bash .ci/run
