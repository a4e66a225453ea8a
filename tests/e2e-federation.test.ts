import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  CallToolResultSchema,
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ListRootsRequestSchema,
  LoggingMessageNotificationSchema,
  ResourceUpdatedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";
import {
  createSandbox,
  eventually,
  everythingEntry,
  requireBinary,
  type Sandbox,
  startHttpProxy,
} from "./helpers.ts";

// A loaded 2-core machine can be slow without anything being wrong: a generous bound, not 5 s.
setDefaultTimeout(60_000);

/**
 * Everything besides tools, through the compiled binary: two copies of the published reference
 * server (`server-everything`) under the names alpha and beta, whose resources, templates and
 * prompts clash by name; sampling, elicitation and roots requests it makes while serving a call
 * reach this test's client and the answers go back; progress and log messages arrive.
 */
const CLIENT_CAPABILITIES = {
  sampling: {},
  elicitation: { form: {} },
  roots: { listChanged: true },
};

interface Seen {
  sampling: string[];
  elicitations: number;
  logs: string[];
  updated?: string[];
}

/** A client that answers what server-everything asks: a canned completion, a filled-in form, one root. */
function answeringClient(seen: Seen, capabilities: Record<string, unknown> = CLIENT_CAPABILITIES) {
  const client = new Client({ name: "federation-test", version: "1.0.0" }, { capabilities });
  if ("sampling" in capabilities) {
    client.setRequestHandler(CreateMessageRequestSchema, async (request) => {
      const first = request.params.messages[0]?.content;
      const text = first && "text" in first ? String(first.text) : "";
      seen.sampling.push(text);
      return { model: "test-model", role: "assistant", content: { type: "text", text: `sampled: ${text}` } };
    });
  }
  if ("elicitation" in capabilities) {
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      seen.elicitations++;
      const schema = (request.params as { requestedSchema?: { properties?: Record<string, unknown> } })
        .requestedSchema;
      const content: Record<string, string | number | boolean> = {};
      for (const [key, raw] of Object.entries(schema?.properties ?? {})) {
        const property = raw as { type?: string; enum?: string[]; oneOf?: { const: string }[] };
        if (property.enum) content[key] = property.enum[0]!;
        else if (property.oneOf) content[key] = property.oneOf[0]!.const;
        else if (property.type === "number" || property.type === "integer") content[key] = 3;
        else if (property.type === "boolean") content[key] = true;
        else if (property.type === "string") content[key] = "Ada";
      }
      return { action: "accept", content };
    });
  }
  if ("roots" in capabilities) {
    client.setRequestHandler(ListRootsRequestSchema, async () => ({
      roots: [{ uri: "file:///tmp/federation-project", name: "project" }],
    }));
  }
  client.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => {
    seen.logs.push(`${notification.params.logger}: ${JSON.stringify(notification.params.data)}`);
  });
  client.setNotificationHandler(ResourceUpdatedNotificationSchema, (notification) => {
    seen.updated?.push(notification.params.uri);
  });
  return client;
}

const textOf = (result: unknown) =>
  ((result as { content: { type: string; text?: string }[] }).content ?? [])
    .map((part) => part.text ?? "")
    .join("\n");

const callTool = (client: Client, name: string, args: Record<string, unknown> = {}) =>
  client.callTool({ name: "call_tool", arguments: { name, arguments: args } }, CallToolResultSchema, {
    timeout: 30_000,
  });

describe("through the proxy: resources, prompts, completion, logging, and what servers ask the client", () => {
  let sandbox: Sandbox;
  let client: Client;
  const seen: Seen = { sampling: [], elicitations: 0, logs: [], updated: [] };

  beforeAll(async () => {
    requireBinary();
    sandbox = createSandbox();
    sandbox.writeConfig({ mcpServers: { alpha: everythingEntry(), beta: everythingEntry() } });
    client = answeringClient(seen);
    await client.connect(
      new StdioClientTransport({
        command: requireBinary(),
        args: ["serve", "--config", sandbox.configPath, "--data-dir", sandbox.dataDir],
        env: sandbox.env(),
        stderr: "ignore",
      }),
    );
  }, 60_000);
  afterAll(async () => {
    await client?.close();
    sandbox?.cleanup();
  });

  test("the proxy declares resources, prompts, completion and logging", () => {
    const capabilities = client.getServerCapabilities();
    expect(capabilities?.resources).toEqual({ subscribe: true, listChanged: true });
    expect(capabilities?.prompts).toEqual({ listChanged: true });
    expect(capabilities?.completions).toEqual({});
    expect(capabilities?.logging).toEqual({});
  });

  test("a sampling request made during a call reaches this client and its answer reaches the server", async () => {
    const result = await callTool(client, "alpha__trigger-sampling-request", { prompt: "name a colour" });
    expect(result.isError).toBeFalsy();
    expect(seen.sampling.some((text) => text.includes("name a colour"))).toBe(true);
    expect(textOf(result)).toMatch(/sampled: .*name a colour/);
  }, 30_000);

  test("an elicitation request is answered by this client, form filled in", async () => {
    const before = seen.elicitations;
    const result = await callTool(client, "beta__trigger-elicitation-request");
    expect(result.isError).toBeFalsy();
    expect(seen.elicitations).toBe(before + 1);
    expect(textOf(result)).toMatch(/accept/i);
    expect(textOf(result)).toContain("Ada");
  }, 30_000);

  test("roots/list from a server during a call gets this client's roots", async () => {
    const result = await callTool(client, "alpha__get-roots-list");
    expect(textOf(result)).toContain("file:///tmp/federation-project");
  }, 30_000);

  test("resources of two servers with the same names are listed apart and read from their owner", async () => {
    const listed = await client.listResources();
    const uris = listed.resources.map((resource) => resource.uri);
    const alphaDoc = "mcpproxy://alpha/demo://resource/static/document/architecture.md";
    const betaDoc = "mcpproxy://beta/demo://resource/static/document/architecture.md";
    expect(uris).toContain(alphaDoc);
    expect(uris).toContain(betaDoc);
    expect(listed.resources.map((resource) => resource.name)).toContain("beta__architecture.md");
    const read = await client.readResource({ uri: betaDoc });
    expect(read.contents[0]?.uri).toBe(betaDoc);
    expect(String((read.contents[0] as { text?: string }).text).length).toBeGreaterThan(20);
    await expect(
      client.readResource({ uri: "demo://resource/static/document/architecture.md" }),
    ).rejects.toThrow(/mcpproxy:\/\/<server>\/<uri>/);
  }, 30_000);

  test("a resource template expands in the upstream's part and reads from its server", async () => {
    const { resourceTemplates } = await client.listResourceTemplates();
    const template = resourceTemplates.find(
      (t) => t.uriTemplate.startsWith("mcpproxy://alpha/") && /text/.test(t.uriTemplate),
    );
    expect(template?.uriTemplate).toBe("mcpproxy://alpha/demo://resource/dynamic/text/{resourceId}");
    const uri = template!.uriTemplate.replace("{resourceId}", "7");
    const read = await client.readResource({ uri });
    expect(read.contents[0]?.uri).toBe(uri);
    expect(JSON.stringify(read.contents)).toContain("7");
  }, 30_000);

  test("prompts of both servers are listed apart, fetched with arguments, and completed", async () => {
    const { prompts } = await client.listPrompts();
    const names = prompts.map((prompt) => prompt.name);
    expect(names).toContain("alpha__args-prompt");
    expect(names).toContain("beta__args-prompt");
    const prompt = await client.getPrompt({ name: "beta__args-prompt", arguments: { city: "Lisbon" } });
    expect(JSON.stringify(prompt.messages)).toContain("Lisbon");
    const completed = await client.complete({
      ref: { type: "ref/prompt", name: "alpha__completable-prompt" },
      argument: { name: "department", value: "E" },
    });
    expect(completed.completion.values.length).toBeGreaterThan(0);
    expect(completed.completion.values.every((value) => value.startsWith("E"))).toBe(true);
    await expect(client.getPrompt({ name: "gamma__args-prompt" })).rejects.toThrow(/unknown prompt/);
  }, 30_000);

  test("progress of a long call reaches the client; logging/setLevel and ping are answered", async () => {
    const progress: number[] = [];
    const result = await client.callTool(
      {
        name: "call_tool",
        arguments: { name: "alpha__trigger-long-running-operation", arguments: { duration: 1, steps: 4 } },
      },
      CallToolResultSchema,
      { timeout: 30_000, onprogress: (event) => progress.push(event.progress) },
    );
    expect(result.isError).toBeFalsy();
    // The last notice can arrive with the result, and the SDK client then drops it as late.
    expect(progress.slice(0, 3)).toEqual([1, 2, 3]);
    await client.setLoggingLevel("debug");
    expect(await client.ping()).toEqual({});
  }, 30_000);

  test("a subscription goes to the owning server; its updates and log messages come back under its name", async () => {
    await client.setLoggingLevel("info");
    const uri = "mcpproxy://beta/demo://resource/static/document/extension.md";
    await client.subscribeResource({ uri });
    const until = (check: () => boolean) => eventually(check, (ok) => ok, 5_000);
    // server-everything logs the subscription (outside any call: to sessions that set a level).
    expect(
      await until(() => seen.logs.some((line) => line.startsWith("beta") && /Subscribe/.test(line))),
    ).toBe(true);
    // Its subscriber-updates tool sends resources/updated for what is subscribed, at once.
    await callTool(client, "beta__toggle-subscriber-updates");
    expect(await until(() => seen.updated!.includes(uri))).toBe(true);
    await callTool(client, "beta__toggle-subscriber-updates");
    await client.unsubscribeResource({ uri });
  }, 30_000);

  test("a client without sampling gets a clear error from the tool, not a hang", async () => {
    const plain = answeringClient({ sampling: [], elicitations: 0, logs: [] }, {});
    await plain.connect(
      new StdioClientTransport({
        command: requireBinary(),
        args: ["serve", "--config", sandbox.configPath, "--data-dir", `${sandbox.dataDir}-plain`],
        env: sandbox.env(),
        stderr: "ignore",
      }),
    );
    try {
      const result = await callTool(plain, "alpha__trigger-sampling-request", { prompt: "hi" });
      expect(textOf(result)).toMatch(/does not support sampling/);
    } finally {
      await plain.close();
    }
  }, 60_000);
});

describe("over streamable HTTP", () => {
  test("sampling and elicitation requests reach an HTTP client on the call's own stream", async () => {
    const sandbox = createSandbox();
    sandbox.writeConfig({ mcpServers: { alpha: everythingEntry() } });
    const proxy = await startHttpProxy(sandbox);
    const seen: Seen = { sampling: [], elicitations: 0, logs: [] };
    const client = answeringClient(seen);
    try {
      await client.connect(new StreamableHTTPClientTransport(proxy.url));
      const sampled = await callTool(client, "alpha__trigger-sampling-request", { prompt: "over http" });
      expect(textOf(sampled)).toMatch(/sampled: .*over http/);
      const elicited = await callTool(client, "alpha__trigger-elicitation-request");
      expect(textOf(elicited)).toContain("Ada");
      expect(seen.elicitations).toBe(1);
    } finally {
      await client.close();
      await proxy.stop();
      sandbox.cleanup();
    }
  }, 60_000);
});
