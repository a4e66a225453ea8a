import { describe, expect, setDefaultTimeout, test } from "bun:test";
import {
  Client as V2Client,
  StreamableHTTPClientTransport as V2HttpTransport,
} from "@modelcontextprotocol/client";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import {
  cleanupAfterEach,
  connectHttp,
  connectStdio,
  eventually,
  FIXTURE,
  fixtureEntry,
  type Sandbox,
  startHttpProxy,
} from "./helpers.ts";

setDefaultTimeout(90_000);

/**
 * Issue 25 item 6: a tool result over `resultSpillBytes` is kept for its caller as
 * `mcpproxy://results/<id>`; the agent gets its head, its sizes and the URI, and reads the rest in
 * pages (resources/read with `?offset=&length=`, or read_result). Through the compiled binary,
 * with the v1 fixture server behind it and real v1 (2025 sessions) and v2 (2026-07-28) clients.
 */
const scope = cleanupAfterEach();
const MODERN = "2026-07-28";
const RESULTS = "mcpproxy://results/";

type Block = { type: string; text?: string; uri?: string; mimeType?: string; data?: string };
type Answer = { content: Block[]; structuredContent?: unknown; isError?: boolean };

/** What the fixture itself answers, asked directly (no proxy): the bytes every page must rebuild. */
async function original(args: Record<string, unknown>): Promise<Answer> {
  const client = new Client({ name: "direct", version: "1" });
  await client.connect(new StdioClientTransport({ command: process.execPath, args: [FIXTURE] }));
  try {
    return (await client.callTool({ name: "big_result", arguments: args })) as Answer;
  } finally {
    await client.close();
  }
}

/** The head the agent gets: the first 4096 characters, one fewer where 4096 would split a surrogate pair. */
const headOf = (whole: string) => {
  const code = whole.charCodeAt(4096);
  return whole.slice(0, code >= 0xdc00 && code <= 0xdfff ? 4095 : 4096);
};

const call = async (client: Client | V2Client, args: Record<string, unknown>) =>
  (await (client as Client).callTool({
    name: "call_tool",
    arguments: { name: "fx__big_result", arguments: args },
  })) as Answer;

const linkOf = (answer: Answer, mimeType = "text/plain") => {
  const link = answer.content.find((block) => block.type === "resource_link" && block.mimeType === mimeType);
  expect(link?.uri?.startsWith(RESULTS)).toBe(true);
  return link!.uri!;
};

/** Every page of `uri` through resources/read, following the page's nextOffset. */
async function readByResource(client: Client | V2Client, uri: string, length: number) {
  let text = "";
  let offset: number | undefined = 0;
  for (let pages = 0; offset !== undefined && pages < 1_000; pages++) {
    const read = (await (client as Client).readResource({
      uri: `${uri}?offset=${offset}&length=${length}`,
    })) as {
      contents: { text?: string; blob?: string }[];
      _meta?: Record<string, { nextOffset?: number }>;
    };
    text += read.contents[0]?.text ?? read.contents[0]?.blob ?? "";
    offset = read._meta?.["mcpproxy/page"]?.nextOffset;
  }
  return text;
}

/** Every page of `uri` through read_result (its first block is the page alone). */
async function readByTool(client: Client | V2Client, uri: string, length?: number) {
  let text = "";
  let offset: number | undefined = 0;
  for (let pages = 0; offset !== undefined && pages < 1_000; pages++) {
    const read = (await (client as Client).callTool({
      name: "read_result",
      arguments: { uri, offset, ...(length ? { length } : {}) },
    })) as Answer & { _meta?: Record<string, { nextOffset?: number }> };
    expect(read.isError).toBeFalsy();
    text += read.content[0]?.text ?? "";
    offset = read._meta?.["mcpproxy/page"]?.nextOffset;
  }
  return text;
}

function withFixture(sandbox: Sandbox) {
  sandbox.writeConfig({ mcpServers: { fx: fixtureEntry() } });
}

async function v2Client(url: URL) {
  const client = new V2Client(
    { name: "modern", version: "1" },
    { versionNegotiation: { mode: { pin: MODERN } } },
  );
  await client.connect(new V2HttpTransport(url));
  scope.defer(() => client.close());
  expect(client.getProtocolEra()).toBe("modern");
  return client;
}

describe("a large result kept out of the context (defaults: 64 KiB bound, 4096-character head)", () => {
  test("2025 sessions and a 2026 client: head, sizes and URI; exact pages by resources/read and read_result; nobody else reads it", async () => {
    const sandbox = scope.sandbox();
    withFixture(sandbox);
    const proxy = await startHttpProxy(sandbox);
    scope.defer(() => proxy.stop());
    const a = await connectHttp(proxy.url);
    const b = await connectHttp(proxy.url);
    scope.defer(
      () => a.close(),
      () => b.close(),
    );
    const modern = await v2Client(proxy.url);
    for (const client of [a, modern])
      expect(((await client.listTools()).tools as { name: string }[]).map((t) => t.name)).toContain(
        "read_result",
      );

    const args = { bytes: 300_000, varied: true };
    const whole = (await original(args)).content[0]!.text!;
    const answer = await call(a, args);
    const head = headOf(whole);
    // The fixture's 4096th character is the first half of an emoji: the head stops before it.
    expect(head.length).toBe(4095);
    expect(answer.content[0]).toEqual({ type: "text", text: head });
    expect(JSON.stringify(answer).length).toBeLessThan(8_000);
    const uri = linkOf(answer);
    expect(answer.content[1]?.text).toContain(
      `${Buffer.byteLength(whole)} bytes, ${whole.length} characters, ${whole.split("\n").length} lines`,
    );
    expect(answer.content[1]?.text).toContain(`read_result {"uri": "${uri}", "offset": ${head.length}}`);
    expect(await readByResource(a, uri, 50_000)).toBe(whole);
    // An odd page length lands inside the four-byte characters of the fixture's lines.
    expect(await readByTool(a, uri, 9_999)).toBe(whole);
    // Stored results are reached by their URI, not listed (tool results' links need not be, per the spec).
    const listed = ((await a.listResources()).resources as { uri: string }[]).map((r) => r.uri);
    expect(listed.some((listedUri) => listedUri.startsWith(RESULTS))).toBe(false);

    // The attacker: another 2025 session with A's URI gets "not found", by either way.
    await expect(b.readResource({ uri })).rejects.toMatchObject({ code: -32602 });
    const stolen = (await b.callTool({ name: "read_result", arguments: { uri } })) as Answer;
    expect(stolen.isError).toBe(true);
    expect(stolen.content[0]?.text).not.toContain(whole.slice(0, 20));
    // A 2026 client, which has no session, is not A either. (Both eras get -32602 with the URI in
    // `data`: the SDK sends no -32002, and 2025 clients are told to accept either.)
    await expect(modern.readResource({ uri })).rejects.toMatchObject({ code: -32602 });

    // A 2026 client's own result is bound to its principal (no token here: the local user).
    const mine = await call(modern, args);
    const modernUri = linkOf(mine);
    expect(mine.content[0]?.text).toBe(headOf(whole));
    expect(await readByResource(modern, modernUri, 64_000)).toBe(whole);
    expect(await readByTool(modern, modernUri)).toBe(whole);
    await expect(a.readResource({ uri: modernUri })).rejects.toMatchObject({ code: -32602 });
    // Another 2026 request of the same principal holding the URI may read it: documented scoping.
    const other = await v2Client(proxy.url);
    expect((await other.readResource({ uri: `${modernUri}?length=10` })).contents[0]).toMatchObject({
      text: whole.slice(0, 10),
    });

    // Under the bound: untouched.
    const small = await call(a, { bytes: 1_000 });
    expect(small.content).toEqual([{ type: "text", text: "x".repeat(1_000) }]);
  });

  test("an image is kept as a blob whose pages are its exact bytes; structuredContent is kept aside with the text", async () => {
    const sandbox = scope.sandbox();
    withFixture(sandbox);
    const { client, close } = await connectStdio(sandbox);
    scope.defer(close);
    const args = { bytes: 100_000, varied: true, image_bytes: 150_000, structured: true };
    const direct = await original(args);
    const answer = await call(client, args);
    expect(answer.structuredContent).toBeUndefined();
    const image = linkOf(answer, "image/png");
    const pages = await readByResource(client, image, 40_000);
    // Each page is base64 of its own bytes: decoded and joined, the image's bytes.
    let rebuilt = Buffer.alloc(0);
    let offset: number | undefined = 0;
    while (offset !== undefined) {
      const read = (await client.readResource({ uri: `${image}?offset=${offset}&length=40000` })) as {
        contents: { blob: string }[];
        _meta: Record<string, { nextOffset?: number }>;
      };
      rebuilt = Buffer.concat([rebuilt, Buffer.from(read.contents[0]!.blob, "base64")]);
      offset = read._meta["mcpproxy/page"]?.nextOffset;
    }
    const imageBlock = direct.content.find((block) => block.type === "image") as { data: string } | undefined;
    expect(rebuilt.equals(Buffer.from(imageBlock!.data, "base64"))).toBe(true);
    expect(pages.length).toBeGreaterThan(0);
    const structured = linkOf(answer, "application/json");
    expect(JSON.parse(await readByTool(client, structured))).toEqual(direct.structuredContent);
  });
});

describe("bounds, expiry, the setting off, and passthrough", () => {
  test("a session keeps at most resultsPerSession results and resultSessionBytes bytes, the oldest evicted", async () => {
    const sandbox = scope.sandbox();
    withFixture(sandbox);
    const { client, close } = await connectStdio(sandbox, {
      MCPPROXY_RESULT_SPILL_BYTES: "20000",
      MCPPROXY_RESULTS_PER_SESSION: "3",
      MCPPROXY_RESULT_SESSION_BYTES: "250000",
    });
    scope.defer(close);
    const uris: string[] = [];
    for (const bytes of [100_000, 100_000, 100_000, 30_000, 30_000])
      uris.push(linkOf(await call(client, { bytes })));
    const readable = async (uri: string) =>
      client.readResource({ uri: `${uri}?length=1` }).then(
        () => true,
        () => false,
      );
    // 1: bytes (300,000 > 250,000 with the third); 2: count (a fifth with three held).
    expect(await Promise.all(uris.map(readable))).toEqual([false, false, true, true, true]);
  });

  test("a result expires after resultTtlMs", async () => {
    const sandbox = scope.sandbox();
    withFixture(sandbox);
    const { client, close } = await connectStdio(sandbox, { MCPPROXY_RESULT_TTL_MS: "1000" });
    scope.defer(close);
    const uri = linkOf(await call(client, { bytes: 100_000 }));
    const expired = await eventually(
      async () =>
        ((await client.callTool({ name: "read_result", arguments: { uri } })) as Answer).isError === true,
      (isGone) => isGone,
      20_000,
    );
    expect(expired).toBe(true);
    await expect(client.readResource({ uri })).rejects.toMatchObject({ code: -32602 });
  });

  test("resultSpillBytes 0: a 300 KB result comes whole and read_result is not listed", async () => {
    const sandbox = scope.sandbox();
    withFixture(sandbox);
    const { client, close } = await connectStdio(sandbox, { MCPPROXY_RESULT_SPILL_BYTES: "0" });
    scope.defer(close);
    const answer = await call(client, { bytes: 300_000 });
    expect(answer.content).toEqual([{ type: "text", text: "x".repeat(300_000) }]);
    expect(((await client.listTools()).tools as { name: string }[]).map((t) => t.name)).not.toContain(
      "read_result",
    );
  });

  test("passthrough: the tool called by its own name is kept out too, read back by resources/read (no read_result)", async () => {
    const sandbox = scope.sandbox();
    withFixture(sandbox);
    const { client, close } = await connectStdio(sandbox, {}, ["--passthrough", "fx"]);
    scope.defer(close);
    expect(((await client.listTools()).tools as { name: string }[]).map((t) => t.name)).not.toContain(
      "read_result",
    );
    const args = { bytes: 200_000, varied: true };
    const whole = (await original(args)).content[0]!.text!;
    const answer = (await client.callTool({ name: "big_result", arguments: args })) as Answer;
    expect(answer.content[0]?.text).toBe(headOf(whole));
    expect(answer.content[1]?.text).not.toContain("read_result");
    expect(await readByResource(client, linkOf(answer), 32_768)).toBe(whole);
  });

  test("dynamic routing: a registered tool called by its own name is kept out as call_tool's result is", async () => {
    const sandbox = scope.sandbox();
    withFixture(sandbox);
    const { client, close } = await connectStdio(sandbox, { MCPPROXY_ROUTING_TYPE: "dynamic" });
    scope.defer(close);
    await client.callTool({
      name: "retrieve_tools",
      arguments: { query: "return a text block of a number of bytes" },
    });
    expect(((await client.listTools()).tools as { name: string }[]).map((t) => t.name)).toContain(
      "fx__big_result",
    );
    const args = { bytes: 120_000, varied: true };
    const whole = (await original(args)).content[0]!.text!;
    const answer = (await client.callTool({ name: "fx__big_result", arguments: args })) as Answer;
    expect(answer.content[0]?.text).toBe(headOf(whole));
    expect(await readByTool(client, linkOf(answer))).toBe(whole);
  });

  test("after the plugins: with truncation on, what is kept is the truncated text", async () => {
    const sandbox = scope.sandbox();
    withFixture(sandbox);
    const { client, close } = await connectStdio(sandbox, {
      MCPPROXY_TRUNCATE_OUTPUT_LEN: "100000",
      MCPPROXY_RESULT_SPILL_BYTES: "20000",
    });
    scope.defer(close);
    const answer = await call(client, { bytes: 300_000 });
    expect(answer.content[0]?.text).toBe("x".repeat(4096));
    expect(await readByResource(client, linkOf(answer), 32_768)).toBe(
      `${"x".repeat(100_000)}\n[... 199950 characters cut by mcpproxy (MCPPROXY_TRUNCATE_OUTPUT_LEN=100000) ...]\n${"x".repeat(50)}`,
    );
  });
});
