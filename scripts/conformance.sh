#!/usr/bin/env bash
# Runs the official MCP conformance suite both ways: its server scenarios against
# `mcpproxy serve --transport http` with server-everything behind it, and its client `auth` suite
# with mcpproxy as the client (scripts/conformance/auth-client.sh: `auth login`, then `index`). The
# suite needs Node 22: it and the suite are installed from the npm registry into a temporary
# directory. Passes when exactly the scenarios listed in scripts/conformance/expected-failures.yml
# fail (their reasons are in that file and the README).
#
#   npm run build && scripts/conformance.sh
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'kill "${proxy:-}" 2>/dev/null || true; rm -rf "$work"' EXIT
cd "$work"
# The node package installs its binary in an install script, which npm runs only when allowed.
echo '{"name": "mcpproxy-conformance", "private": true, "allowScripts": {"node": true}}' > package.json
npm install --no-audit --no-fund node@22 @modelcontextprotocol/conformance@0.1 >/dev/null
cat > config.json <<JSON
{"mcpServers": {"everything": {"command": "node", "args": ["$repo/node_modules/@modelcontextprotocol/server-everything/dist/index.js", "stdio"]}}}
JSON
port=$((20000 + RANDOM % 20000))
"$repo/dist/mcpproxy" serve --transport http --port "$port" --config config.json --data-dir data 2>proxy.log &
proxy=$!
for _ in $(seq 1 100); do
  curl -sf "http://127.0.0.1:$port/health" >/dev/null 2>&1 && break
  sleep 0.1
done
status=0
PATH="$work/node_modules/.bin:$PATH" conformance server --url "http://127.0.0.1:$port/mcp" \
  --expected-failures "$repo/scripts/conformance/expected-failures.yml" || status=1
PATH="$work/node_modules/.bin:$PATH" conformance client --suite auth \
  --command "$repo/scripts/conformance/auth-client.sh" \
  --expected-failures "$repo/scripts/conformance/expected-failures.yml" || status=1
exit $status
