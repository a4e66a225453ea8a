import type { ResolvedConfig } from "../config/load-config.ts";
import type { ApprovalPolicy } from "../index/tool-approvals.ts";
import { describeFindings, scanTool, serverMentions } from "../security/poisoning-scan.ts";

/** The approval policy the config asks for: each server's trust, new servers, and what poisoning findings do. */
export function approvalPolicyOf(config: ResolvedConfig): ApprovalPolicy {
  const mentions = serverMentions(config.servers.map((server) => server.name));
  const trust = new Map(config.servers.map((server) => [server.name, server.trust ?? "pin"]));
  return {
    trustOf: (server) => trust.get(server) ?? "pin",
    quarantineNewServers: config.quarantineNewServers,
    findingsOf: (server, definition) =>
      scanTool(definition, server, mentions).map((f) => describeFindings([f])),
    blockFindings: config.poisoning === "block",
  };
}
