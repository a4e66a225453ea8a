import type { Client, Tool } from "@modelcontextprotocol/client";
import { ResultSchema } from "@modelcontextprotocol/core";
import { DEFAULT_MAX_TOOL_LIST_BYTES, DEFAULT_MAX_TOOLS } from "../config/load-config.ts";
import { ProxyError } from "../errors.ts";
import { skippedIn, toolProblem } from "./lenient-results.ts";
import { CAPABILITIES_META_KEY, CLIENT_CAPABILITIES } from "./modern-wire.ts";

/**
 * What a server lists, every page of it: its tools (bounded in count and bytes across pages), its
 * prompts and resource templates.
 */
/** What a server listed besides tools when it connected; a kind it does not offer (or failed to list) is absent. */
export interface ListedCapabilities {
  prompts?: readonly { name: string }[] | undefined;
  templates?: readonly { name: string }[] | undefined;
}

/**
 * Every page of a server's prompts and resource templates, as far as it declares them. A server
 * that fails to list them still connects: they are listed again when a client asks.
 */
export async function listCapabilities(client: Client, timeoutMs: number): Promise<ListedCapabilities> {
  const declared = client.getServerCapabilities();
  const meta =
    client.getProtocolEra() === "modern" ? { _meta: { [CAPABILITIES_META_KEY]: CLIENT_CAPABILITIES } } : {};
  const all = async (method: string, key: string) => {
    const items: { name: string }[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < 100; page++) {
      const params = { ...(cursor ? { cursor } : {}), ...meta };
      const result = (await client.request({ method, params }, ResultSchema, {
        timeout: timeoutMs,
      })) as Record<string, unknown>;
      const listed = result[key];
      if (!Array.isArray(listed)) break;
      for (const item of listed) {
        if (item && typeof item === "object" && typeof (item as { name?: unknown }).name === "string")
          items.push(item as { name: string });
      }
      cursor = typeof result.nextCursor === "string" && result.nextCursor ? result.nextCursor : undefined;
      if (!cursor) break;
    }
    return items;
  };
  const [prompts, templates] = await Promise.all([
    declared?.prompts ? all("prompts/list", "prompts").catch(() => undefined) : undefined,
    declared?.resources
      ? all("resources/templates/list", "resourceTemplates").catch(() => undefined)
      : undefined,
  ]);
  return { ...(prompts ? { prompts } : {}), ...(templates ? { templates } : {}) };
}

export interface ToolListing {
  tools: Tool[];
  /** Entries that are not tools (no name, no object input schema), described for the log. */
  skipped: string[];
}

/** Bounds on a server's whole tool list, all pages together. */
export interface ToolListBounds {
  maxTools: number;
  maxToolListBytes: number;
}

const DEFAULT_TOOL_LIST_BOUNDS: ToolListBounds = {
  maxTools: DEFAULT_MAX_TOOLS,
  maxToolListBytes: DEFAULT_MAX_TOOL_LIST_BYTES,
};

/**
 * Every page of tools/list. Read leniently and checked tool by tool: the SDK's strict result
 * schema would reject a server's whole list for one malformed entry, and the agent would lose
 * all of that server's good tools with it (on a 2026 connection the entries it would refuse are
 * taken out before it sees them: lenient-results.ts). Each page is bounded by the message limit;
 * the pages together by `bounds` (a server paging without end is stopped there, not at 2.5 GiB),
 * entries left out included. A 2026 server is asked with the union of the capabilities the
 * proxy's callers may have: some servers list some tools only to capable clients.
 */
export async function listAllTools(
  client: Client,
  timeoutMs: number,
  bounds: ToolListBounds = DEFAULT_TOOL_LIST_BOUNDS,
): Promise<ToolListing> {
  const listing: ToolListing = { tools: [], skipped: [] };
  let cursor: string | undefined;
  let bytes = 0;
  const isModern = client.getProtocolEra() === "modern";
  const meta = isModern ? { _meta: { [CAPABILITIES_META_KEY]: CLIENT_CAPABILITIES } } : {};
  for (let page = 0; page < 1000; page++) {
    const result = (await client.request(
      { method: "tools/list", params: { ...(cursor ? { cursor } : {}), ...meta } },
      ResultSchema,
      { timeout: timeoutMs },
    )) as { tools?: unknown; nextCursor?: unknown; _meta?: unknown };
    if (!Array.isArray(result.tools)) throw new Error("tools/list returned no tools array");
    const leftOut = isModern ? skippedIn(result) : [];
    const count = result.tools.length + leftOut.length;
    if (listing.tools.length + listing.skipped.length + count > bounds.maxTools) {
      throw new ProxyError(
        "UPSTREAM_CONNECT_FAILED",
        `the server lists more than ${bounds.maxTools} tools, over the limit (maxTools: raise it in ` +
          "this server's entry, or for every server with mcpproxy.maxTools or MCPPROXY_MAX_TOOLS)",
      );
    }
    bytes += Buffer.byteLength(JSON.stringify(result.tools));
    for (const entry of leftOut) bytes += entry.bytes;
    if (bytes > bounds.maxToolListBytes) {
      throw new ProxyError(
        "UPSTREAM_CONNECT_FAILED",
        `the server's tool list is larger than ${bounds.maxToolListBytes} bytes, over the limit ` +
          "(maxToolListBytes: raise it in this server's entry, or for every server with " +
          "mcpproxy.maxToolListBytes or MCPPROXY_MAX_TOOL_LIST_BYTES)",
      );
    }
    for (const entry of leftOut) listing.skipped.push(entry.problem);
    for (const entry of result.tools) {
      const problem = toolProblem(entry);
      if (problem) listing.skipped.push(problem);
      else listing.tools.push(entry as Tool);
    }
    cursor = typeof result.nextCursor === "string" && result.nextCursor ? result.nextCursor : undefined;
    if (!cursor) break;
  }
  return listing;
}
