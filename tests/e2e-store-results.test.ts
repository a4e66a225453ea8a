import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { join } from "node:path";
import { StreamableHTTPClientTransport, Client as V2Client } from "@modelcontextprotocol/client";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import {
  clientCredentialsToken,
  createSandbox,
  eventually,
  FIXTURE,
  fixtureEntry,
  ROOT,
  type Sandbox,
  watchOutput,
} from "./helpers.ts";
import { type Replica, startReplica } from "./support/replicas.ts";
import { freshDatabase } from "./support/store-databases.ts";
import {
  POSTGRES_MISSING,
  postgresBinDir,
  startTempPostgres,
  type TempPostgres,
} from "./support/temp-postgres.ts";

setDefaultTimeout(180_000);

/**
 * Issue 26 item 4 for kept large results: a 2026-07-28 client's result kept by one replica is read
 * through another (no session affinity), page by page and exactly; its principal's alone (another
 * JWT subject gets "not found" on every replica); expiry holds on every replica; with PostgreSQL
 * away the replica that kept a result still serves it and the others say so clearly. Through the
 * compiled binary: two `serve --store` replicas, a real PostgreSQL, the authorization server
 * fixture issuing the principals' JWTs, the v1 fixture server's big_result behind them.
 */
const hasPostgres = postgresBinDir() !== undefined;
if (!hasPostgres) process.stderr.write(POSTGRES_MISSING);
const AS_FIXTURE = join(ROOT, "tests", "fixtures", "authorization-server.ts");
const AUDIENCE = "https://mcpproxy.test/mcp";
const RESULTS = "mcpproxy://results/";
const PAGE_META = "mcpproxy/page";

type Block = { type: string; text?: string; uri?: string; mimeType?: string; data?: string };
type Answer = { content: Block[]; isError?: boolean; _meta?: Record<string, { nextOffset?: number }> };

let pg: TempPostgres;
let sandbox: Sandbox;
let asPort: number;
let url: string;
let one: Replica;
let two: Replica;
const stops: (() => unknown)[] = [];

beforeAll(async () => {
  if (!hasPostgres) return;
  pg = await startTempPostgres();
  stops.push(() => pg.cleanup());
  sandbox = createSandbox();
  stops.push(() => sandbox.cleanup());
  const as = Bun.spawn([process.execPath, AS_FIXTURE, "--audience", AUDIENCE], { stdout: "pipe" });
  asPort = Number(await watchOutput(as.stdout).waitFor(/"port":(\d+)/, 10_000));
  stops.push(() => as.kill());
  sandbox.writeConfig({
    mcpServers: { fx: fixtureEntry() },
    mcpproxy: {
      httpAuth: {
        issuer: `http://127.0.0.1:${asPort}`,
        audience: AUDIENCE,
        access: [{ match: { sub: "alice" } }, { match: { sub: "bob" } }],
      },
    },
  });
  url = await freshDatabase(pg);
  one = await startReplica(sandbox, url, "1");
  stops.push(() => one.stop());
  two = await startReplica(sandbox, url, "2");
  stops.push(() => two.stop());
});

afterAll(async () => {
  for (const stop of stops.reverse()) await stop();
});

const tokenFor = (client: string) => clientCredentialsToken(asPort, client, "mcp:tools");

/** A 2026-07-28 client of `principal` on `replica` (no session: every request stands alone). */
async function clientOf(replica: Replica, principal: string) {
  const client = new V2Client(
    { name: `results-${principal}`, version: "1" },
    { versionNegotiation: { mode: { pin: "2026-07-28" } } },
  );
  const token = await tokenFor(principal);
  await client.connect(
    new StreamableHTTPClientTransport(replica.url, {
      requestInit: { headers: { authorization: `Bearer ${token}` } },
    }),
  );
  stops.push(() => client.close());
  expect(client.getProtocolEra()).toBe("modern");
  return client as unknown as Client;
}

/** What the fixture itself answers (no proxy): what every page read back must rebuild. */
async function original(args: Record<string, unknown>): Promise<Answer> {
  const client = new Client({ name: "direct", version: "1" });
  await client.connect(new StdioClientTransport({ command: process.execPath, args: [FIXTURE] }));
  try {
    return (await client.callTool({ name: "big_result", arguments: args })) as Answer;
  } finally {
    await client.close();
  }
}

/** big_result through call_tool, once the replica has the tool (its catalog may still be filling). */
const bigResult = (client: Client, args: Record<string, unknown>) =>
  eventually(
    async () =>
      (await client.callTool(
        { name: "call_tool", arguments: { name: "fx__big_result", arguments: args } },
        undefined,
        { timeout: 120_000 },
      )) as Answer,
    (answer) => !answer.isError,
    60_000,
  );

const linkOf = (answer: Answer, mimeType: string) => {
  const uri = answer.content.find(
    (block) => block.type === "resource_link" && block.mimeType === mimeType,
  )?.uri;
  expect(uri?.startsWith(RESULTS)).toBe(true);
  return uri!;
};

/** Every page of a text through read_result, from 0 by nextOffset (default page length). */
async function readText(client: Client, uri: string) {
  const parts: string[] = [];
  let offset: number | undefined = 0;
  for (let pages = 0; offset !== undefined && pages < 10_000; pages++) {
    const read = (await client.callTool({ name: "read_result", arguments: { uri, offset } })) as Answer;
    expect(read.isError).toBeFalsy();
    parts.push(read.content[0]?.text ?? "");
    offset = read._meta?.[PAGE_META]?.nextOffset;
  }
  return parts;
}

/** Every page of a blob through resources/read, its bytes joined. */
async function readBlob(client: Client, uri: string) {
  const parts: Buffer[] = [];
  let offset: number | undefined = 0;
  for (let pages = 0; offset !== undefined && pages < 10_000; pages++) {
    const read = (await client.readResource({ uri: `${uri}?offset=${offset}` })) as unknown as {
      contents: { blob: string }[];
      _meta: Record<string, { nextOffset?: number }>;
    };
    parts.push(Buffer.from(read.contents[0]!.blob, "base64"));
    offset = read._meta[PAGE_META]?.nextOffset;
  }
  return Buffer.concat(parts);
}

/** Whether `client` is refused `uri` as not found, by read_result and by resources/read. */
async function isNotFound(client: Client, uri: string) {
  const byTool = (await client.callTool({ name: "read_result", arguments: { uri } })) as Answer;
  const byResource = await client.readResource({ uri }).then(
    () => undefined,
    (error: { code?: number; message?: string }) => error,
  );
  return (
    byTool.isError === true &&
    /No stored result/.test(byTool.content[0]?.text ?? "") &&
    byResource?.code === -32602 &&
    /No stored result/.test(byResource.message ?? "")
  );
}

describe.if(hasPostgres)("kept results across replicas", () => {
  test("a 5 MB text (2- and 4-byte characters) and an image kept by replica 1 are read whole through replica 2, page by page, exactly", async () => {
    const args = { bytes: 5_000_000, varied: true, image_bytes: 300_000 };
    const direct = await original(args);
    const whole = direct.content[0]!.text!;
    const image = Buffer.from(direct.content.find((block) => block.type === "image")!.data!, "base64");
    const answer = await bigResult(await clientOf(one, "alice"), args);
    const [textUri, imageUri] = [linkOf(answer, "text/plain"), linkOf(answer, "image/png")];
    const elsewhere = await clientOf(two, "alice");
    const pages = await readText(elsewhere, textUri);
    // Pages of up to resultPageChars (32,768), one fewer where a pair would be split.
    expect(pages.length).toBeGreaterThanOrEqual(Math.ceil(whole.length / 32_768));
    expect(Math.max(...pages.map((page) => page.length))).toBe(32_768);
    expect(pages.join("")).toBe(whole);
    expect((await readBlob(elsewhere, imageUri)).equals(image)).toBe(true);
    // Replica 1 reads its own from memory: the same.
    expect((await readText(await clientOf(one, "alice"), textUri)).join("")).toBe(whole);
  });

  test("another principal (another JWT subject) gets not found for the id on either replica", async () => {
    const answer = await bigResult(await clientOf(one, "alice"), { bytes: 200_000, varied: true });
    const uri = linkOf(answer, "text/plain");
    expect(await isNotFound(await clientOf(one, "bob"), uri)).toBe(true);
    expect(await isNotFound(await clientOf(two, "bob"), uri)).toBe(true);
    // The owner still reads it through either.
    for (const replica of [one, two]) {
      const own = (await (
        await clientOf(replica, "alice")
      ).callTool({
        name: "read_result",
        arguments: { uri, length: 10 },
      })) as Answer;
      expect(own.isError).toBeFalsy();
    }
  });

  test("an expired result is not found on either replica", async () => {
    const short = { env: { MCPPROXY_RESULT_TTL_MS: "2000" } };
    const [three, four] = [
      await startReplica(sandbox, url, "3", short),
      await startReplica(sandbox, url, "4", short),
    ];
    stops.push(
      () => three.stop(),
      () => four.stop(),
    );
    const answer = await bigResult(await clientOf(three, "alice"), { bytes: 200_000 });
    const uri = linkOf(answer, "text/plain");
    const [onThree, onFour] = [await clientOf(three, "alice"), await clientOf(four, "alice")];
    const readable = async (client: Client) =>
      !((await client.callTool({ name: "read_result", arguments: { uri, length: 5 } })) as Answer).isError;
    expect(await readable(onFour)).toBe(true);
    await Bun.sleep(2_100);
    expect(await isNotFound(onThree, uri)).toBe(true);
    expect(await isNotFound(onFour, uri)).toBe(true);
  });

  // Last: PostgreSQL stops.
  test("with PostgreSQL down, replica 1 serves what it keeps, replica 2 says it cannot read it now, nothing crashes; when it is back, results are shared again", async () => {
    const [aliceOne, aliceTwo] = [await clientOf(one, "alice"), await clientOf(two, "alice")];
    await bigResult(aliceOne, { bytes: 100_000 });
    await pg.stop();
    try {
      const answer = await bigResult(aliceOne, { bytes: 150_000, varied: true });
      const uri = linkOf(answer, "text/plain");
      await one.stderr.waitFor(/kept in this replica's memory only/, 10_000);
      expect(one.stderr.text()).not.toContain(uri.slice(RESULTS.length));
      expect((await readText(aliceOne, uri)).join("")).toBe(
        (await original({ bytes: 150_000, varied: true })).content[0]!.text!,
      );
      const there = (await aliceTwo.callTool({ name: "read_result", arguments: { uri } })) as Answer;
      expect(there.isError).toBe(true);
      expect(there.content[0]?.text).toMatch(/No stored result|try again/);
      const byResource = await aliceTwo.readResource({ uri }).then(
        () => undefined,
        (error: { code?: number; message?: string }) => error,
      );
      expect(byResource?.message).toMatch(/No stored result|try again/);
    } finally {
      await pg.start();
    }
    expect(one.child.exitCode).toBeNull();
    expect(two.child.exitCode).toBeNull();
    // Back: a new result kept by replica 1 is read through replica 2 again.
    const read = await eventually(
      async () => {
        const uri = linkOf(await bigResult(aliceOne, { bytes: 100_000 }), "text/plain");
        return (await aliceTwo.callTool({ name: "read_result", arguments: { uri, length: 3 } })) as Answer;
      },
      (answer) => !answer.isError,
      60_000,
    );
    expect(read.content[0]?.text).toBe("xxx");
  });
});
