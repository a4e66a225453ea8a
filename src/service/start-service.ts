import { spawn } from "node:child_process";
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, statSync } from "node:fs";
import { ProxyError } from "../errors.ts";
import { runningService, serviceHealth, serviceToken } from "./find-service.ts";
import { logPathOf, type ServiceRecord } from "./service-files.ts";
import { SERVICE_RUN_ARGS, selfCommand } from "./service-process.ts";

/**
 * `mcpproxy start`: the service in the background for this user. It spawns `mcpproxy service run`
 * detached from the terminal (its own session; its output appended to `service.log` in the data
 * dir) and returns once the service answers /health with its token. A service already running is
 * said and left alone; one that dies on the way up is said with the end of its log.
 */
export interface StartOptions {
  dataDir: string;
  configPath: string;
  /** How long the service may take to answer /health, in ms. */
  timeoutMs?: number;
  /** Show the tray (`start --tray`): the service is started with MCPPROXY_TRAY=1 (service-tray.ts). */
  tray?: boolean;
}

export interface Started {
  record: ServiceRecord;
  /** False when it was running already. */
  isNew: boolean;
  logPath: string;
}

const START_TIMEOUT_MS = 60_000;

export async function startService(options: StartOptions): Promise<Started> {
  const { dataDir } = options;
  const logPath = logPathOf(dataDir);
  const running = runningService(dataDir);
  if (running) return { record: running, isNew: false, logPath };
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const startedAt = existsSync(logPath) ? statSync(logPath).size : 0;
  const log = openSync(logPath, "a", 0o600);
  const [command, ...args] = selfCommand();
  const child = spawn(
    command as string,
    [...args, ...SERVICE_RUN_ARGS, "--config", options.configPath, "--data-dir", dataDir],
    // Its own session: closing the terminal that ran `start` does not end it.
    {
      detached: true,
      stdio: ["ignore", log, log],
      cwd: dataDir,
      env: options.tray ? { ...process.env, MCPPROXY_TRAY: "1" } : process.env,
    },
  );
  closeSync(log);
  let exited: number | null | undefined;
  child.on("exit", (code) => {
    exited = code;
  });
  child.unref();
  const deadline = Date.now() + (options.timeoutMs ?? START_TIMEOUT_MS);
  while (Date.now() < deadline) {
    const record = runningService(dataDir);
    if (record) {
      const health = await serviceHealth(record, await serviceToken(dataDir), 2_000);
      // 200 or 503 (no server usable yet): either way it serves.
      if (health && (health.status === 200 || health.status === 503))
        return { record, isNew: record.pid === child.pid, logPath };
    }
    if (exited !== undefined) {
      // `service run` says "already running" and exits 0 when another start won the race.
      const other = runningService(dataDir);
      if (exited === 0 && other) return { record: other, isNew: false, logPath };
      throw new ProxyError(
        "SERVICE_FAILED",
        `The service stopped while starting (exit code ${exited}). The end of ${logPath}:\n${logSince(logPath, startedAt)}`,
      );
    }
    await Bun.sleep(100);
  }
  throw new ProxyError(
    "SERVICE_FAILED",
    `The service (pid ${child.pid}) did not answer within ${Math.round((options.timeoutMs ?? START_TIMEOUT_MS) / 1000)} s; ` +
      `it may still be starting: \`mcpproxy status\` tells, and ${logPath} says what it did.`,
  );
}

/** The last lines the service wrote since `offset`: what the person needs to see when it failed. */
function logSince(path: string, offset: number): string {
  const whole = readFileSync(path);
  // The service empties a log grown too large when it starts (run-service.ts): then all of it is new.
  const text = (whole.length >= offset ? whole.subarray(offset) : whole).toString("utf8").trimEnd();
  const lines = text.split("\n").slice(-15);
  return lines.map((line) => `  ${line}`).join("\n");
}
