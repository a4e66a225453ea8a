import { loadOrCreateToken } from "../server/transport/bearer-token.ts";
import { readServiceRecord, removeServiceRecord, type ServiceRecord } from "./service-files.ts";
import { isServiceProcess } from "./service-process.ts";

/**
 * The service of a data dir, if one runs: its record, when the pid in it is still a running
 * service. A record a killed service left behind is removed on sight (where the data dir can be
 * written), so it never stands in the way of the next `start`.
 */
export function runningService(dataDir: string): ServiceRecord | undefined {
  const record = readServiceRecord(dataDir);
  if (!record) return undefined;
  if (isServiceProcess(record.pid)) return record;
  try {
    removeServiceRecord(dataDir, record.pid);
  } catch {
    // A read-only data dir: the record stays, and is read as stale each time.
  }
  return undefined;
}

/** The token every client of the service sends (`<dataDir>/http-token`, 0600); made by the service. */
export async function serviceToken(dataDir: string): Promise<string> {
  return (await loadOrCreateToken(dataDir, { mayCreate: false })).token;
}

/** The service's origin (http://127.0.0.1:PORT) from its MCP URL. */
export const originOf = (record: ServiceRecord) => record.url.replace(/\/mcp$/, "");

/** What /health answers with the token, or undefined when nothing answers within `timeoutMs`. */
export async function serviceHealth(
  record: ServiceRecord,
  token: string,
  timeoutMs: number,
): Promise<{ status: number; body: Record<string, unknown> } | undefined> {
  try {
    const response = await fetch(`${originOf(record)}/health`, {
      headers: { authorization: `Bearer ${token}` },
      signal: AbortSignal.timeout(timeoutMs),
    });
    const body = (await response.json().catch(() => ({}))) as Record<string, unknown>;
    return { status: response.status, body };
  } catch {
    return undefined;
  }
}
