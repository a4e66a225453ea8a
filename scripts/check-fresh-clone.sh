#!/usr/bin/env bash
# Runs .ci/run in a fresh clone of the committed HEAD the way CI does, in a clean environment:
# only the system's PATH and a new, empty HOME, so nothing exported by hand, no npm config and no cache of this
# machine's user can hide a step the README does not give. Catches files that were never
# committed, lockfile drift and anything installed only by hand.
set -euo pipefail
repo=$(git rev-parse --show-toplevel)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
git clone --quiet "$repo" "$work/clone"
# CI puts shared/ next to the clone; do the same where it exists.
[ -d "$repo/../shared" ] && ln -s "$repo/../shared" "$work/shared"
mkdir "$work/home"
cd "$work/clone"
# The system's directories and Node's, nothing a user added by hand (a Bun in ~/.bun/bin, say).
path="$(dirname "$(command -v node)"):/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
env -i PATH="$path" HOME="$work/home" CI=true bash .ci/run
