import type { ResolvedConfig } from "../config/load-config.ts";
import type { QuarantinedCapability } from "../index/capability-approvals.ts";
import type { CatalogTool } from "../index/catalog-types.ts";
import type { QuarantinedTool } from "../index/tool-approvals.ts";
import type { ToolCatalog } from "../index/tool-catalog.ts";
import { type PendingLaunch, pendingLaunches } from "../security/launch-spec.ts";
import type { ServerEntries } from "../store/server-registry.ts";

/**
 * What waits for a person, and what `mcpproxy approve` approves of it: what the command line names
 * (SERVER, SERVER/NAME, a tool's public name, or --all), except what the poisoning scan flags. A
 * flagged tool, prompt or template needs its own confirmation: named one by one, or
 * `--yes-flagged`; approving its server whole, or everything, is not reading it.
 *
 * `Waiting`: everything that waits for a person.
 */
export interface Waiting {
  launches: PendingLaunch[];
  /** Servers held whole as new (not those whose launch spec waits: they do not run yet). */
  servers: string[];
  tools: QuarantinedTool<CatalogTool>[];
  capabilities: QuarantinedCapability[];
}

export function whatWaits(config: ResolvedConfig, catalog: ToolCatalog, entries: ServerEntries): Waiting {
  return {
    launches: pendingLaunches(entries),
    servers: config.servers
      .filter((server) => !server.awaitingApproval && catalog.capabilities?.serverHold(server.name))
      .map((server) => server.name),
    tools: catalog.quarantined(),
    capabilities: catalog.capabilities?.quarantined() ?? [],
  };
}

const emptyWaiting = (): Waiting => ({ launches: [], servers: [], tools: [], capabilities: [] });

/** The flagged tools, prompts and templates of `chosen` that were not named one by one. */
function flaggedUnnamed(chosen: Waiting, targets: readonly string[]): Waiting {
  return {
    ...emptyWaiting(),
    tools: chosen.tools.filter(
      (tool) =>
        tool.findings.length > 0 &&
        !targets.includes(`${tool.server}/${tool.tool}`) &&
        !targets.includes(tool.name),
    ),
    capabilities: chosen.capabilities.filter(
      (item) => item.findings.length > 0 && !targets.includes(`${item.server}/${item.name}`),
    ),
  };
}

/** `chosen` less what was withheld. */
function without(chosen: Waiting, withheld: Waiting): Waiting {
  return {
    ...chosen,
    tools: chosen.tools.filter((tool) => !withheld.tools.includes(tool)),
    capabilities: chosen.capabilities.filter((item) => !withheld.capabilities.includes(item)),
  };
}

/** Each tool, prompt or template as `approve` takes it on the command line (SERVER/NAME). */
export const itemsOf = (w: Waiting) => [
  ...w.tools.map((tool) => `${tool.server}/${tool.tool}`),
  ...w.capabilities.map((item) => `${item.server}/${item.name}`),
];

export const count = (w: Waiting) =>
  w.launches.length + w.servers.length + w.tools.length + w.capabilities.length;

export const namesOf = (w: Waiting) => [
  ...new Set([
    ...w.launches.map((launch) => launch.server),
    ...w.servers,
    ...w.tools.map((tool) => `${tool.server}/${tool.tool}`),
    ...w.capabilities.map((item) => `${item.server}/${item.name} (${item.kind})`),
  ]),
];

export interface Choice {
  /** What the command line names. */
  chosen: Waiting;
  /** What is approved of it. */
  approved: Waiting;
  /** Flagged and not confirmed: left waiting, and said so. */
  withheld: Waiting;
}

export function choose(
  waiting: Waiting,
  targets: readonly string[],
  options: { all: boolean; yesFlagged: boolean },
): Choice {
  const { all } = options;
  const chosen: Waiting = {
    launches: waiting.launches.filter((launch) => all || targets.includes(launch.server)),
    servers: waiting.servers.filter((server) => all || targets.includes(server)),
    tools: waiting.tools.filter(
      (tool) => all || matches(tool.server, tool.tool, targets) || targets.includes(tool.name),
    ),
    capabilities: waiting.capabilities.filter((item) => all || matches(item.server, item.name, targets)),
  };
  const withheld = options.yesFlagged ? emptyWaiting() : flaggedUnnamed(chosen, targets);
  return { chosen, approved: without(chosen, withheld), withheld };
}

/** SERVER or SERVER/NAME. */
function matches(server: string, name: string, targets: readonly string[]): boolean {
  return targets.some((target) => target === server || target === `${server}/${name}`);
}
