#!/usr/bin/env bun
import { parseArgs } from "node:util";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { CallToolRequestSchema, ListToolsRequestSchema, type Tool } from "@modelcontextprotocol/sdk/types.js";
import { loadEvalCatalog, serverPath } from "./eval-catalog.ts";

/**
 * Serves every server of an eval catalog as a real MCP server over streamable HTTP, one path per
 * server (`/s/<name>/mcp`), from one process. Usage: bun bench/catalog-server.ts FILE.json [--port P]
 * Prints {"port":N} on stdout once listening. A tool call answers with a short text naming the tool.
 */

const { values, positionals } = parseArgs({ options: { port: { type: "string" } }, allowPositionals: true });
const file = positionals[0];
if (!file) {
  process.stderr.write("usage: bun bench/catalog-server.ts FILE.json [--port P]\n");
  process.exit(2);
}
const catalog = loadEvalCatalog(file);
const toolsByPath = new Map<string, { server: string; tools: Tool[] }>();
for (const tool of catalog.tools) {
  const path = serverPath(tool.server);
  const entry = toolsByPath.get(path) ?? { server: tool.server, tools: [] };
  entry.tools.push({
    name: tool.name,
    description: tool.description ?? "",
    inputSchema: { type: "object", ...(tool.inputSchema ?? {}) } as Tool["inputSchema"],
  });
  toolsByPath.set(path, entry);
}

function createServer(server: string, tools: Tool[]): Server {
  const mcp = new Server({ name: server, version: "1.0.0" }, { capabilities: { tools: {} } });
  mcp.setRequestHandler(ListToolsRequestSchema, async () => ({ tools }));
  mcp.setRequestHandler(CallToolRequestSchema, async (request) => ({
    content: [{ type: "text", text: `${server}/${request.params.name} called` }],
  }));
  return mcp;
}

const http = Bun.serve({
  hostname: "127.0.0.1",
  port: Number(values.port ?? 0),
  idleTimeout: 0,
  async fetch(request) {
    const entry = toolsByPath.get(new URL(request.url).pathname);
    if (!entry) return new Response("no such server", { status: 404 });
    // Stateless servers offer no standalone SSE stream. Holding one open per server would also use up
    // the client's pool of concurrent fetches (Bun's default is 256) long before 491 servers connect.
    if (request.method === "GET") return new Response(null, { status: 405, headers: { allow: "POST" } });
    // Stateless: each request gets a fresh server and transport, as the SDK's stateless example does.
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
    });
    await createServer(entry.server, entry.tools).connect(transport);
    return transport.handleRequest(request);
  },
});
process.stdout.write(
  `${JSON.stringify({ port: http.port, servers: toolsByPath.size, tools: catalog.tools.length })}\n`,
);
