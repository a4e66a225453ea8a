import type { ResolvedConfig } from "../config/load-config.ts";
import { ProxyError } from "../errors.ts";

/**
 * `serve --passthrough SERVER` serves one configured server. The others stay in the config (and
 * their tools in the shared index and approvals) but are never started: they are made lazy, which
 * starts a server only when one of its tools is called, and in passthrough no call reaches them.
 * The served one is started at once even if its own entry is lazy.
 */
export function passthroughConfig(config: ResolvedConfig, name: string): ResolvedConfig {
  const server = config.servers.find((candidate) => candidate.name === name);
  if (!server) {
    const names = config.servers.map((candidate) => candidate.name);
    throw new ProxyError(
      "USAGE",
      `--passthrough ${name}: no server of that name in ${config.configPath}` +
        (names.length > 0 ? ` (it has ${names.join(", ")})` : " (it has none)"),
    );
  }
  if (!server.enabled) {
    throw new ProxyError("USAGE", `--passthrough ${name}: that server is disabled in ${config.configPath}`);
  }
  return {
    ...config,
    servers: config.servers.map((candidate) =>
      candidate.name === name ? { ...candidate, lazy: false } : { ...candidate, lazy: true },
    ),
  };
}
