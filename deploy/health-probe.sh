#!/bin/bash
# mcpproxy's /health for container probes (the image's HEALTHCHECK, Kubernetes exec probes).
# Off loopback the listener wants the bearer token on every request, /health included, and a probe
# of Kubernetes' httpGet kind cannot read it from a Secret; this script reads it from the data dir
# (<MCPPROXY_DATA_DIR>/http-token) inside the container, so the token is written nowhere else.
#   health-probe.sh ready   exit 0 on 200: the proxy serves and at least one server is usable
#   health-probe.sh live    exit 0 on 200 or 503: the process answers (a dead upstream is no
#                           reason to restart the proxy)
# bash's /dev/tcp, so the image needs no HTTP client.
set -u
mode=${1:-ready}
port=${MCPPROXY_PORT:-8080}
token_file="${MCPPROXY_DATA_DIR:-${HOME:-}/.mcpproxy}/http-token"
auth=""
if [ -r "$token_file" ]; then
  auth="Authorization: Bearer $(head -c 512 "$token_file" | tr -d '\r\n')"$'\r\n'
fi
exec 3<>"/dev/tcp/127.0.0.1/$port" || exit 1
printf 'GET /health HTTP/1.0\r\nHost: 127.0.0.1\r\n%s\r\n' "$auth" >&3
IFS=' ' read -r -t "${MCPPROXY_PROBE_TIMEOUT:-5}" _ code _ <&3 || {
  echo "no answer from 127.0.0.1:$port/health" >&2
  exit 1
}
exec 3<&-
case "$mode:$code" in
ready:200 | live:200 | live:503) exit 0 ;;
esac
echo "/health answered $code ($mode)" >&2
exit 1
