import type { ResolvedConfig } from "../config/load-config.ts";
import type { ServerConfig } from "../config/parse-server.ts";
import type { ApprovalPolicy } from "../index/tool-approvals.ts";
import { describeFindings, scanTool, serverMentions } from "../security/poisoning-scan.ts";

/**
 * The approval policy the config asks for: each server's trust, new servers (all of them with
 * `quarantineNewServers`, one marked `quarantined`, and every server an agent wrote), and what
 * poisoning findings do. `servers` gives the servers as they are now: they change at run time.
 */
export function approvalPolicyOf(
  config: ResolvedConfig,
  servers: () => readonly ServerConfig[] = () => config.servers,
): ApprovalPolicy {
  const entry = (name: string) => servers().find((server) => server.name === name);
  return {
    trustOf: (server) => entry(server)?.trust ?? "pin",
    quarantinesNew: (server) => {
      const found = entry(server);
      return config.quarantineNewServers || found?.quarantined === true || found?.writtenByAgent === true;
    },
    findingsOf: (server, definition) =>
      scanTool(definition, server, serverMentions(servers().map((s) => s.name))).map((f) =>
        describeFindings([f]),
      ),
    blockFindings: config.poisoning === "block",
  };
}
