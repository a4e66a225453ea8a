import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/**
 * One tray per data dir: `<dataDir>/tray/tray.pid` names the tray that shows the service. A second
 * one (`start --tray` beside a service whose setting started one already) sees it alive and ends.
 * The file of a tray that is gone is taken over; the tray removes its own when it ends.
 */
export function takeTrayLock(dataDir: string): { release(): void } | undefined {
  const dir = join(dataDir, "tray");
  const path = join(dir, "tray.pid");
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      writeFileSync(path, String(process.pid), { flag: "wx", mode: 0o600 });
      return {
        release() {
          if (readPid(path) === process.pid) rmSync(path, { force: true });
        },
      };
    } catch {
      const holder = readPid(path);
      if (holder !== undefined && holder !== process.pid && isAlive(holder)) return undefined;
      rmSync(path, { force: true }); // left by a tray that is gone
    }
  }
  return undefined;
}

function readPid(path: string): number | undefined {
  try {
    const pid = Number.parseInt(readFileSync(path, "utf8"), 10);
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as { code?: string }).code === "EPERM";
  }
}
