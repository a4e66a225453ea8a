import type { Server, Tool } from "@modelcontextprotocol/server";
import { ProtocolError, ProtocolErrorCode } from "@modelcontextprotocol/server";
import type { AllTools } from "../../routing/all-tools.ts";
import { pageOf } from "../../routing/list-pages.ts";
import type { ProxyServerDeps } from "../proxy-deps.ts";

/**
 * tools/list in `all` routing, either era: the proxy's own tools, then every approved tool of the
 * catalog view this server was given (a profile's view scopes it), in pages (list-pages.ts).
 */
export function serveAllToolsList(
  server: Server,
  deps: Pick<ProxyServerDeps, "catalog" | "firstIndexing">,
  allTools: AllTools,
  /** Made at each list: retrieve_tools' description follows the servers (search-description.ts). */
  builtins: () => readonly Tool[],
): void {
  server.setRequestHandler("tools/list", async (request) => {
    // On a first run the list is what the first indexing pass finds, not the built-ins alone:
    // many clients read it once and never again.
    if (deps.firstIndexing && deps.catalog.size() === 0) await deps.firstIndexing;
    const own = builtins().map((tool) => ({ tool, name: tool.name, bytes: JSON.stringify(tool).length }));
    const page = pageOf(own, allTools.list(deps.catalog), request.params?.cursor);
    if (!page) throw new ProtocolError(ProtocolErrorCode.InvalidParams, "tools/list: unknown cursor");
    return {
      // The catalog keeps each definition as its server listed it, checked then as an MCP Tool.
      tools: page.items.map((item) => item.tool) as Tool[],
      ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}),
    };
  });
}
