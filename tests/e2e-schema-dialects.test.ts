import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { cleanupAfterEach, connectStdio, FIXTURE } from "./helpers.ts";

setDefaultTimeout(60_000);

/**
 * Arguments are checked in the JSON Schema dialect a tool's input schema declares (2020-12 when it
 * declares none, as MCP says), through the compiled binary; and no `$ref` or `$schema` in a schema
 * an upstream wrote is ever fetched.
 */

const scope = cleanupAfterEach();
const textOf = (result: unknown) =>
  ((result as { content: { text?: string }[] }).content ?? []).map((block) => block.text ?? "").join("");

async function proxyWithTools(tools: object[]) {
  const sandbox = scope.sandbox();
  const file = join(sandbox.dir, "tools.json");
  writeFileSync(file, JSON.stringify(tools));
  sandbox.writeConfig({
    mcpServers: { schemas: { command: process.execPath, args: [FIXTURE, "--tools-file", file] } },
  });
  const proxy = await connectStdio(sandbox);
  scope.defer(() => proxy.close());
  const call = (tool: string, args: object) =>
    proxy.client.callTool({ name: "call_tool", arguments: { name: `schemas__${tool}`, arguments: args } });
  return { proxy, call };
}

describe("argument validation by dialect", () => {
  test("a 2020-12 tuple (prefixItems, items: false) accepts a fitting call and refuses a longer one", async () => {
    const { call } = await proxyWithTools([
      {
        name: "set_pair",
        description: "Set a name and a number",
        inputSchema: {
          type: "object",
          properties: {
            pair: { type: "array", prefixItems: [{ type: "string" }, { type: "number" }], items: false },
          },
          required: ["pair"],
        },
      },
      {
        name: "set_pair_declared",
        description: "Set a name and a number, the dialect declared",
        inputSchema: {
          $schema: "https://json-schema.org/draft/2020-12/schema",
          type: "object",
          properties: {
            pair: { type: "array", prefixItems: [{ type: "string" }, { type: "number" }], items: false },
          },
        },
      },
    ]);
    const ok = await call("set_pair", { pair: ["width", 3] });
    expect(ok.isError).toBeFalsy();
    expect(textOf(ok)).toBe('ran set_pair with {"pair":["width",3]}');
    expect(textOf(await call("set_pair_declared", { pair: ["width", 3] }))).toBe(
      'ran set_pair_declared with {"pair":["width",3]}',
    );
    const tooLong = await call("set_pair", { pair: ["width", 3, 4] });
    expect(tooLong.isError).toBe(true);
    expect(textOf(tooLong)).toContain("pair");
    expect(textOf(tooLong)).not.toContain("ran set_pair");
    const wrongType = await call("set_pair", { pair: [3, "width"] });
    expect(wrongType.isError).toBe(true);
  });

  test("a schema that declares draft-07 is read as draft-07 (items as an array, additionalItems)", async () => {
    const { call } = await proxyWithTools([
      {
        name: "old_tuple",
        description: "A draft-07 tuple",
        inputSchema: {
          $schema: "http://json-schema.org/draft-07/schema#",
          type: "object",
          properties: { list: { type: "array", items: [{ type: "string" }], additionalItems: false } },
        },
      },
    ]);
    expect(textOf(await call("old_tuple", { list: ["a"] }))).toBe('ran old_tuple with {"list":["a"]}');
    const refused = await call("old_tuple", { list: ["a", "b"] });
    expect(refused.isError).toBe(true);
    expect(textOf(refused)).not.toContain("ran old_tuple");
  });
});

describe("attacker: schema references", () => {
  test("a $ref, $schema or $id naming a local HTTP address is never fetched, and the call still goes through", async () => {
    let requests = 0;
    const listener = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      fetch: () => {
        requests++;
        return Response.json({ type: "string" });
      },
    });
    scope.defer(() => listener.stop(true));
    const base = `http://127.0.0.1:${listener.port}`;
    const { call } = await proxyWithTools([
      {
        name: "remote_ref",
        description: "Its argument's schema is elsewhere",
        inputSchema: { type: "object", properties: { value: { $ref: `${base}/value.json` } } },
      },
      {
        name: "remote_meta",
        description: "Its meta-schema is elsewhere",
        inputSchema: {
          $schema: `${base}/meta.json`,
          type: "object",
          properties: { value: { type: "string" } },
        },
      },
      {
        name: "relative_ref",
        description: "A relative reference against a remote base",
        inputSchema: {
          $id: `${base}/base.json`,
          type: "object",
          properties: { value: { $ref: "other.json" } },
        },
      },
    ]);
    expect(textOf(await call("remote_ref", { value: 1 }))).toBe('ran remote_ref with {"value":1}');
    expect(textOf(await call("relative_ref", { value: 1 }))).toBe('ran relative_ref with {"value":1}');
    expect(textOf(await call("remote_meta", { value: "x" }))).toBe('ran remote_meta with {"value":"x"}');
    const refused = await call("remote_meta", { value: 1 });
    expect(refused.isError).toBe(true);
    await Bun.sleep(300);
    expect(requests).toBe(0);
  });
});
