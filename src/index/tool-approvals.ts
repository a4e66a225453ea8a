import type { Logger } from "../log.ts";
import type { CatalogStore } from "../store/sqlite/catalog-store.ts";
import type { UpstreamTool } from "../upstream-tool.ts";
import { toolKey } from "./tool-naming.ts";

/**
 * Which tools may be used: the rug-pull defence. The definition of every tool is approved once
 * (its hash recorded with it); a tool that is new on a known server, or whose definition changed
 * since it was approved, is quarantined: left out of search and refused when called, until
 * `mcpproxy approve` shows what changed and approves it. The policy decides what is approved
 * without asking: a server's first tools are trusted on first use (unless new servers are
 * quarantined whole), a server with `trust: "auto"` has every change accepted (and logged), and
 * with poisoning set to block, a tool the scan flags is never approved without asking.
 */
export interface ApprovalPolicy {
  trustOf(server: string): "pin" | "auto";
  /** Quarantine every tool of this server when it is seen for the first time (no trust on first use). */
  quarantinesNew(server: string): boolean;
  /** What the poisoning scan finds in a tool (or a prompt or template), described; empty when nothing. */
  findingsOf(server: string, definition: object, kind?: "tool" | "prompt" | "template"): string[];
  /** Never approve a tool with findings without asking. */
  blockFindings: boolean;
}

interface FreshTool {
  key: string;
  server: string;
  tool: string;
  hash: string;
  definition: UpstreamTool;
}

/** A quarantined tool: why, what the poisoning scan finds, what it is now and what it was approved as. */
export type QuarantinedTool<T> = T & {
  reason: "new" | "changed";
  findings: string[];
  definition?: UpstreamTool;
  /** The definition approved before, when the tool changed. */
  approved?: UpstreamTool;
};

interface KnownTool {
  key: string;
  server: string;
  tool: string;
  hash: string;
}

export interface ToolApprovals {
  /** Reviews a server's new and changed tools: approves what the policy allows, logs the rest. */
  review(server: string, fresh: readonly FreshTool[]): void;
  isQuarantined(tool: { key: string; hash: string }): boolean;
  /** The definition a tool had when it was approved, if it was. */
  approvedDefinition(server: string, tool: string): UpstreamTool | undefined;
  approve(tools: readonly FreshTool[]): void;
  /** Approves catalog tools with the definitions they have now; resolves to how many. */
  approveAsTheyAre(tools: readonly KnownTool[]): number;
  /** The quarantined ones among these tools, with their details. */
  quarantinedAmong<T extends KnownTool>(tools: readonly T[]): QuarantinedTool<T>[];
  /** What the poisoning scan found in the tools reviewed since opening, for `index` to show. */
  findings(): { server: string; tool: string; findings: string[] }[];
  /** Re-reads the approvals when another process (`mcpproxy approve`) changed them. */
  refresh(): void;
  /** Moves whenever the approvals held here change (approved here, or re-read after `refresh`). */
  version(): number;
  /** Forgets the approvals of servers not in `keep`: a server added again under a gone one's name is new. */
  forgetServersExcept(keep: ReadonlySet<string>): void;
  /** Whether any tool of the server is approved. */
  hasApprovals(server: string): boolean;
}

/**
 * How often a running proxy looks for approvals given by another process (`mcpproxy approve`, or
 * another replica's, copied in by the shared store): a pragma read, so cheap, and short enough that
 * an approval is honoured everywhere within a second of being given.
 */
const REFRESH_EVERY_MS = 250;

export function openToolApprovals(
  store: CatalogStore,
  policy: ApprovalPolicy,
  logger: Logger,
): ToolApprovals {
  // The approved hash by tool key, and the servers with any approval (10k tools: keep it small).
  let approved = new Map<string, string>();
  let approvedServers = new Set<string>();
  let seenVersion = -1;
  let checkedAt = 0;
  let changes = 0;
  const found: { server: string; tool: string; findings: string[] }[] = [];
  const load = () => {
    // One pass, no arrays in between: at 100,000 tools they were a good part of every start.
    const hashes = new Map<string, string>();
    const servers = new Set<string>();
    for (const row of store.listApprovals()) {
      hashes.set(toolKey(row), row.hash);
      servers.add(row.server);
    }
    approved = hashes;
    approvedServers = servers;
    seenVersion = store.dataVersion();
    changes++;
  };
  load();

  const approvals: ToolApprovals = {
    review(server, fresh) {
      const isNewServer = !approvedServers.has(server);
      const trust = policy.trustOf(server);
      const accept: FreshTool[] = [];
      for (const tool of fresh) {
        const before = approved.get(tool.key);
        if (before === tool.hash) continue;
        const findings = policy.findingsOf(server, tool.definition);
        if (findings.length > 0) {
          logger.warn(`${server}/${tool.tool} may be poisoned: ${findings.join("; ")}`);
          found.push({ server, tool: tool.tool, findings });
        }
        const mayAccept = !(policy.blockFindings && findings.length > 0);
        if (mayAccept && ((isNewServer && !policy.quarantinesNew(server)) || trust === "auto")) {
          if (before && trust === "auto")
            logger.info(`${server}/${tool.tool} changed; accepted (trust: auto)`);
          accept.push(tool);
        } else {
          logger.warn(
            `${server}/${tool.tool} ${before ? "changed since it was approved" : "is new"}: quarantined (not searchable, ` +
              `not callable) until \`mcpproxy approve ${server}/${tool.tool}\``,
          );
        }
      }
      approvals.approve(accept);
    },
    isQuarantined(tool) {
      approvals.refresh();
      return approved.get(tool.key) !== tool.hash;
    },
    approvedDefinition: (server, tool) => store.approvedDefinition(server, tool),
    findings: () => [...found],
    approve(tools) {
      if (tools.length === 0) return;
      const rows = tools.map(({ server, tool, hash }) => ({ server, tool, hash }));
      store.approve(rows);
      for (const row of rows) {
        approved.set(toolKey(row), row.hash);
        approvedServers.add(row.server);
      }
      seenVersion = store.dataVersion();
      changes++;
    },
    approveAsTheyAre(tools) {
      const fresh = tools.flatMap((tool) => {
        const definition = store.definitionOf(tool.server, tool.tool);
        return definition ? [{ ...tool, definition }] : [];
      });
      approvals.approve(fresh);
      return fresh.length;
    },
    quarantinedAmong(tools) {
      approvals.refresh();
      return tools
        .filter((tool) => approvals.isQuarantined(tool))
        .sort((a, b) => a.key.localeCompare(b.key))
        .map((tool) => {
          const definition = store.definitionOf(tool.server, tool.tool);
          const before = store.approvedDefinition(tool.server, tool.tool);
          return {
            ...tool,
            reason: before ? ("changed" as const) : ("new" as const),
            findings: definition ? policy.findingsOf(tool.server, definition) : [],
            ...(definition ? { definition } : {}),
            ...(before ? { approved: before } : {}),
          };
        });
    },
    hasApprovals(server) {
      approvals.refresh();
      return approvedServers.has(server);
    },
    forgetServersExcept(keep) {
      if (store.forgetApprovalsExcept(keep) > 0) load();
    },
    version() {
      approvals.refresh();
      return changes;
    },
    refresh() {
      const now = Date.now();
      if (now - checkedAt < REFRESH_EVERY_MS) return;
      checkedAt = now;
      if (store.dataVersion() !== seenVersion) load();
    },
  };
  return approvals;
}
