#!/bin/sh
# mcpproxy installer (placeholder).
#
# The one-line `curl | sh` install arrives with the distribution work: release binaries for
# Linux and macOS, checksums, and a Homebrew formula. Until then there is nothing to download,
# and this script says so instead of pretending.
set -eu
cat >&2 <<'MSG'
mcpproxy has no released binaries yet, so this installer cannot install anything.
Build it from source instead (needs Node.js 20+ and npm):

  git clone <this repository> mcpproxy && cd mcpproxy
  npm ci && npm run build          # produces dist/mcpproxy, a single self-contained binary
  install -m 755 dist/mcpproxy ~/.local/bin/mcpproxy
MSG
exit 1
