#!/usr/bin/env bun
/**
 * The agent in the conformance suite's client scenarios (scripts/conformance/client.sh runs it
 * after `mcpproxy index`): it starts `mcpproxy serve` over stdio on the config that names the
 * scenario's server as "conformance", and through the proxy lists and calls that server's tools,
 * lists and reads its resources and lists and gets its prompts, so the scenario server sees the
 * proxy's upstream client do each. The scenario server judges that client; this script only makes
 * it act.
 *
 *   bun drive-proxy.ts --config FILE --data-dir DIR [--passthrough]
 *
 * With --passthrough the proxy serves the upstream with its own names (`serve --passthrough
 * conformance`): tools are listed and called directly. Without it (normal mode) the tools come from
 * the saved index (`mcpproxy tools conformance --json`) and are called through `call_tool`.
 * Tool calls come from MCP_CONFORMANCE_CONTEXT's `toolCalls` when the scenario names them, else
 * every tool is called with arguments made from its input schema. Server-to-client requests
 * relayed by the proxy are answered: elicitation accepted with the schema's defaults, sampling with
 * a fixed reply, roots with one root. A v1 SDK client: the downstream era is not what the client
 * scenarios judge.
 */
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ListRootsRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";

const { values } = parseArgs({
  options: { config: { type: "string" }, "data-dir": { type: "string" }, passthrough: { type: "boolean" } },
});
if (!values.config || !values["data-dir"]) {
  console.error("usage: drive-proxy.ts --config FILE --data-dir DIR [--passthrough]");
  process.exit(2);
}
const BINARY = join(resolve(import.meta.dir, "..", ".."), "dist", "mcpproxy");
const SERVER = "conformance";
const common = ["--config", values.config, "--data-dir", values["data-dir"]];
const CALL_TIMEOUT_MS = 10_000;

type Schema = {
  type?: string | string[];
  default?: unknown;
  enum?: unknown[];
  const?: unknown;
  oneOf?: Schema[];
  anyOf?: Schema[];
  items?: Schema;
  properties?: Record<string, Schema>;
  required?: string[];
};

/** A value that fits `schema`: its default, first enum member or constant, else one of its type. */
function sample(schema: Schema | undefined): unknown {
  if (!schema) return "test";
  if (schema.default !== undefined) return schema.default;
  if (schema.const !== undefined) return schema.const;
  if (schema.enum?.length) return schema.enum[0];
  const choice = schema.oneOf?.[0] ?? schema.anyOf?.[0];
  if (choice) return sample(choice);
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  if (type === "number" || type === "integer") return 1;
  if (type === "boolean") return true;
  if (type === "array") return schema.items ? [sample(schema.items)] : [];
  if (type === "object" || schema.properties) return sampleObject(schema, false);
  return "test";
}

/** An object for `schema`: its required properties (or all of them when `all`). */
function sampleObject(schema: Schema, all: boolean): Record<string, unknown> {
  const properties = schema.properties ?? {};
  const names = all ? Object.keys(properties) : (schema.required ?? []);
  return Object.fromEntries(names.map((name) => [name, sample(properties[name])]));
}

interface ToolCall {
  name: string;
  arguments: Record<string, unknown>;
}

function scenarioToolCalls(): ToolCall[] | undefined {
  try {
    const context = JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT ?? "{}") as { toolCalls?: ToolCall[] };
    return Array.isArray(context.toolCalls) ? context.toolCalls : undefined;
  } catch {
    return undefined;
  }
}

/** Runs `step`, printing its failure instead of stopping: the next step still exercises the proxy. */
async function attempt(what: string, step: () => Promise<unknown>): Promise<void> {
  try {
    const result = await step();
    console.error(`drive-proxy: ${what}: ${JSON.stringify(result).slice(0, 300)}`);
  } catch (error) {
    console.error(`drive-proxy: ${what} failed: ${error instanceof Error ? error.message : String(error)}`);
  }
}

const client = new Client(
  { name: "mcpproxy-conformance-driver", version: "1.0.0" },
  { capabilities: { sampling: {}, elicitation: {}, roots: { listChanged: true } } },
);
client.setRequestHandler(ElicitRequestSchema, (request) => {
  const schema = (request.params as { requestedSchema?: Schema }).requestedSchema;
  return { action: "accept", content: schema ? (sampleObject(schema, true) as Record<string, string>) : {} };
});
client.setRequestHandler(CreateMessageRequestSchema, () => ({
  role: "assistant",
  content: { type: "text", text: "A reply from the conformance driver." },
  model: "conformance-driver",
  stopReason: "endTurn",
}));
client.setRequestHandler(ListRootsRequestSchema, () => ({ roots: [{ uri: "file:///tmp", name: "tmp" }] }));

await client.connect(
  new StdioClientTransport({
    command: BINARY,
    args: ["serve", ...common, ...(values.passthrough ? ["--passthrough", SERVER] : [])],
    stderr: "inherit",
  }),
);

/** The upstream's tools as this proxy names them: `name` to call, `tool` the upstream's own name. */
async function upstreamTools(): Promise<{ name: string; tool: string; inputSchema?: Schema }[]> {
  if (values.passthrough) {
    const { tools } = await client.listTools();
    return tools.map((tool) => ({
      name: tool.name,
      tool: tool.name,
      inputSchema: tool.inputSchema as Schema,
    }));
  }
  const listing = Bun.spawnSync([BINARY, "tools", SERVER, "--json", ...common], { stderr: "inherit" });
  return (
    JSON.parse(listing.stdout.toString()) as { tools: { name: string; tool: string; inputSchema?: Schema }[] }
  ).tools;
}

function callThroughProxy(name: string, args: Record<string, unknown>) {
  const options = { timeout: CALL_TIMEOUT_MS };
  if (values.passthrough) return client.callTool({ name, arguments: args }, undefined, options);
  return client.callTool({ name: "call_tool", arguments: { name, arguments: args } }, undefined, options);
}

let tools: Awaited<ReturnType<typeof upstreamTools>> = [];
await attempt("list tools", async () => {
  tools = await upstreamTools();
  return tools.map((tool) => tool.name);
});
const calls =
  scenarioToolCalls() ??
  tools.map((tool) => ({ name: tool.tool, arguments: sampleObject(tool.inputSchema ?? {}, false) }));
for (const call of calls) {
  const proxied = tools.find((tool) => tool.tool === call.name)?.name ?? call.name;
  await attempt(`call ${call.name}`, () => callThroughProxy(proxied, call.arguments));
}

// Resources and prompts, for the scenarios that watch every method's headers.
const capabilities = client.getServerCapabilities() ?? {};
if (capabilities.resources) {
  await attempt("list and read resources", async () => {
    const { resources } = await client.listResources();
    const first = resources[0];
    return first ? await client.readResource({ uri: first.uri }) : "no resources";
  });
}
if (capabilities.prompts) {
  await attempt("list and get prompts", async () => {
    const { prompts } = await client.listPrompts();
    const first = prompts[0];
    if (!first) return "no prompts";
    const args = Object.fromEntries((first.arguments ?? []).map((argument) => [argument.name, "test"]));
    return await client.getPrompt({ name: first.name, arguments: args });
  });
}
await client.close();
