import { rememberedPort } from "../store/service-port.ts";
import { runningService, serviceHealth, serviceToken } from "./find-service.ts";
import { logPathOf } from "./service-files.ts";

/**
 * `mcpproxy status`: whether the service of a data dir runs, where, since when, and its servers,
 * from its record and its /health. `--json` prints the same as one object.
 */
export interface ServiceStatus {
  running: boolean;
  url: string | null;
  pid: number | null;
  since: string | null;
  servers: ServerLine[];
  version?: string | undefined;
  configPath?: string | undefined;
  log: string;
  /** Open client sessions, as /health counts them. */
  sessions?: number | undefined;
  /** Set when the service runs but did not answer /health. */
  problem?: string | undefined;
}

interface ServerLine {
  name: string;
  state: string;
  tools?: number | undefined;
  error?: string | undefined;
}

export async function serviceStatus(dataDir: string): Promise<ServiceStatus> {
  const log = logPathOf(dataDir);
  const record = runningService(dataDir);
  if (!record) {
    const port = rememberedPort(dataDir);
    return {
      running: false,
      url: port !== undefined ? `http://127.0.0.1:${port}/mcp` : null,
      pid: null,
      since: null,
      servers: [],
      log,
    };
  }
  const status: ServiceStatus = {
    running: true,
    url: record.url,
    pid: record.pid,
    since: record.since,
    servers: [],
    version: record.version,
    configPath: record.configPath,
    log,
  };
  const health = await serviceHealth(record, await serviceToken(dataDir).catch(() => ""), 5_000);
  if (!health || !Array.isArray(health.body.servers)) {
    status.problem = health
      ? `its /health answered ${health.status}`
      : "it did not answer /health within 5 s (busy, or stuck: see its log)";
    return status;
  }
  status.servers = (health.body.servers as Record<string, unknown>[]).map((server) => ({
    name: String(server.name),
    state: String(server.state),
    ...(typeof server.tools === "number" ? { tools: server.tools } : {}),
    ...(typeof server.error === "string" ? { error: server.error } : {}),
  }));
  const sessions = health.body.sessions as { open?: unknown } | undefined;
  if (typeof sessions?.open === "number") status.sessions = sessions.open;
  return status;
}

/** The one screen `status` prints. */
export function statusText(status: ServiceStatus, now = Date.now()): string {
  if (!status.running)
    return (
      "mcpproxy is not running. `mcpproxy start` starts it" +
      (status.url ? ` (at ${status.url})` : "") +
      `; its log is ${status.log}.\n`
    );
  const lines = [
    `mcpproxy${status.version ? ` ${status.version}` : ""} is running at ${status.url}`,
    `  pid ${status.pid}, since ${status.since} (${ago(Date.parse(status.since ?? ""), now)})`,
    `  config ${status.configPath}`,
    `  log    ${status.log}`,
  ];
  if (status.sessions !== undefined) lines.push(`  ${status.sessions} client session(s) open`);
  if (status.problem) lines.push(`  but ${status.problem}`);
  else if (status.servers.length === 0)
    lines.push("  no servers configured: `mcpproxy import` adds your clients' servers");
  else {
    lines.push(`  servers (${status.servers.length}):`);
    const width = Math.max(...status.servers.map((server) => server.name.length));
    for (const server of status.servers) {
      const tools = server.tools !== undefined ? `, ${server.tools} tools` : "";
      const error = server.error ? ` — ${server.error}` : "";
      lines.push(`    ${server.name.padEnd(width)}  ${server.state}${tools}${error}`);
    }
  }
  return `${lines.join("\n")}\n`;
}

function ago(then: number, now: number): string {
  if (!Number.isFinite(then)) return "unknown";
  const seconds = Math.max(0, Math.round((now - then) / 1000));
  if (seconds < 90) return `${seconds} s`;
  const minutes = Math.round(seconds / 60);
  if (minutes < 90) return `${minutes} min`;
  const hours = Math.round(minutes / 60);
  return hours < 48 ? `${hours} h` : `${Math.round(hours / 24)} days`;
}
