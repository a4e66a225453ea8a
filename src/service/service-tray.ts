import { type ChildProcess, spawn } from "node:child_process";
import { closeSync, openSync } from "node:fs";
import type { Logger } from "../log.ts";
import { logPathOf } from "./service-files.ts";
import { selfCommand } from "./service-process.ts";

/**
 * The service's tray (`mcpproxy.tray`, or `mcpproxy start --tray`): `mcpproxy tray` as a child of
 * the service, its output in the service's log, ended with the service. The tray itself says once
 * why it is not shown (no desktop, no indicator library) and ends; the service goes on either way.
 */
export function startServiceTray(
  options: { dataDir: string; configPath: string },
  logger: Logger,
): { stop(): void } {
  const [command, ...args] = selfCommand();
  const log = openSync(logPathOf(options.dataDir), "a", 0o600);
  let child: ChildProcess | undefined;
  try {
    child = spawn(
      command as string,
      [...args, "tray", "--config", options.configPath, "--data-dir", options.dataDir],
      { stdio: ["ignore", log, log], env: process.env },
    );
    child.on("error", (error) => logger.warn(`the tray could not start: ${error.message}`));
  } finally {
    closeSync(log);
  }
  return {
    stop() {
      if (child && child.exitCode === null) child.kill("SIGTERM");
    },
  };
}
