import type { ResolvedConfig } from "../config/load-config.ts";
import { describeError } from "../errors.ts";
import type { Logger } from "../log.ts";
import { runningService } from "./find-service.ts";
import { createServiceLink, type ServiceLink } from "./service-link.ts";
import { runBridge } from "./stdio-bridge.ts";

/**
 * Whether a stdio `serve` attaches to the background service of its data dir, and the bridge when
 * it does. It attaches when a service runs for the same data dir and config, with the same
 * routing (a `serve --routing` that asks for another serves on its own, and says so), and
 * with `mcpproxy.autoStart` it starts one first. Anything else is today's standalone serve.
 */
export async function serviceToAttach(
  config: ResolvedConfig,
  profile: string | undefined,
  logger: Logger,
): Promise<ServiceLink | undefined> {
  let record = runningService(config.dataDir);
  if (!record && config.autoStart) {
    try {
      // Loaded only here: spawning a process is not a bridge's business otherwise.
      const { startService } = await import("./start-service.ts");
      record = (await startService({ dataDir: config.dataDir, configPath: config.configPath })).record;
      logger.info(`started the mcpproxy service (autoStart) at ${record.url}`);
    } catch (error) {
      logger.warn(
        `autoStart: the service did not start, so this serve runs on its own: ${describeError(error)}`,
      );
      return undefined;
    }
  }
  if (!record) return undefined;
  const apart = (why: string) => {
    logger.info(`the mcpproxy service (pid ${record.pid}) ${why}, so this serve runs on its own`);
    return undefined;
  };
  if (record.configPath !== config.configPath)
    return apart(`serves ${record.configPath}, not ${config.configPath}`);
  if (record.routing !== config.routing)
    return apart(`routes ${record.routing}, and this serve was asked for ${config.routing}`);
  const link = await createServiceLink(
    config.dataDir,
    profile === undefined ? "/mcp" : `/mcp/p/${encodeURIComponent(profile)}`,
  );
  return link.url() ? link : undefined;
}

/** Serves the stdio client through the service until it leaves; resolves to serve's exit code. */
export async function serveThroughService(
  link: ServiceLink,
  config: ResolvedConfig,
  logger: Logger,
): Promise<number> {
  logger.info(`attached to the mcpproxy service at ${link.url()} (--standalone serves without it)`);
  await runBridge({ link, logger: logger.child("bridge"), maxLineBytes: config.maxRequestBytes });
  return 0;
}
