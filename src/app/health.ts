import type { ToolCatalog } from "../index/tool-catalog.ts";
import type { SessionRegistry } from "../routing/session-registry.ts";
import { retrySchedule } from "../server/upstream-servers-tool.ts";
import type { UpstreamPool } from "../upstream/upstream-pool.ts";
import { VERSION } from "../version.ts";

/**
 * What `/health` says, truthfully: `status` is `ok` only when every enabled server is connected
 * (or lazy and not started yet: `configured`), `degraded` otherwise, with each server's state (connecting, connected, restarting, failed with
 * its last error and, while a retry is scheduled, when it is (`retryAt`), after how many failures in a
 * row and whether the circuit is open, disabled), and its call limits with their calls in flight,
 * queued and refused. HTTP 200 either way, so a probe does not restart a proxy that still
 * serves most servers; 503 only when no enabled server is usable (none connected or lazy, or none configured).
 */
export interface HealthReport {
  httpStatus: 200 | 503;
  body: Record<string, unknown>;
}

export function healthReport(
  catalog: ToolCatalog,
  pool: UpstreamPool,
  sessions: SessionRegistry,
  openSessions: () => number,
): HealthReport {
  const servers = pool.status();
  const enabled = servers.filter((server) => server.state !== "disabled");
  // A lazy server not started yet (`configured`) is as it should be: it starts on its first call.
  const usable = enabled.filter((server) => server.state === "connected" || server.state === "configured");
  return {
    httpStatus: usable.length === 0 ? 503 : 200,
    body: {
      status: usable.length === enabled.length && enabled.length > 0 ? "ok" : "degraded",
      version: VERSION,
      tools: catalog.size(),
      servers: servers.map((server) => ({
        name: server.name,
        state: server.state,
        transport: server.transport,
        tools: server.toolCount,
        ...(server.connectedSince ? { connectedSince: new Date(server.connectedSince).toISOString() } : {}),
        ...(server.protocolVersion ? { protocolVersion: server.protocolVersion } : {}),
        ...(server.error ? { error: server.error.split("\n")[0] } : {}),
        ...retrySchedule(server),
        ...(server.limits ? { limits: server.limits } : {}),
      })),
      sessions: { open: openSessions(), dynamic: sessions.count() },
    },
  };
}
