#!/usr/bin/env bash
# The client the conformance suite's client scenarios run: `client.sh SERVER_URL`, with the
# scenario's name in MCP_CONFORMANCE_SCENARIO and its context (JSON) in MCP_CONFORMANCE_CONTEXT.
# It does what a user and an agent do with mcpproxy in front of that server:
#   1. a config naming the server "conformance" (a pre-registered OAuth client from the context
#      goes into its "oauth" entry);
#   2. for auth/* scenarios, `mcpproxy auth login` (the "browser" is fetch-url.mjs, which follows
#      the authorization server's redirect to the loopback callback, as a browser would after the
#      user approved); without a pre-registered client the config names a client metadata
#      document URL, as a user may;
#   3. `mcpproxy index`, which connects and lists the server's tools;
#   4. drive-proxy.ts: `mcpproxy serve` with an agent that calls the server's tools (and reads its
#      resources and prompts) through the proxy, with `--passthrough conformance` when the binary
#      has it (MCPPROXY_CONFORMANCE_PASSTHROUGH=1, set by scripts/conformance.sh).
# A failed step is reported and the next one still runs: the scenario server judges what reached it.
# When index or a call says the server needs a login again, it logs in once more and repeats 3-4.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
url="${!#}"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
node -e '
  const context = JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT || "{}");
  // Without a pre-registered client, a client metadata document URL, as a user may configure:
  // used where the authorization server takes one (the basic-cimd scenario expects this one).
  const oauth = context.client_id
    ? { clientId: context.client_id, ...(context.client_secret ? { clientSecret: context.client_secret } : {}) }
    : { clientMetadataUrl: "https://conformance-test.local/client-metadata.json" };
  const server = { url: process.argv[1], oauth };
  require("fs").writeFileSync(process.argv[2], JSON.stringify({ mcpServers: { conformance: server } }));
' "$url" "$work/config.json"
args=(--config "$work/config.json" --data-dir "$work/data")
export BROWSER="node $here/fetch-url.mjs"
login() {
  # The suite runs its client scenarios in parallel, and the login of a pre-registered client
  # listens on one fixed loopback callback port (127.0.0.1:33418): logins take turns here (the
  # proxy also waits for that port itself); the other steps run in parallel.
  flock "${TMPDIR:-/tmp}/mcpproxy-conformance-login.lock" \
    "$repo/dist/mcpproxy" auth login conformance "${args[@]}"
}
drive=("$repo/node_modules/.bin/bun" "$here/drive-proxy.ts" "${args[@]}")
[ "${MCPPROXY_CONFORMANCE_PASSTHROUGH:-0}" = 1 ] && drive+=(--passthrough)
# Index, then act as an agent; the output is kept to see whether the server asked for a login again.
use() {
  local status=0
  { "$repo/dist/mcpproxy" index "${args[@]}" || status=1; "${drive[@]}" || status=1; } 2>&1 | tee "$work/out" >&2
  return "$status"
}
status=0
case "${MCP_CONFORMANCE_SCENARIO:-}" in
  auth/*) login || status=1 ;;
esac
use || status=1
# A server that moved to another authorization server, or a call that needs more scope: log in
# once more and try again, as a person told so would.
if grep -q "auth login conformance\|needs a login" "$work/out"; then
  status=0
  login || status=1
  use || status=1
fi
exit "$status"
