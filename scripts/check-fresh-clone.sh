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
mkdir "$work/home"
# The documented variables that name the assets kept out of the repository (README, Development):
# as set here, or where CI keeps them as seen from this checkout (.ci/assets.sh), since the clone
# below sits elsewhere.
mapfile -t assets < <(
  cd "$repo" && . .ci/assets.sh &&
    for name in MCPPROXY_TEST_MODELS MCPPROXY_EVAL_SET; do
      [ -n "${!name:-}" ] && printf '%s=%s\n' "$name" "${!name}"
    done
)
cd "$work/clone"
# The system's directories and Node's, nothing a user added by hand (a Bun in ~/.bun/bin, say).
path="$(dirname "$(command -v node)"):/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
env -i PATH="$path" HOME="$work/home" CI=true "${assets[@]}" bash .ci/run
