#!/usr/bin/env bash
# The client the conformance suite's client scenarios run: `client.sh SERVER_URL`, with the
# scenario's name in MCP_CONFORMANCE_SCENARIO and its context (JSON) in MCP_CONFORMANCE_CONTEXT.
# It does what a user and an agent do with mcpproxy in front of that server:
#   1. a config naming the server "conformance" (a pre-registered OAuth client from the context
#      goes into its "oauth" entry);
#   2. for auth/* scenarios, `mcpproxy auth login` (the "browser" is fetch-url.mjs, which follows
#      the authorization server's redirect to the loopback callback, as a browser would after the
#      user approved);
#   3. `mcpproxy index`, which connects and lists the server's tools;
#   4. drive-proxy.ts: `mcpproxy serve` with an agent that calls the server's tools (and reads its
#      resources and prompts) through the proxy, with `--passthrough conformance` when the binary
#      has it (MCPPROXY_CONFORMANCE_PASSTHROUGH=1, set by scripts/conformance.sh).
# A failed step is reported and the next one still runs: the scenario server judges what reached it.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
url="${!#}"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
node -e '
  const context = JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT || "{}");
  const oauth = context.client_id
    ? { clientId: context.client_id, ...(context.client_secret ? { clientSecret: context.client_secret } : {}) }
    : undefined;
  const server = { url: process.argv[1], ...(oauth ? { oauth } : {}) };
  require("fs").writeFileSync(process.argv[2], JSON.stringify({ mcpServers: { conformance: server } }));
' "$url" "$work/config.json"
args=(--config "$work/config.json" --data-dir "$work/data")
status=0
case "${MCP_CONFORMANCE_SCENARIO:-}" in
  auth/*)
    # The suite runs its client scenarios in parallel, and the login of a pre-registered client
    # listens on one fixed loopback callback port (127.0.0.1:33418): two at once collide (issue 22,
    # item 8). Logins take turns; the other steps run in parallel.
    export BROWSER="node $here/fetch-url.mjs"
    flock "${TMPDIR:-/tmp}/mcpproxy-conformance-login.lock" \
      "$repo/dist/mcpproxy" auth login conformance "${args[@]}" || status=1
    ;;
esac
"$repo/dist/mcpproxy" index "${args[@]}" || status=1
drive=("$repo/node_modules/.bin/bun" "$here/drive-proxy.ts" "${args[@]}")
[ "${MCPPROXY_CONFORMANCE_PASSTHROUGH:-0}" = 1 ] && drive+=(--passthrough)
"${drive[@]}" || status=1
exit "$status"
