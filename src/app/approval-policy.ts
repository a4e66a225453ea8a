import type { ResolvedConfig } from "../config/load-config.ts";
import type { ServerConfig } from "../config/parse-server.ts";
import type { ApprovalPolicy } from "../index/tool-approvals.ts";
import type { PromptDefinition, ResourceDefinition, ToolDefinition } from "../security/definition-texts.ts";
import {
  describeFindings,
  scanPrompt,
  scanResource,
  scanTool,
  serverMentions,
} from "../security/poisoning-scan.ts";

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
    findingsOf: (server, definition, kind = "tool") => {
      const mentions = serverMentions(servers().map((s) => s.name));
      const findings =
        kind === "prompt"
          ? scanPrompt(definition as PromptDefinition, server, mentions)
          : kind === "template"
            ? scanResource(definition as ResourceDefinition, server, mentions)
            : scanTool(definition as ToolDefinition, server, mentions);
      return findings.map((f) => describeFindings([f]));
    },
    blockFindings: config.poisoning === "block",
  };
}
