import type { ResolvedConfig } from "../config/load-config.ts";
import type { ServerConfig } from "../config/parse-server.ts";
import type { ApprovalPolicy } from "../index/tool-approvals.ts";
import type { PromptDefinition, ResourceDefinition, ToolDefinition } from "../security/definition-texts.ts";
import type * as PoisoningScan from "../security/poisoning-scan.ts";

/**
 * The poisoning scanner, loaded at the first definition a policy reviews: its patterns are compiled
 * as it loads, and a search or a listing never reviews one. `require`, not `import()`: the catalog
 * asks the policy synchronously.
 */
let scanner: typeof PoisoningScan | undefined;
const scan = () => (scanner ??= require("../security/poisoning-scan.ts") as typeof PoisoningScan);

/**
 * The approval policy the config asks for: each server's trust, new servers (all of them with
 * `quarantineNewServers`, one marked `quarantined`, and every server an agent wrote), and what
 * poisoning findings do. `servers` gives the servers as they are now: they change at run time.
 */
export function approvalPolicyOf(
  config: ResolvedConfig,
  servers: () => readonly ServerConfig[] = () => config.servers,
): ApprovalPolicy {
  // Asked for every tool indexed: looked up by name, and the pattern of server names built once per
  // server list. Scanning the list per tool made indexing 20,000 servers quadratic (about 70 servers/s
  // instead of 220).
  let indexedList: readonly ServerConfig[] | undefined;
  let byName = new Map<string, ServerConfig>();
  let mentions: PoisoningScan.ServerMentions | undefined;
  const current = () => {
    const list = servers();
    if (list !== indexedList) {
      indexedList = list;
      byName = new Map(list.map((server) => [server.name, server]));
      mentions = undefined;
    }
    return list;
  };
  const entry = (name: string) => {
    current();
    return byName.get(name);
  };
  const mentionsOfServers = () => {
    const list = current();
    mentions ??= scan().serverMentions(list.map((server) => server.name));
    return mentions;
  };

  return {
    trustOf: (server) => entry(server)?.trust ?? "pin",
    quarantinesNew: (server) => {
      const found = entry(server);
      return config.quarantineNewServers || found?.quarantined === true || found?.writtenByAgent === true;
    },
    findingsOf: (server, definition, kind = "tool") => {
      const mentions = mentionsOfServers();
      const { scanPrompt, scanResource, scanTool, describeFindings } = scan();
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
