import { Client as ModernClient, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import type { Sandbox } from "../helpers.ts";
import { type RunningNginx, startNginx } from "./nginx.ts";
import { type Replica, startReplica } from "./replicas.ts";
import { freshDatabase } from "./store-databases.ts";
import type { TempPostgres } from "./temp-postgres.ts";

/**
 * A team deployment on one machine, without containers: replicas of `mcpproxy serve --store` on
 * 127.0.0.1 sharing one PostgreSQL database, and nginx in front with the shipped configuration
 * (deploy/nginx/nginx.conf). The topology test and the team bench both run it.
 */
export interface Team {
  storeUrl: string;
  replicas: Replica[];
  nginx: RunningNginx;
  /** A 2026-07-28 client of the deployment, through nginx. */
  modernClient(name?: string): Promise<ModernClient>;
  stop(): Promise<void>;
}

/** Teams started in one process (a bench runs several): each replica's data dir is its own. */
let teams = 0;

export async function startTeam(
  sandbox: Sandbox,
  pg: TempPostgres,
  options: { replicas?: number; args?: string[]; env?: Record<string, string> } = {},
): Promise<Team> {
  const storeUrl = await freshDatabase(pg);
  const team = ++teams;
  const replicas: Replica[] = [];
  const clients: ModernClient[] = [];
  let nginx: RunningNginx | undefined;
  const stop = async () => {
    await Promise.allSettled(clients.map((client) => client.close()));
    await nginx?.stop();
    await Promise.allSettled(replicas.map((replica) => replica.stop()));
  };
  try {
    // One at a time: the first takes the lease and seeds the store, the way a rollout starts.
    for (let i = 1; i <= (options.replicas ?? 3); i++)
      replicas.push(
        await startReplica(sandbox, storeUrl, team === 1 ? String(i) : `${team}-${i}`, {
          ...(options.args ? { args: options.args } : {}),
          ...(options.env ? { env: options.env } : {}),
        }),
      );
    nginx = await startNginx({ upstreams: replicas.map((replica) => replica.url.host) });
  } catch (error) {
    await stop();
    throw error;
  }
  const front = nginx;
  return {
    storeUrl,
    replicas,
    nginx: front,
    async modernClient(name = "team-test") {
      const client = new ModernClient(
        { name, version: "1.0.0" },
        { versionNegotiation: { mode: { pin: "2026-07-28" } } },
      );
      await client.connect(new StreamableHTTPClientTransport(new URL("/mcp", front.url)));
      clients.push(client);
      return client;
    },
    stop,
  };
}

/** Which replica (host:port) answered each request, from nginx's access log. */
export function answeredBy(nginx: RunningNginx): Map<string, number> {
  const counts = new Map<string, number>();
  for (const match of nginx.accessLog().matchAll(/upstream=(\S+)/g)) {
    const upstream = match[1] ?? "";
    counts.set(upstream, (counts.get(upstream) ?? 0) + 1);
  }
  return counts;
}
