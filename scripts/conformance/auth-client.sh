#!/usr/bin/env bash
# The client the conformance suite's `client --suite auth` runs: `auth-client.sh SERVER_URL`.
# It does what a user does: a config naming the server, `mcpproxy auth login` (the "browser" is
# fetch-url.mjs, which follows the authorization server's redirect to the loopback callback, as a
# browser would after the user approved), then `mcpproxy index`, which connects with the token and
# lists the server's tools. A pre-registered client (the suite passes it in
# MCP_CONFORMANCE_CONTEXT) goes into the config's "oauth" entry.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
node -e '
  const context = JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT || "{}");
  const oauth = context.client_id
    ? { clientId: context.client_id, ...(context.client_secret ? { clientSecret: context.client_secret } : {}) }
    : undefined;
  const server = { url: process.argv[1], ...(oauth ? { oauth } : {}) };
  require("fs").writeFileSync(process.argv[2], JSON.stringify({ mcpServers: { conformance: server } }));
' "$1" "$work/config.json"
export BROWSER="node $here/fetch-url.mjs"
"$repo/dist/mcpproxy" auth login conformance --config "$work/config.json" --data-dir "$work/data"
"$repo/dist/mcpproxy" index --config "$work/config.json" --data-dir "$work/data"
