#!/usr/bin/env bash
# Installs the MCP Inspector's CLI (@modelcontextprotocol/inspector, pinned below) with the Node 22 it
# needs (the npm `node` package), both from the npm registry, into .inspector/ in this checkout
# (git-ignored). tests/e2e-service.test.ts runs it as a third kind of MCP client of the background
# service; without it that part skips and says so. It is not a devDependency: it wants Node 22.19+,
# and `npm ci` on the Node 20 this project supports would warn about it.
#
#   scripts/install-inspector.sh      (.ci/run runs it)
set -euo pipefail
INSPECTOR_VERSION=2.12.0
dir="$(cd "$(dirname "$0")/.." && pwd)/.inspector"
if [ -x "$dir/node_modules/.bin/node" ] && [ -f "$dir/node_modules/@modelcontextprotocol/inspector/package.json" ] &&
  grep -q "\"version\": \"$INSPECTOR_VERSION\"" "$dir/node_modules/@modelcontextprotocol/inspector/package.json"; then
  exit 0
fi
mkdir -p "$dir"
# The node package installs its binary in an install script, which npm runs only when allowed.
echo '{"name": "mcpproxy-inspector", "private": true, "allowScripts": {"node": true}}' >"$dir/package.json"
(cd "$dir" && npm install --no-audit --no-fund --loglevel=error node@22 "@modelcontextprotocol/inspector@$INSPECTOR_VERSION" >/dev/null)
echo "installed the MCP Inspector $INSPECTOR_VERSION and Node $("$dir/node_modules/.bin/node" --version) in $dir"
