import { copyFileSync, existsSync, mkdirSync, statSync, truncateSync } from "node:fs";
import { serveProxy } from "../app/serve-proxy.ts";
import type { ResolvedConfig } from "../config/load-config.ts";
import { ProxyError } from "../errors.ts";
import type { Logger } from "../log.ts";
import { checkListenAddress } from "../server/transport/http-server.ts";
import { rememberedPort, rememberPort } from "../store/service-port.ts";
import { acquireServiceLock } from "../store/sqlite/writer-lock.ts";
import { resolveAncestry } from "../upstream/proxy-ancestry.ts";
import { VERSION } from "../version.ts";
import { runningService } from "./find-service.ts";
import { logPathOf, removeServiceRecord, writeServiceRecord } from "./service-files.ts";
import { startServiceTray } from "./service-tray.ts";

/**
 * `mcpproxy service run`: the background service in the foreground, as `start` spawns it and the
 * login units run it. It is `serve` over streamable HTTP on 127.0.0.1, on the port remembered in
 * the data dir (chosen free the first time), the bearer token required whatever the config says;
 * once it listens it records itself in `service.json` (service-files.ts), and removes the record
 * when it ends. One per data dir: the service lock is held for its life.
 */
export interface ServiceRunOptions {
  dataDir: string;
  /** The config with the service's settings over the file's: `port` and, to check an edit, `text`. */
  load: (port: number, text?: string) => ResolvedConfig;
  logger: (config: ResolvedConfig) => Logger;
  /** Where `already running` is said. */
  say: (line: string) => void;
}

export async function runService(options: ServiceRunOptions): Promise<number> {
  const { dataDir } = options;
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const lock = acquireServiceLock(dataDir);
  let tray: { stop(): void } | undefined;
  try {
    if (!lock.isHeld) {
      const running = runningService(dataDir);
      options.say(
        running
          ? `mcpproxy is already running for ${dataDir} (pid ${running.pid}, ${running.url})`
          : `another mcpproxy service is starting for ${dataDir} (pid ${lock.holder()?.pid ?? "unknown"})`,
      );
      return 0;
    }
    keepLogSmall(logPathOf(dataDir));
    const port = await servicePort(dataDir);
    const config = options.load(port);
    const logger = options.logger(config);
    return await serveProxy(
      config,
      resolveAncestry(config.configPath, process.env),
      logger,
      (text) => options.load(port, text),
      {
        logPath: logPathOf(dataDir),
        onListening: (url) => {
          writeServiceRecord(dataDir, {
            pid: process.pid,
            url,
            since: new Date().toISOString(),
            version: VERSION,
            configPath: config.configPath,
            routing: config.routing,
          });
          if (config.tray) tray = startServiceTray({ dataDir, configPath: config.configPath }, logger);
        },
      },
    );
  } finally {
    tray?.stop();
    removeServiceRecord(dataDir, process.pid);
    lock.release();
  }
}

/** The log is kept to one file of this size and the one before it (`service.log.1`). */
const MAX_LOG_BYTES = 10 * 1024 * 1024;

/**
 * Once a start, a log over MAX_LOG_BYTES is copied aside and emptied. Emptied, not renamed: whoever
 * started the service (`start`, systemd's `append:`, launchd) holds it open for appending, and
 * appends go on at its new end.
 */
function keepLogSmall(path: string): void {
  if (!existsSync(path) || statSync(path).size <= MAX_LOG_BYTES) return;
  copyFileSync(path, `${path}.1`);
  truncateSync(path, 0);
}

/**
 * The service's port: the one remembered, while it is free; else a free one, remembered from now
 * on (said in the log: clients given the old URL must be given the new one, `mcpproxy import`).
 */
async function servicePort(dataDir: string): Promise<number> {
  const remembered = rememberedPort(dataDir);
  if (remembered !== undefined && (await isFree(remembered))) return remembered;
  const port = await freePort();
  rememberPort(dataDir, port);
  if (remembered !== undefined)
    process.stderr.write(
      `mcpproxy: port ${remembered} is taken by another program; the service moves to port ${port} ` +
        "(clients given the old URL need the new one: `mcpproxy import --snippet`)\n",
    );
  return port;
}

/** Whether the port can be bound on loopback now (serve's own check of its listen address). */
const isFree = (port: number) =>
  checkListenAddress("127.0.0.1", port).then(
    () => true,
    () => false,
  );

async function freePort(): Promise<number> {
  const probe = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch: () => new Response(null, { status: 503 }),
  });
  const port = probe.port;
  await probe.stop(true);
  if (port === undefined) throw new ProxyError("LISTEN_FAILED", "No free port on 127.0.0.1 for the service");
  return port;
}
