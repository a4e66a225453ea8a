import { afterEach, describe, expect, setDefaultTimeout, test } from "bun:test";
import { join } from "node:path";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { Client as V1Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport as V1StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport as V1StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { ROOT, watchOutput } from "./helpers.ts";

setDefaultTimeout(30_000);

/**
 * tests/fixtures/conformance-server.ts is the server scripts/conformance.sh runs the conformance
 * suite against, directly and behind the proxy. These tests keep it working without the suite:
 * both eras, over stdio and HTTP, including the multi-round-trip tools the 2026 scenarios call.
 */
const FIXTURE = join(ROOT, "tests", "fixtures", "conformance-server.ts");
const ELICITATION_TOOL = "test_input_required_result_elicitation";

/** A few of the names the suite's scenarios ask for (the fixture serves more). */
const SOME_TOOLS = [
  "test_simple_text",
  "test_image_content",
  "test_missing_capability",
  "test_trigger_tool_change",
  ELICITATION_TOOL,
];

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function startFixtureHttp(): Promise<URL> {
  const child = Bun.spawn([process.execPath, FIXTURE, "--http", "0"], { stdout: "pipe", stderr: "ignore" });
  cleanups.push(() => child.kill());
  const port = await watchOutput(child.stdout).waitFor(/\{"port":(\d+)\}/, 10_000);
  return new URL(`http://127.0.0.1:${port}/mcp`);
}

const stdioParams = { command: process.execPath, args: [FIXTURE], stderr: "ignore" as const };

function firstText(result: unknown): string | undefined {
  return (result as { content?: { type: string; text?: string }[] }).content?.[0]?.text;
}

/** A v2 client pinned to 2026-07-28 that fulfils elicitation input requests with `answer`. */
async function connectModern(kind: "stdio" | "http", answer: Record<string, string> = { name: "Ada" }) {
  const client = new Client(
    { name: "fixture-test", version: "1.0.0" },
    { capabilities: { elicitation: {} }, versionNegotiation: { mode: { pin: "2026-07-28" } } },
  );
  client.setRequestHandler("elicitation/create", () => ({ action: "accept", content: answer }));
  const transport =
    kind === "stdio"
      ? new StdioClientTransport(stdioParams)
      : new StreamableHTTPClientTransport(await startFixtureHttp());
  await client.connect(transport);
  cleanups.push(() => client.close());
  expect(client.getNegotiatedProtocolVersion()).toBe("2026-07-28");
  return client;
}

/** A v1 SDK client (2025-11-25, initialize handshake) that answers elicitation/create with `answer`. */
async function connectLegacy(kind: "stdio" | "http", answer: Record<string, string> = { name: "Grace" }) {
  const client = new V1Client(
    { name: "fixture-test-v1", version: "1.0.0" },
    { capabilities: { elicitation: {} } },
  );
  client.setRequestHandler(ElicitRequestSchema, () => ({ action: "accept", content: answer }));
  const transport =
    kind === "stdio"
      ? new V1StdioClientTransport(stdioParams)
      : new V1StreamableHTTPClientTransport(await startFixtureHttp());
  await client.connect(transport);
  cleanups.push(() => client.close());
  return client;
}

describe("the conformance fixture server", () => {
  for (const kind of ["stdio", "http"] as const) {
    test(`a v2 client pinned to 2026-07-28 lists its tools and calls them over ${kind}`, async () => {
      const client = await connectModern(kind);
      const names = (await client.listTools()).tools.map((tool) => tool.name);
      expect(names).toEqual(expect.arrayContaining(SOME_TOOLS));
      expect(firstText(await client.callTool({ name: "test_simple_text", arguments: {} }))).toBe(
        "This is a simple text response for testing.",
      );
      const image = await client.callTool({ name: "test_image_content", arguments: {} });
      expect(image.content).toEqual([{ type: "image", data: expect.any(String), mimeType: "image/png" }]);
    });

    test(`a v2 client's elicitation answer reaches an input_required tool on its retry over ${kind}`, async () => {
      const client = await connectModern(kind, { name: "Ada" });
      const result = await client.callTool({ name: ELICITATION_TOOL, arguments: {} });
      expect(firstText(result)).toBe('Hello: action=accept, content={"name":"Ada"}');
    });

    test(`a tool that needs sampling answers -32021 to a 2026 client that did not declare it over ${kind}`, async () => {
      const client = await connectModern(kind);
      const calling = client.callTool({ name: "test_missing_capability", arguments: {} });
      await expect(calling).rejects.toMatchObject({ code: -32021 });
    });

    test(`a v1 (2025-11-25) client lists and calls the same tools over ${kind}`, async () => {
      const client = await connectLegacy(kind);
      const names = (await client.listTools()).tools.map((tool) => tool.name);
      expect(names).toEqual(expect.arrayContaining(SOME_TOOLS));
      expect(firstText(await client.callTool({ name: "test_simple_text", arguments: {} }))).toBe(
        "This is a simple text response for testing.",
      );
    });

    test(`the same input_required tool asks a v1 client with a real elicitation/create over ${kind}`, async () => {
      const client = await connectLegacy(kind, { name: "Grace" });
      const result = await client.callTool({ name: ELICITATION_TOOL, arguments: {} });
      expect(firstText(result)).toBe('Hello: action=accept, content={"name":"Grace"}');
    });
  }

  test("a tampered requestState is refused with -32602 (HTTP, 2026-07-28)", async () => {
    const url = await startFixtureHttp();
    const tool = "test_input_required_result_tampered_state";
    const call = async (params: Record<string, unknown>) => {
      const response = await fetch(url, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          "mcp-protocol-version": "2026-07-28",
          "mcp-method": "tools/call",
          "mcp-name": tool,
        },
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: 1,
          method: "tools/call",
          params: {
            name: tool,
            arguments: {},
            ...params,
            _meta: {
              "io.modelcontextprotocol/protocolVersion": "2026-07-28",
              "io.modelcontextprotocol/clientCapabilities": { elicitation: {} },
            },
          },
        }),
      });
      return (await response.json()) as {
        result?: { resultType?: string; requestState?: string; content?: unknown };
        error?: { code: number };
      };
    };
    const first = await call({});
    expect(first.result?.resultType).toBe("input_required");
    const state = first.result?.requestState ?? "";
    expect(state).not.toBe("");
    const inputResponses = { confirm: { action: "accept", content: { ok: true } } };
    // The honest retry completes; the same retry with one character of the state changed does not.
    expect((await call({ inputResponses, requestState: state })).result?.content).toBeDefined();
    // A character in the middle: the last one of base64 may carry only padding bits, and changing
    // those left the decoded state, and so its check, as it was (this test failed now and then).
    const at = Math.floor(state.length / 2);
    const tampered = `${state.slice(0, at)}${state[at] === "A" ? "B" : "A"}${state.slice(at + 1)}`;
    const refused = await call({ inputResponses, requestState: tampered });
    expect(refused.result).toBeUndefined();
    expect(refused.error?.code).toBe(-32602);
  });
});
