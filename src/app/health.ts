import type { ToolCatalog } from "../index/tool-catalog.ts";
import type { SessionRegistry } from "../routing/session-registry.ts";
import type { HealthAnswer } from "../server/observe/health-route.ts";
import { retrySchedule } from "../server/tools/upstream-servers-tool.ts";
import type { UpstreamPool } from "../upstream/upstream-pool.ts";
import { VERSION } from "../version.ts";

/**
 * What `/health` says, truthfully: `status` is `ok` only when every enabled server is connected
 * (or lazy and not started yet: `configured`), `degraded` otherwise, with each server's state (connecting, connected, restarting, failed with
 * its last error and, while a retry is scheduled, when it is (`retryAt`), after how many failures in a
 * row and whether the circuit is open, disabled), and its call limits with their calls in flight,
 * queued and refused. HTTP 200 either way, so a probe does not restart a proxy that still
 * serves most servers; 503 only when no enabled server is usable (none connected or lazy, or none configured).
 * Over a profile's catalog and pool (profiles/scoped-views.ts) it tells that profile's servers only,
 * and no session counts (`sessions` unset): they are the whole proxy's. Who is told what is
 * server/observe/health-route.ts's concern.
 */
export function healthReport(
  catalog: ToolCatalog,
  pool: UpstreamPool,
  sessions?: { registry: SessionRegistry; open: () => number },
): HealthAnswer {
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
      ...(sessions ? { sessions: { open: sessions.open(), dynamic: sessions.registry.count() } } : {}),
    },
  };
}
