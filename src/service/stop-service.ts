import { runningService } from "./find-service.ts";
import { removeServiceRecord, type ServiceRecord } from "./service-files.ts";
import { isRunning } from "./service-process.ts";

/**
 * `mcpproxy stop`: ends the service of a data dir, and with it every server it started (its
 * shutdown stops them, as serve's does on Ctrl-C). A service that has not ended after `graceMs`
 * is killed. Not running is not an error: `stop` is safe to run twice.
 */
export interface Stopped {
  /** The service that was stopped, or undefined when none ran. */
  record: ServiceRecord | undefined;
  /** True when it had to be killed. */
  isKilled: boolean;
}

const GRACE_MS = 30_000;

export async function stopService(dataDir: string, graceMs = GRACE_MS): Promise<Stopped> {
  const record = runningService(dataDir);
  if (!record) return { record: undefined, isKilled: false };
  process.kill(record.pid, "SIGTERM");
  if (await exits(record.pid, graceMs)) return { record, isKilled: false };
  process.kill(record.pid, "SIGKILL");
  await exits(record.pid, 5_000);
  removeServiceRecord(dataDir, record.pid);
  return { record, isKilled: true };
}

async function exits(pid: number, withinMs: number): Promise<boolean> {
  const deadline = Date.now() + withinMs;
  while (isRunning(pid)) {
    if (Date.now() > deadline) return false;
    await Bun.sleep(50);
  }
  return true;
}
