import type { Tool } from "@modelcontextprotocol/server";
import * as v from "valibot";
import { ProxyError } from "../../errors.ts";
import type { ToolCatalog } from "../../index/tool-catalog.ts";
import type { GateStatus } from "../../limits/call-gate.ts";
import { agentAdded, agentEnabled, agentUpdated, keysRefusedToAgents } from "../../security/agent-edits.ts";
import { escapeUnshown } from "../../security/hidden-characters.ts";
import { serverNameProblem } from "../../security/server-names.ts";
import type { ServerEdit } from "../../store/config-writer.ts";
import type { ServerStatus } from "../../upstream/pool-types.ts";
import type { UpstreamPool } from "../../upstream/upstream-pool.ts";
import { RESERVED_TOOL_NAMES } from "./builtin-tools.ts";

/**
 * `upstream_servers`: the agent's view of the proxy's servers, and, unless `readOnly`, a way to
 * change them while the proxy runs (SPEC §5). Every change goes through the config file (see
 * server-manager.ts), so it is validated like a hand edit and survives a restart. A server an
 * agent adds is marked `quarantined`: its tools wait for `mcpproxy approve` before they can be
 * found or called.
 */
export const UPSTREAM_SERVERS = "upstream_servers";
if (!RESERVED_TOOL_NAMES.has(UPSTREAM_SERVERS))
  throw new Error("upstream_servers must be a reserved tool name");

/** What changes the servers (src/app/server-manager.ts): the config file, then the pool and the index. */
export interface ServerEditor {
  /** `plan` makes the edits from the servers the file holds when it is edited (see config-writer.ts). */
  edit(
    plan: (current: Record<string, Record<string, unknown>>) => readonly ServerEdit[],
  ): Promise<{ added: string[]; removed: string[]; changed: string[] }>;
  restart(server: string): Promise<void>;
}

const MUTATING = ["add", "remove", "update", "enable", "disable", "restart"] as const;
const OPERATIONS = ["list", ...MUTATING] as const;

const entry = v.custom<Record<string, unknown>>(
  (input) => input !== null && typeof input === "object" && !Array.isArray(input),
  'server must be an object: a config entry such as {"command": "npx", "args": [...]} or {"url": "https://..."}',
);

export function upstreamServersArgs(readOnly: boolean) {
  const operations = readOnly ? (["list"] as const) : OPERATIONS;
  return v.object({
    operation: v.picklist(operations, `operation must be one of ${operations.join(", ")}`),
    name: v.optional(v.pipe(v.string("name must be a string"), v.nonEmpty("name must not be empty"))),
    server: v.optional(entry),
    servers: v.optional(v.record(v.string(), entry, "servers must map names to config entries")),
  });
}

export function upstreamServersDefinition(readOnly: boolean): Tool {
  const operations = readOnly ? ["list"] : [...OPERATIONS];
  return {
    name: UPSTREAM_SERVERS,
    title: "Manage upstream servers",
    description: readOnly
      ? "List the MCP servers behind this proxy: state, transport, tool count, last error, quarantined tools."
      : "List the MCP servers behind this proxy, or change them while it runs: add (one, or several with " +
        "`servers`), update (fields merged into the entry), remove, enable, disable, restart. `server` is a config " +
        'entry, as in mcp_config.json: {"command": "npx", "args": ["-y", "pkg"]} or {"url": "https://host/mcp"}. ' +
        "Changes are saved to the config file (or the team's shared store, for every replica). Nothing you add, change the command, URL or environment of, or " +
        "enable runs or connects until the user approves it with `mcpproxy approve NAME`; its tools are then " +
        "held for the user's review once more. `${VAR}` in what you write is kept as written until then. " +
        "Trust, quarantine, roots and approvals are the user's to set, not yours.",
    inputSchema: {
      type: "object",
      properties: {
        operation: { type: "string", enum: operations },
        name: { type: "string", description: "The server's name (all operations but list and a batch add)." },
        server: {
          type: "object",
          description: "add/update: the config entry (update merges it into the old one).",
        },
        servers: { type: "object", description: "add several: {name: entry, ...}" },
      },
      required: ["operation"],
    },
    annotations: readOnly
      ? { readOnlyHint: true, openWorldHint: false }
      : { destructiveHint: true, openWorldHint: true },
  };
}

interface ServerRow {
  name: string;
  state: string;
  transport: string;
  tools: number;
  quarantinedTools: number;
  error?: string;
  connectedSince?: string;
  /** While connected: the protocol version spoken with it (2026-07-28: the modern era; older: legacy). */
  protocolVersion?: string;
  /** While it is down: when it is tried again, after how many failures, whether calls fail at once. */
  retryAt?: string;
  failures?: number;
  circuitOpen?: boolean;
  /** Its call limits (rateLimit, maxConcurrent) and how they are doing, when it has limits. */
  limits?: GateStatus;
}

/** How many tools each server has in quarantine. */
export function quarantinedByServer(catalog: ToolCatalog): Map<string, number> {
  const counts = new Map<string, number>();
  for (const tool of catalog.quarantined()) counts.set(tool.server, (counts.get(tool.server) ?? 0) + 1);
  return counts;
}

function serverRows(pool: UpstreamPool, catalog: ToolCatalog): ServerRow[] {
  const quarantined = quarantinedByServer(catalog);
  return pool.status().map((status) => ({
    name: status.name,
    state: status.state,
    transport: status.transport,
    tools: status.toolCount || catalog.names(status.name).length,
    quarantinedTools: quarantined.get(status.name) ?? 0,
    ...(status.error ? { error: status.error.split("\n")[0]! } : {}),
    ...(status.connectedSince ? { connectedSince: new Date(status.connectedSince).toISOString() } : {}),
    ...(status.protocolVersion ? { protocolVersion: status.protocolVersion } : {}),
    ...retrySchedule(status),
    ...(status.limits ? { limits: status.limits } : {}),
  }));
}

/** When a server that is down is tried again, as /health and `upstream_servers list` show it. */
export function retrySchedule(server: ServerStatus): {
  retryAt?: string;
  failures?: number;
  circuitOpen?: boolean;
} {
  if (server.retryAt === undefined) return {};
  return {
    retryAt: new Date(server.retryAt).toISOString(),
    ...(server.failures !== undefined ? { failures: server.failures } : {}),
    circuitOpen: server.circuitOpen === true,
  };
}

type Args = v.InferOutput<ReturnType<typeof upstreamServersArgs>>;

/** Runs one operation; resolves to what the agent sees. Throws ProxyError for a request that cannot be done. */
export async function runUpstreamServers(
  args: Args,
  manager: ServerEditor,
  pool: UpstreamPool,
  catalog: ToolCatalog,
): Promise<Record<string, unknown>> {
  if (args.operation === "list") return { servers: serverRows(pool, catalog) };
  if (args.operation === "restart") {
    await manager.restart(required(args.name, "restart"));
    return { operation: "restart", servers: serverRows(pool, catalog) };
  }
  // Planned from the file as the edit finds it, not as it was when the call arrived: two calls at
  // once (or a hand edit meanwhile) each build on the other's change.
  let edits: readonly ServerEdit[] = [];
  const applied = await manager.edit((current) => {
    edits = editsFor(args, current, "agent");
    return edits;
  });
  const servers = serverRows(pool, catalog);
  const waiting = servers
    .filter((row) => row.state === "awaiting-approval" && edits.some((edit) => edit.name === row.name))
    .map((row) => row.name);
  return {
    operation: args.operation,
    applied,
    servers,
    ...(waiting.length > 0
      ? {
          awaitingApproval: waiting,
          note:
            `${waiting.join(", ")} will not run until the user approves ${waiting.length === 1 ? "it" : "them"}: ` +
            `ask the user to run \`mcpproxy approve ${waiting.join(" ")}\`.`,
        }
      : {}),
  };
}

function required(name: string | undefined, operation: string): string {
  if (!name) throw new ProxyError("USAGE", `${operation} needs the server's name`);
  return name;
}

/** Who makes a change: an agent's is held for approval (security/agent-edits.ts), a person's is not. */
export type Editor = "agent" | "person";

/** The config edits an operation makes: validated against what the file holds now. */
export function editsFor(
  args: {
    operation: string;
    name?: string | undefined;
    server?: Record<string, unknown> | undefined;
    servers?: Record<string, Record<string, unknown>> | undefined;
  },
  existing: Record<string, Record<string, unknown>>,
  by: Editor,
  now = new Date(),
): ServerEdit[] {
  const isAgent = by === "agent";
  // Own keys only: `valueOf` or `constructor` must not find what every object has.
  const known = (name: string) => {
    if (!Object.hasOwn(existing, name)) {
      throw new ProxyError(
        "USAGE",
        `No server named ${name} in the config. Servers: ${Object.keys(existing).join(", ") || "none"}.`,
      );
    }
    return existing[name]!;
  };
  const checked = (name: string, entry: Record<string, unknown> | undefined) => {
    const problem = serverNameProblem(name);
    if (problem) throw new ProxyError("USAGE", `${escapeUnshown(JSON.stringify(name))}: ${problem}`);
    if (isAgent && entry) {
      const refused = keysRefusedToAgents(entry);
      if (refused.length > 0) {
        throw new ProxyError(
          "USAGE",
          `${refused.join(", ")}: ${refused.length === 1 ? "this key is" : "these keys are"} not for an agent to set. ` +
            "An agent may give a server's command, args, env, cwd, url, headers, transport, oauth and timeouts; " +
            "trust, quarantine, lazy starts, automatic fallbacks, roots, relays, inherited environment, tool overrides " +
            "(tools, disabledTools) and approvals are set by the user in the config file.",
        );
      }
    }
    return name;
  };
  switch (args.operation) {
    case "add": {
      const batch = args.servers ?? (args.server ? { [required(args.name, "add")]: args.server } : undefined);
      if (!batch || Object.keys(batch).length === 0) {
        throw new ProxyError(
          "USAGE",
          "add needs `name` and `server` (a config entry), or `servers` for several",
        );
      }
      return Object.entries(batch).map(([name, server]) => {
        checked(name, server);
        if (Object.hasOwn(existing, name))
          throw new ProxyError("USAGE", `${name} exists already: use update to change it`);
        return { name, entry: isAgent ? agentAdded(server, now) : server };
      });
    }
    case "update": {
      const name = required(args.name, "update");
      if (!args.server) throw new ProxyError("USAGE", "update needs `server`: the fields to change");
      checked(name, args.server);
      const previous = known(name);
      return [
        { name, entry: isAgent ? agentUpdated(previous, args.server, now) : { ...previous, ...args.server } },
      ];
    }
    case "remove": {
      const name = required(args.name, "remove");
      known(name);
      return [{ name, entry: undefined }];
    }
    case "enable": {
      const name = required(args.name, "enable");
      const previous = known(name);
      if (previous.enabled !== false && previous.disabled !== true) return [{ name, entry: previous }];
      if (isAgent) return [{ name, entry: agentEnabled(previous, now) }];
      const { disabled: _disabled, ...rest } = previous;
      return [{ name, entry: { ...rest, enabled: true } }];
    }
    case "disable": {
      const name = required(args.name, "disable");
      const { disabled: _disabled, ...rest } = known(name);
      return [{ name, entry: { ...rest, enabled: false } }];
    }
    default:
      throw new ProxyError("USAGE", `unknown operation ${args.operation}`);
  }
}
