#!/usr/bin/env bash
# The client the conformance suite's `client --suite auth` runs: `auth-client.sh SERVER_URL`.
# It does what a user does: a config naming the server, `mcpproxy auth login` (the "browser" is
# fetch-url.mjs, which follows the authorization server's redirect to the loopback callback, as a
# browser would after the user approved), then `mcpproxy index`, which connects with the token and
# lists the server's tools, and a call of each tool through `mcpproxy serve` (call-tools.mjs). When
# either says the server needs a login again (it moved to another authorization server, or a call
# needs more scope), it logs in once more and tries again, as a person told so would. A
# pre-registered client (the suite passes it in MCP_CONFORMANCE_CONTEXT) goes into the config's
# "oauth" entry; without one, the client metadata document URL the suite knows.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
node -e '
  const context = JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT || "{}");
  // Without a pre-registered client, a client metadata document URL, as a user may configure:
  // used where the authorization server takes one (the basic-cimd scenario expects this one).
  const oauth = context.client_id
    ? { clientId: context.client_id, ...(context.client_secret ? { clientSecret: context.client_secret } : {}) }
    : { clientMetadataUrl: "https://conformance-test.local/client-metadata.json" };
  const server = { url: process.argv[1], ...(oauth ? { oauth } : {}) };
  require("fs").writeFileSync(process.argv[2], JSON.stringify({ mcpServers: { conformance: server } }));
' "$1" "$work/config.json"
export BROWSER="node $here/fetch-url.mjs"
mcpproxy() { "$repo/dist/mcpproxy" "$@" --config "$work/config.json" --data-dir "$work/data"; }
# 3: the server asks for another login.
use() {
  local out
  out=$(mcpproxy index 2>&1) && status=0 || status=$?
  printf '%s\n' "$out" >&2
  if grep -q 'mcpproxy auth login conformance' <<<"$out"; then return 3; fi
  [ "$status" = 0 ] || return "$status"
  node "$here/call-tools.mjs" "$repo/dist/mcpproxy" "$work/config.json" "$work/data"
}
mcpproxy auth login conformance
outcome=0
use || outcome=$?
if [ "$outcome" = 3 ]; then
  mcpproxy auth login conformance
  use
else
  exit "$outcome"
fi
