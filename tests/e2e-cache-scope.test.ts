import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { join } from "node:path";
import {
  clientCredentialsToken,
  createSandbox,
  eventually,
  fixtureEntry,
  jsonRpcText,
  modernEntry,
  ROOT,
  type Sandbox,
  startHttpProxy,
  watchOutput,
} from "./helpers.ts";

setDefaultTimeout(60_000);

/**
 * Issue 34 item 3: a 2026-07-28 answer's `cacheScope` says whether a shared cache may hand it to
 * another user. With `mcpproxy.httpAuth` access rules that confine a principal to a profile, /mcp
 * answers each principal its own catalog, so nothing said there may be public; a profile's own
 * endpoint answers everyone alike, and keeps `public` where its parts are. Through the compiled
 * binary, with real signed tokens (tests/fixtures/authorization-server.ts), `--routing all`, a
 * 2026 server whose lists and reads are hinted public, and a 2025 server outside the profile.
 */
const AS_FIXTURE = join(ROOT, "tests", "fixtures", "authorization-server.ts");
const AUDIENCE = "https://mcpproxy.test/mcp";
const MODERN = "2026-07-28";
const READ_URI = "mcpproxy://web/live://a";

let sandbox: Sandbox;
let asPort = 0;
let proxy: Awaited<ReturnType<typeof startHttpProxy>>;
const stops: (() => unknown)[] = [];

const tokenFor = (client: string) => clientCredentialsToken(asPort, client);

type Answer = Record<string, unknown> & { ttlMs?: number; cacheScope?: string };

/** One 2026-07-28 request to `path` with `token`; its result, whether it came as JSON or SSE. */
async function modern(
  path: string,
  token: string,
  method: string,
  params: Record<string, unknown> = {},
): Promise<Answer> {
  const name = (params.uri ?? params.name) as string | undefined;
  const response = await fetch(new URL(path, proxy.url), {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      authorization: `Bearer ${token}`,
      "mcp-protocol-version": MODERN,
      "mcp-method": method,
      ...(name ? { "mcp-name": name } : {}),
    },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method,
      params: {
        ...params,
        _meta: {
          "io.modelcontextprotocol/protocolVersion": MODERN,
          "io.modelcontextprotocol/clientCapabilities": {},
          "io.modelcontextprotocol/clientInfo": { name: "cache-scope", version: "1" },
        },
      },
    }),
  });
  const text = await response.text();
  const body = JSON.parse(jsonRpcText(response, text) ?? "{}") as { result?: Answer; error?: unknown };
  if (!body.result) throw new Error(`${method} at ${path} answered ${response.status}: ${text}`);
  return body.result;
}

const toolNames = (answer: Answer) => ((answer.tools ?? []) as { name: string }[]).map((tool) => tool.name);

beforeAll(async () => {
  sandbox = createSandbox();
  stops.push(() => sandbox.cleanup());
  const asChild = Bun.spawn([process.execPath, AS_FIXTURE, "--audience", AUDIENCE], { stdout: "pipe" });
  stops.push(() => asChild.kill());
  asPort = Number(await watchOutput(asChild.stdout).waitFor(/"port":(\d+)/, 10_000));
  sandbox.writeConfig({
    mcpServers: {
      web: modernEntry({ args: ["--name", "web", "--subscribable", "--public-hints"] }),
      beta: fixtureEntry({ args: ["--name", "beta"] }),
    },
    mcpproxy: {
      routing: "all",
      profiles: { webonly: { servers: ["web"] } },
      httpAuth: {
        issuer: `http://127.0.0.1:${asPort}`,
        audience: AUDIENCE,
        access: [{ match: { sub: "carol" }, profile: "webonly" }, { match: { sub: "alice" } }],
      },
    },
  });
  proxy = await startHttpProxy(sandbox);
  stops.push(() => proxy.stop());
  // Both servers indexed, and the list settled, before the tests read it.
  const alice = await tokenFor("alice");
  const listed = await eventually(
    () => modern("/mcp", alice, "tools/list"),
    (answer) =>
      toolNames(answer).some((name) => name.startsWith("beta__")) &&
      toolNames(answer).some((name) => name.startsWith("web__")) &&
      answer.ttlMs !== 0,
    30_000,
  );
  expect(toolNames(listed).some((name) => name.startsWith("beta__"))).toBe(true);
});

afterAll(async () => {
  for (const stop of stops.reverse()) await stop();
});

describe("cache scopes where access rules serve principals different profiles", () => {
  test("at /mcp each principal gets its own tool list, and every cacheable answer there is private", async () => {
    const alice = await tokenFor("alice");
    const carol = await tokenFor("carol");
    const aliceList = await modern("/mcp", alice, "tools/list");
    const carolList = await modern("/mcp", carol, "tools/list");
    // Why it matters: the two lists differ (beta is outside carol's profile).
    expect(toolNames(aliceList).filter((name) => name.startsWith("beta__")).length).toBeGreaterThan(0);
    expect(toolNames(carolList).filter((name) => name.startsWith("beta__"))).toEqual([]);
    expect(toolNames(carolList)).toContain("web__echo");
    for (const token of [alice, carol]) {
      const answers = {
        "tools/list": await modern("/mcp", token, "tools/list"),
        "server/discover": await modern("/mcp", token, "server/discover"),
        "resources/list": await modern("/mcp", token, "resources/list"),
        "resources/templates/list": await modern("/mcp", token, "resources/templates/list"),
        "prompts/list": await modern("/mcp", token, "prompts/list"),
        "resources/read": await modern("/mcp", token, "resources/read", { uri: READ_URI }),
      };
      for (const [method, answer] of Object.entries(answers))
        expect({ method, cacheScope: answer.cacheScope }).toEqual({ method, cacheScope: "private" });
    }
  });

  test("at a profile's own endpoint every caller gets the same answer, and it stays public", async () => {
    const lists = [];
    for (const token of [await tokenFor("alice"), await tokenFor("carol")]) {
      const list = await modern("/mcp/p/webonly", token, "tools/list");
      expect(list.cacheScope).toBe("public");
      lists.push(toolNames(list));
      // The upstream hinted these public, and every caller of the endpoint is served them alike.
      const resources = await modern("/mcp/p/webonly", token, "resources/list");
      expect(resources).toMatchObject({ ttlMs: 60_000, cacheScope: "public" });
      const read = await modern("/mcp/p/webonly", token, "resources/read", { uri: READ_URI });
      expect(read).toMatchObject({ ttlMs: 60_000, cacheScope: "public" });
    }
    expect(lists[0]).toEqual(lists[1]!);
    expect(lists[0]).toContain("web__echo");
  });
});
