import { existsSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { writeFileAtomicSync } from "../atomic-file.ts";

/**
 * What the background service leaves in its data dir, and how the other commands read it:
 * - `service.json`, while it runs: who it is (pid), where it listens, since when, with which config
 *   and routing. Written once it listens, removed when it ends. A service that was killed leaves it
 *   behind; every reader checks that its pid is still a running service (service-process.ts), so a
 *   stale record never blocks the next `start`.
 * - `service-port`: the port it listens on, chosen once and kept (store/service-port.ts, where the
 *   commands below the service read it too).
 * - `service.log`: its log (stdout and stderr), one file kept from the start before.
 * Every file is the user's alone (0600), as the rest of the data dir.
 */
const SERVICE_FILE = "service.json";
const LOG_FILE = "service.log";

export interface ServiceRecord {
  pid: number;
  /** The MCP endpoint: http://127.0.0.1:PORT/mcp. */
  url: string;
  /** When it started listening (ISO 8601). */
  since: string;
  version: string;
  /** The config file it serves: a stdio `serve` of another config does not attach to it. */
  configPath: string;
  /** Its routing: a `serve --routing` that asks for another one serves on its own. */
  routing: string;
}

export function readServiceRecord(dataDir: string): ServiceRecord | undefined {
  const path = join(dataDir, SERVICE_FILE);
  if (!existsSync(path)) return undefined;
  try {
    const record = JSON.parse(readFileSync(path, "utf8")) as Partial<ServiceRecord>;
    const isRecord =
      Number.isSafeInteger(record.pid) &&
      (record.pid ?? 0) > 0 &&
      typeof record.url === "string" &&
      /^http:\/\/127\.0\.0\.1:\d+\/mcp$/.test(record.url) &&
      typeof record.since === "string" &&
      typeof record.version === "string" &&
      typeof record.configPath === "string" &&
      typeof record.routing === "string";
    return isRecord ? (record as ServiceRecord) : undefined;
  } catch {
    // Half a file cannot happen (it is renamed into place); anything else unreadable is no record.
    return undefined;
  }
}

export function writeServiceRecord(dataDir: string, record: ServiceRecord): void {
  writeFileAtomicSync(join(dataDir, SERVICE_FILE), `${JSON.stringify(record, null, 2)}\n`);
}

/** Removes the record, if it is still `pid`'s (a service started since has its own). */
export function removeServiceRecord(dataDir: string, pid?: number): void {
  if (pid !== undefined && readServiceRecord(dataDir)?.pid !== pid) return;
  rmSync(join(dataDir, SERVICE_FILE), { force: true });
}

export const logPathOf = (dataDir: string) => join(dataDir, LOG_FILE);
