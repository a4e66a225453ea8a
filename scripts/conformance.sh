#!/usr/bin/env bash
# Runs the official MCP conformance suite (@modelcontextprotocol/conformance, pinned below, with
# the Node 22 it needs; both installed from the npm registry into a temporary directory) for the
# 2026-07-28 and the 2025-11-25 requirement sets, in four legs each:
#   direct       server scenarios against tests/fixtures/conformance-server.ts over HTTP: the
#                baseline. The suite's own reference server is not on npm; this fixture serves
#                the names its scenarios ask for, on both eras. Every scored scenario must pass.
#   normal       server scenarios against `mcpproxy serve --transport http` with the fixture behind
#                it (the proxy renames what it federates: server__tool, mcpproxy://server/uri).
#   passthrough  the same with `serve --passthrough conformance` (the upstream's own names);
#                reported as skipped while `serve --help` does not list --passthrough.
#   client       client scenarios with mcpproxy as the client (scripts/conformance/client.sh).
# A leg passes when exactly the scored scenarios listed for it in
# scripts/conformance/expected-failures.yml fail (the suite's baseline rule: an unlisted failure
# or a listed scenario that passes fails the leg); every scenario the fixture passes directly must
# therefore pass through the proxy or be listed there with its reason. Ends with a table of counts.
#
#   npm run build && scripts/conformance.sh
#
# CONFORMANCE_UPSTREAM=http puts the fixture behind the proxy over HTTP (dual-era, sessionful for
# 2025 clients) instead of stdio. CONFORMANCE_KEEP=1 keeps the work directory (logs, checks.json).
set -euo pipefail
SUITE_VERSION=0.2.0-alpha.12
ERAS=(2026-07-28 2025-11-25)
repo=$(cd "$(dirname "$0")/.." && pwd)
binary="$repo/dist/mcpproxy"
bun="$repo/node_modules/.bin/bun"
fixture="$repo/tests/fixtures/conformance-server.ts"
expected="$repo/scripts/conformance/expected-failures.yml"
work=$(mktemp -d)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  if [ "${CONFORMANCE_KEEP:-0}" = 1 ]; then echo "work directory kept: $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT
[ -x "$binary" ] || { echo "conformance: $binary is missing: run npm run build first" >&2; exit 1; }

echo "conformance: installing node@22 and @modelcontextprotocol/conformance@$SUITE_VERSION"
mkdir -p "$work/suite" "$work/out"
# The node package installs its binary in an install script, which npm runs only when allowed.
echo '{"name": "mcpproxy-conformance", "private": true, "allowScripts": {"node": true}}' >"$work/suite/package.json"
(cd "$work/suite" && npm install --no-audit --no-fund --loglevel=error \
  node@22 "@modelcontextprotocol/conformance@$SUITE_VERSION" >/dev/null)
export PATH="$work/suite/node_modules/.bin:$PATH" CONFORMANCE_SUITE_DIR="$work/suite"

# Waits up to 20 s for PATTERN (an extended regex with one group) in FILE; prints the group.
wait_for() {
  local pattern=$1 file=$2
  for _ in $(seq 1 200); do
    if [ -f "$file" ] && grep -Eq "$pattern" "$file"; then
      sed -nE "s#.*$pattern.*#\\1#p" "$file" | head -1
      return 0
    fi
    sleep 0.1
  done
  echo "conformance: gave up waiting for /$pattern/ in $file:" >&2
  cat "$file" >&2 || true
  return 1
}

# The fixture over HTTP, for the direct leg (and behind the proxy with CONFORMANCE_UPSTREAM=http).
"$bun" "$fixture" --http 0 >"$work/fixture.out" 2>"$work/fixture.log" &
pids+=($!)
fixture_url="http://127.0.0.1:$(wait_for '\{"port":([0-9]+)\}' "$work/fixture.out")/mcp"

# Starts `mcpproxy serve --transport http` with the fixture behind it as server "conformance"
# (extra serve flags after NAME), waits until it is connected and sets proxy_url to its MCP URL.
# (Not run in $(...): the command substitution would wait for the server's end.)
proxy_url=""
start_proxy() {
  local name=$1 dir="$work/$1"
  shift
  mkdir -p "$dir"
  if [ "${CONFORMANCE_UPSTREAM:-stdio}" = http ]; then
    printf '{"mcpServers": {"conformance": {"url": "%s"}}}\n' "$fixture_url" >"$dir/config.json"
  else
    printf '{"mcpServers": {"conformance": {"command": "%s", "args": ["%s"]}}}\n' "$bun" "$fixture" >"$dir/config.json"
  fi
  local flags=(--config "$dir/config.json" --data-dir "$dir/data")
  "$binary" index "${flags[@]}" >"$dir/index.log" 2>&1 || true
  "$binary" serve --transport http --port 0 "${flags[@]}" "$@" >/dev/null 2>"$dir/proxy.log" &
  pids+=($!)
  proxy_url=$(wait_for 'serving MCP at (http://[0-9.:]+/mcp)' "$dir/proxy.log")
  for _ in $(seq 1 200); do
    # node, not curl: the only tools CI can count on are Node and npm.
    node -e 'fetch(process.argv[1]).then((r) => r.text()).then((t) => process.exit(/"state":"connected"/.test(t) ? 0 : 1), () => process.exit(1))' \
      "${proxy_url%/mcp}/health" && return 0
    sleep 0.1
  done
  echo "conformance: the $name proxy did not connect to the fixture within 20 s" >&2
}

# The suite-format baseline of one leg (section LEG-ERA of expected-failures.yml), as a file.
baseline_for() {
  node "$repo/scripts/conformance/legs.mjs" baseline "$expected" "$1" "$work/expected-$1.json"
  echo "$work/expected-$1.json"
}

# The scenarios SIDE (Server or Client) the requirement set ERA scores.
scored() {
  conformance list --requirements "$2" |
    awk -v side="$1" '$0 ~ "^" side " scenarios" { on = 1; next } on && /^  - / { print $2; next } on { exit }'
}

rows=()
details=()
# Records a finished leg from the checks.json files of its output directory: how many of the
# scored scenarios passed (no check FAILURE or WARNING, the rule the suite's baseline applies), the
# ones that did not, and the suite's verdict against the leg's baseline.
record() {
  local leg=$1 era=$2 side=$3 out=$4 verdict=$5 passed total failing
  read -r passed total failing < <(scored "$side" "$era" |
    node "$repo/scripts/conformance/legs.mjs" tally "$out" "$([ "$side" = Server ] && echo server-)")
  rows+=("$(printf '%-12s %-11s %-7s %3d/%-3d %s' "$leg" "$era" "${side,,}" "$passed" "$total" "$verdict")")
  [ -n "$failing" ] && details+=("$leg $era ($((total - passed))): $failing")
  return 0
}

# Why a leg failed its baseline: the suite's stale and unexpected entries, indented.
why() {
  sed -n '/Stale baseline entries\|Unexpected failures (not in/,$p' "$1" | sed 's/\x1b\[[0-9;]*m//g; s/^/    /'
}

status=0
run_server_leg() {
  local leg=$1 era=$2 url=$3 out="$work/out/$1-$2" verdict=ok
  echo "conformance: $leg, server scenarios, $era"
  conformance server --url "$url" --requirements "$era" --expected-failures "$(baseline_for "$leg-$era")" \
    -o "$out" >"$out.log" 2>&1 || { verdict="FAILED (see below)"; status=1; }
  record "$leg" "$era" Server "$out" "$verdict"
  [ "$verdict" = ok ] || why "$out.log"
}

run_client_leg() {
  local era=$1 out="$work/out/client-$1" verdict=ok
  echo "conformance: client scenarios with mcpproxy as the client, $era"
  conformance client --command "$repo/scripts/conformance/client.sh" --requirements "$era" \
    --expected-failures "$(baseline_for "client-$era")" -o "$out" >"$out.log" 2>&1 ||
    { verdict="FAILED (see below)"; status=1; }
  record client "$era" Client "$out" "$verdict"
  [ "$verdict" = ok ] || why "$out.log"
}

start_proxy normal
normal_url=$proxy_url
passthrough_url=""
if "$binary" serve --help 2>&1 | grep -q -- '--passthrough'; then
  start_proxy passthrough --passthrough conformance
  passthrough_url=$proxy_url
  export MCPPROXY_CONFORMANCE_PASSTHROUGH=1
fi

for era in "${ERAS[@]}"; do
  run_server_leg direct "$era" "$fixture_url"
  run_server_leg normal "$era" "$normal_url"
  if [ -n "$passthrough_url" ]; then
    run_server_leg passthrough "$era" "$passthrough_url"
  else
    rows+=("$(printf '%-12s %-11s %-7s %7s %s' passthrough "$era" server "-" "skipped: serve has no --passthrough yet")")
  fi
  run_client_leg "$era"
done

echo
echo "conformance $SUITE_VERSION: scored scenarios passed per leg"
printf '%-12s %-11s %-7s %7s %s\n' leg era side passed "verdict (against expected-failures.yml)"
printf '%s\n' "${rows[@]}"
[ ${#details[@]} -gt 0 ] && { echo; printf '%s\n' "${details[@]}"; }
exit "$status"
