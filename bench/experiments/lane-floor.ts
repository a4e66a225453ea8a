#!/usr/bin/env bun
/**
 * The floor of a plain lane: the proxy's own stdio transports (server/transport/stdio-transport.ts
 * to the client, upstream/child-process-transport.ts to the server) with nothing between them but
 * the JSON of each message, read and written again. A `call_tool` of SERVER__TOOL, or a call of
 * SERVER__TOOL by name, is sent to the server as a call of TOOL; `retrieve_tools` is answered
 * empty; everything else (initialize, its notification, a 2026 client's server/discover) passes as
 * it is. No lookup, checks, statistics, relays, clocks or SDK: what a lane from the client's line
 * to the server's stdin and back costs at the least, in this runtime, with these transports.
 *
 * It takes `serve`'s arguments, so that `npm run bench:overhead` runs it in mcpproxy's place and
 * measures it beside the build (the first server of the config is the one it starts):
 *
 *   npm run bench:overhead -- --only stdio --binary bench/experiments/lane-floor.ts --baseline dist/mcpproxy
 */
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import type { JSONRPCMessage } from "@modelcontextprotocol/server";
import { LineStdioServerTransport } from "../../src/server/transport/stdio-transport.ts";
import { ChildProcessTransport } from "../../src/upstream/child-process-transport.ts";

const { values } = parseArgs({
  args: process.argv.slice(3),
  options: { config: { type: "string" }, "data-dir": { type: "string" } },
  strict: false,
});
const config = JSON.parse(readFileSync(String(values.config), "utf8")) as {
  mcpServers: Record<string, { command: string; args?: string[] }>;
};
const [entry] = Object.values(config.mcpServers);
if (!entry) throw new Error("lane-floor: the config names no server");

const server = new ChildProcessTransport({
  command: entry.command,
  args: entry.args ?? [],
  env: process.env as Record<string, string>,
  maxResultBytes: 16 * 1024 * 1024,
});
const client = new LineStdioServerTransport({ maxRequestBytes: 16 * 1024 * 1024 });

/** The tool a public name (SERVER__TOOL) stands for on the one server; a bare name is the tool's own. */
const toolOf = (name: string) => {
  const at = name.indexOf("__");
  return at < 0 ? name : name.slice(at + 2);
};

client.onmessage = (message) => {
  const request = message as { id?: unknown; method?: string; params?: Record<string, unknown> };
  if (request.method === "tools/call" && request.params) {
    const { name, arguments: args } = request.params as { name: string; arguments?: Record<string, unknown> };
    if (name === "retrieve_tools") {
      void client.send({
        jsonrpc: "2.0",
        id: request.id,
        result: { content: [{ type: "text", text: "{}" }] },
      } as JSONRPCMessage);
      return;
    }
    const asked = name === "call_tool" ? (args as { name: string; arguments?: unknown }) : undefined;
    const params = asked
      ? { ...request.params, name: toolOf(asked.name), arguments: asked.arguments }
      : { ...request.params, name: toolOf(name) };
    void server.send({ ...request, params } as unknown as JSONRPCMessage);
    return;
  }
  void server.send(message);
};
server.onmessage = (message) => void client.send(message);
await server.start();
await client.start();
await client.closed;
await server.close();
process.exit(0);
