/**
 * A tool as an upstream lists it (the MCP `Tool` shape, kept whole for later use). Every layer
 * names it: the catalog stores it (store/), search indexes it (index/), the proxy serves it.
 */
export interface UpstreamTool {
  name: string;
  description?: string | undefined;
  inputSchema: Record<string, unknown>;
  [key: string]: unknown;
}
