import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import * as v from "valibot";
import { readConfigServers, type ServerEdit } from "../config/config-writer.ts";
import { ProxyError } from "../errors.ts";
import type { ToolCatalog } from "../index/tool-catalog.ts";
import type { UpstreamPool } from "../upstream/upstream-pool.ts";
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
  edit(edits: readonly ServerEdit[]): Promise<{ added: string[]; removed: string[]; changed: string[] }>;
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
        "Changes are saved to the config file. A server you add is quarantined: its tools are not searchable " +
        "until the user runs `mcpproxy approve`.",
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

export interface ServerRow {
  name: string;
  state: string;
  transport: string;
  tools: number;
  quarantinedTools: number;
  error?: string;
  connectedSince?: string;
}

/** How many tools each server has in quarantine. */
export function quarantinedByServer(catalog: ToolCatalog): Map<string, number> {
  const counts = new Map<string, number>();
  for (const tool of catalog.quarantined()) counts.set(tool.server, (counts.get(tool.server) ?? 0) + 1);
  return counts;
}

export function serverRows(pool: UpstreamPool, catalog: ToolCatalog): ServerRow[] {
  const quarantined = quarantinedByServer(catalog);
  return pool.status().map((status) => ({
    name: status.name,
    state: status.state,
    transport: status.transport,
    tools: status.toolCount || catalog.names(status.name).length,
    quarantinedTools: quarantined.get(status.name) ?? 0,
    ...(status.error ? { error: status.error.split("\n")[0]! } : {}),
    ...(status.connectedSince ? { connectedSince: new Date(status.connectedSince).toISOString() } : {}),
  }));
}

type Args = v.InferOutput<ReturnType<typeof upstreamServersArgs>>;

/** Runs one operation; resolves to what the agent sees. Throws ProxyError for a request that cannot be done. */
export async function runUpstreamServers(
  args: Args,
  manager: ServerEditor,
  pool: UpstreamPool,
  catalog: ToolCatalog,
  configPath: string,
): Promise<Record<string, unknown>> {
  if (args.operation === "list") return { servers: serverRows(pool, catalog) };
  if (args.operation === "restart") {
    await manager.restart(required(args.name, "restart"));
    return { operation: "restart", servers: serverRows(pool, catalog) };
  }
  const existing = readConfigServers(configPath).servers;
  const edits = editsFor(args, existing);
  const applied = await manager.edit(edits);
  return { operation: args.operation, applied, servers: serverRows(pool, catalog) };
}

function required(name: string | undefined, operation: string): string {
  if (!name) throw new ProxyError("USAGE", `${operation} needs the server's name`);
  return name;
}

/** The config edits an operation makes: validated against what the file holds now. */
export function editsFor(
  args: {
    operation: string;
    name?: string | undefined;
    server?: Record<string, unknown> | undefined;
    servers?: Record<string, Record<string, unknown>> | undefined;
  },
  existing: Record<string, Record<string, unknown>>,
  { quarantineAdded = true } = {},
): ServerEdit[] {
  const known = (name: string) => {
    const found = existing[name];
    if (!found) {
      throw new ProxyError(
        "USAGE",
        `No server named ${name} in the config. Servers: ${Object.keys(existing).join(", ") || "none"}.`,
      );
    }
    return found;
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
        if (existing[name]) throw new ProxyError("USAGE", `${name} exists already: use update to change it`);
        return { name, entry: quarantineAdded ? { ...server, quarantined: true } : server };
      });
    }
    case "update": {
      const name = required(args.name, "update");
      if (!args.server) throw new ProxyError("USAGE", "update needs `server`: the fields to change");
      return [{ name, entry: { ...known(name), ...args.server } }];
    }
    case "remove": {
      const name = required(args.name, "remove");
      known(name);
      return [{ name, entry: undefined }];
    }
    case "enable":
    case "disable": {
      const name = required(args.name, args.operation);
      const { disabled: _disabled, ...rest } = known(name);
      return [{ name, entry: { ...rest, enabled: args.operation === "enable" } }];
    }
    default:
      throw new ProxyError("USAGE", `unknown operation ${args.operation}`);
  }
}
