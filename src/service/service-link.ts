import { isAlive } from "../store/sqlite/writer-lock.ts";
import { originOf, runningService, serviceHealth, serviceToken } from "./find-service.ts";

/**
 * Where the bridge finds the service: its URL and token, read once and read again only when the
 * service stopped answering (a restart may bring a new pid; the port and token stay). The token goes
 * only to a port its service still holds: once the service's pid is gone, the URL is forgotten until
 * a running service is found again (another user's program may bind a port the service left, and
 * would be handed the token).
 */
export interface ServiceLink {
  /** The endpoint (the service's /mcp, or a profile's /mcp/p/NAME), or undefined while none runs. */
  url(): string | undefined;
  token(): string;
  /** The pid of the service last found (a restarted service has another). */
  pid(): number | undefined;
  /** Reads the service's record and token again; true when a service runs. */
  refresh(): Promise<boolean>;
  /** True when the service answers /health now. */
  isAnswering(): Promise<boolean>;
}

export async function createServiceLink(dataDir: string, path: string): Promise<ServiceLink> {
  let url: string | undefined;
  let token = "";
  let record = runningService(dataDir);
  const refresh = async () => {
    record = runningService(dataDir);
    url = record ? `${originOf(record)}${path}` : undefined;
    if (record) token = await serviceToken(dataDir).catch(() => token);
    return record !== undefined;
  };
  await refresh();
  return {
    url: () => {
      if (record && !isAlive(record.pid)) {
        record = undefined;
        url = undefined;
      }
      return url;
    },
    token: () => token,
    pid: () => record?.pid,
    refresh,
    isAnswering: async () => (record ? (await serviceHealth(record, token, 2_000)) !== undefined : false),
  };
}

/**
 * Waits until the service answers again (polling its record and /health), and with `otherThan` until
 * a service other than that pid does (a restart); false after `withinMs` or an abort.
 */
export async function waitForService(
  link: ServiceLink,
  withinMs: number,
  signal: AbortSignal,
  otherThan?: number,
): Promise<boolean> {
  const deadline = Date.now() + withinMs;
  while (!signal.aborted && Date.now() < deadline) {
    const isOther = () => otherThan === undefined || link.pid() !== otherThan;
    if ((await link.refresh()) && isOther() && (await link.isAnswering())) return true;
    await Bun.sleep(250);
  }
  return false;
}
