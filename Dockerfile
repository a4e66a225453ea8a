# syntax=docker/dockerfile:1
# mcpproxy in a container: built with Bun (from npm, as `npm run build` does), run as one binary by a
# non-root user on Debian slim. The binary links only glibc (libc, libm, libpthread, libdl); bash
# is there for the health probe (deploy/health-probe.sh), which reads the bearer token from the
# data dir. The image carries no Node or Python: its servers are remote (HTTP) ones, or build your
# own image FROM this one with the runtimes your stdio servers need.
#   docker build -t mcpproxy .
#   docker run -v ./mcp_config.json:/etc/mcpproxy/config.json:ro -p 8080:8080 mcpproxy

FROM node:22-bookworm-slim AS build
WORKDIR /src
COPY package.json package-lock.json ./
COPY packages ./packages
RUN npm ci --no-audit --no-fund
COPY main.ts tsconfig.json ./
COPY scripts ./scripts
COPY src ./src
RUN npm run build && ./dist/mcpproxy --version

FROM debian:bookworm-slim
RUN useradd --system --uid 10001 --user-group --home-dir /data --no-create-home --shell /usr/sbin/nologin mcpproxy \
 && mkdir -p /data /etc/mcpproxy \
 && chown 10001:10001 /data
COPY --from=build /src/dist/mcpproxy /usr/local/bin/mcpproxy
COPY deploy/health-probe.sh /usr/local/bin/mcpproxy-health
ENV HOME=/data \
    MCPPROXY_DATA_DIR=/data \
    MCPPROXY_CONFIG_PATH=/etc/mcpproxy/config.json \
    MCPPROXY_PORT=8080
USER 10001:10001
WORKDIR /data
VOLUME /data
EXPOSE 8080
# `live`: the process answers /health (200, or 503 while no server is usable).
HEALTHCHECK --interval=10s --timeout=5s --start-period=30s --retries=3 CMD ["mcpproxy-health", "live"]
ENTRYPOINT ["mcpproxy"]
CMD ["serve", "--transport", "http", "--host", "0.0.0.0", "--port", "8080"]
