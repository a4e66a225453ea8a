import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { StreamableHTTPClientTransport, Client as V2Client } from "@modelcontextprotocol/client";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport as V1Transport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ADMIN_SCOPE } from "../src/console/console-routes.ts";
import { startOtlpReceiver } from "./fixtures/otlp-receiver.ts";
import {
  clientCredentialsToken,
  createSandbox,
  eventually,
  FIXTURE,
  fixtureEntry,
  initializeRequest,
  ROOT,
  runProcess,
  type Sandbox,
  type ServerHealth,
  startHttpProxy,
  watchOutput,
} from "./helpers.ts";

setDefaultTimeout(90_000);

/**
 * The HTTP listener as an OAuth 2.1 protected resource (`mcpproxy.httpAuth`, issue 26 item 5),
 * through the compiled binary, against a real authorization server on 127.0.0.1
 * (tests/fixtures/authorization-server.ts) that signs with RS256, rotates to ES256 and retires
 * keys. One proxy serves the file; tests that change the issuer's keys come last.
 */
const AS_FIXTURE = join(ROOT, "tests", "fixtures", "authorization-server.ts");
const AUDIENCE = "https://mcpproxy.test/mcp";
const COOLDOWN_SEC = 3;
const CACHE_SEC = 2;

let sandbox: Sandbox;
let issuer: string;
let as: { port: number; stop: () => void };
let proxy: Awaited<ReturnType<typeof startHttpProxy>>;
let requestLog: string;
let collector: ReturnType<typeof startOtlpReceiver>;
const stops: (() => unknown)[] = [];
/** Every token a test was given: none may reach the upstream, the logs or the data dir. */
const issued: string[] = [];

const asUrl = (path: string) => `http://127.0.0.1:${as.port}${path}`;
const at = (path: string) => new URL(path, proxy.url);

async function tokenFor(client: string, scope = "mcp:tools"): Promise<string> {
  const token = await clientCredentialsToken(as.port, client, scope);
  issued.push(token);
  return token;
}

async function mint(claims: Record<string, unknown>, options: { key?: string; kid?: string } = {}) {
  const response = await fetch(asUrl("/admin/mint"), {
    method: "POST",
    body: JSON.stringify({ claims: { scope: "mcp:tools", ...claims }, ...options }),
  });
  const token = ((await response.json()) as { token: string }).token;
  issued.push(token);
  return token;
}

const admin = (what: string) => fetch(asUrl(`/admin/${what}`), { method: "POST" });
const asStats = async () => (await (await fetch(asUrl("/admin/stats"))).json()) as { jwks: number };

/** A raw MCP request (initialize, legacy era) with `token`. */
const post = (
  token: string | undefined,
  body: unknown = initializeRequest(),
  headers: Record<string, string> = {},
) =>
  fetch(at("/mcp"), {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      ...headers,
    },
    body: JSON.stringify(body),
  });

async function legacyClient(token: string, path = "/mcp") {
  const client = new Client({ name: "auth-test", version: "1.0.0" });
  await client.connect(
    new V1Transport(at(path), { requestInit: { headers: { authorization: `Bearer ${token}` } } }),
  );
  stops.push(() => client.close());
  return client;
}

async function modernClient(token: string) {
  const client = new V2Client(
    { name: "auth-modern", version: "1.0.0" },
    { versionNegotiation: { mode: { pin: "2026-07-28" } } },
  );
  await client.connect(
    new StreamableHTTPClientTransport(at("/mcp"), {
      requestInit: { headers: { authorization: `Bearer ${token}` } },
    }),
  );
  stops.push(() => client.close());
  return client;
}

type Caller = { callTool(params: { name: string; arguments?: Record<string, unknown> }): Promise<unknown> };
const textOf = (result: unknown) =>
  ((result as { content?: { text?: string }[] }).content ?? []).map((part) => part.text ?? "").join("\n");
const call = (client: Caller, name: string, args: Record<string, unknown>) =>
  client.callTool({ name: "call_tool", arguments: { name, arguments: args } });
const structured = async (client: Caller, name: string, args: Record<string, unknown> = {}) =>
  ((await client.callTool({ name, arguments: args })) as { structuredContent: Record<string, unknown> })
    .structuredContent;

beforeAll(async () => {
  sandbox = createSandbox();
  stops.push(() => sandbox.cleanup());
  const asChild = Bun.spawn([process.execPath, AS_FIXTURE, "--audience", AUDIENCE], { stdout: "pipe" });
  const asPort = Number(await watchOutput(asChild.stdout).waitFor(/"port":(\d+)/, 10_000));
  as = { port: asPort, stop: () => asChild.kill() };
  issuer = `http://127.0.0.1:${asPort}`;
  stops.push(() => as.stop());
  requestLog = join(sandbox.dir, "upstream-requests.jsonl");
  const web = Bun.spawn([process.execPath, FIXTURE, "--http", "0", "--name", "web", "--trace-tools"], {
    stdout: "pipe",
    env: { ...process.env, FIXTURE_REQUEST_LOG: requestLog },
  });
  const webPort = await watchOutput(web.stdout).waitFor(/\{"port":(\d+)\}/, 10_000);
  stops.push(() => web.kill());
  collector = startOtlpReceiver();
  stops.push(() => collector.stop());
  sandbox.writeConfig({
    mcpServers: {
      web: { url: `http://127.0.0.1:${webPort}/mcp` },
      beta: fixtureEntry({ args: ["--name", "beta"] }),
    },
    mcpproxy: {
      stats: true,
      metrics: true,
      requireToken: true,
      traces: { enabled: true, endpoint: collector.url, batchDelayMs: 50 },
      profiles: { webonly: { servers: ["web"] } },
      httpAuth: {
        issuer,
        audience: AUDIENCE,
        requiredScopes: ["mcp:tools"],
        jwksCacheSec: CACHE_SEC,
        jwksCooldownSec: COOLDOWN_SEC,
        access: [
          { match: { sub: "carol" }, profile: "webonly" },
          { match: { sub: "quentin" }, callsPerMinute: 2 },
          { match: { sub: "alice" } },
          { match: { sub: "bob" } },
          { match: { groups: "staff" } },
        ],
      },
    },
  });
  proxy = await startHttpProxy(sandbox, ["--log-level", "debug"]);
  stops.push(() => proxy.stop());
  // Both servers indexed before the tests search.
  const client = await legacyClient(await tokenFor("alice"));
  await eventually(
    async () =>
      textOf(
        await client.callTool({
          name: "retrieve_tools",
          arguments: { query: "echo a message back", top_k: 30 },
        }),
      ),
    (text) => text.includes("web__echo") && text.includes("beta__echo"),
    30_000,
  );
});

afterAll(async () => {
  for (const stop of stops.reverse()) await stop();
});

describe("the door", () => {
  test("serves the RFC 9728 metadata document and /health without a token", async () => {
    for (const path of [
      "/.well-known/oauth-protected-resource",
      "/.well-known/oauth-protected-resource/mcp",
    ]) {
      const response = await fetch(at(path));
      expect(response.status).toBe(200);
      expect(await response.json()).toEqual({
        resource: `${proxy.url.origin}/mcp`,
        authorization_servers: [issuer],
        bearer_methods_supported: ["header"],
        scopes_supported: ["mcp:tools"],
        resource_signing_alg_values_supported: expect.arrayContaining(["RS256", "ES256"]),
        resource_name: "mcpproxy",
      });
    }
    expect((await fetch(at("/health"))).status).not.toBe(401);
  });

  test("/health without a valid token tells the overall status only, with the HTTP status probes read", async () => {
    const garbage = { authorization: "Bearer not.a.jwt" };
    const staticToken = { authorization: `Bearer ${"0".repeat(64)}` };
    const expired = {
      authorization: `Bearer ${await mint({ sub: "alice", exp: Math.floor(Date.now() / 1000) - 300, iat: Math.floor(Date.now() / 1000) - 900 })}`,
    };
    for (const headers of [{}, garbage, staticToken, expired]) {
      const response = await fetch(at("/health"), { headers });
      expect(response.status).toBe(200);
      const text = await response.text();
      expect(JSON.parse(text)).toEqual({ status: "ok", hint: expect.stringContaining("access token") });
      for (const secret of ["beta", "web", "stdio", "transport", "protocolVersion", "sessions"])
        expect(text).not.toContain(secret);
    }
  });

  test("/health tells a principal every server, and a principal confined to a profile that profile's only", async () => {
    const read = async (token: string) =>
      (await (await fetch(at("/health"), { headers: { authorization: `Bearer ${token}` } })).json()) as {
        status: string;
        tools: number;
        servers: ServerHealth[];
        sessions?: unknown;
      };
    const alice = await read(await tokenFor("alice"));
    expect(alice.servers.map((server) => server.name).sort()).toEqual(["beta", "web"]);
    expect(alice.sessions).toBeDefined();
    const carol = await read(await tokenFor("carol"));
    expect(carol.status).toBe("ok");
    expect(carol.servers.map((server) => server.name)).toEqual(["web"]);
    expect(carol.tools).toBe(alice.servers.find((server) => server.name === "web")?.tools ?? -1);
    expect(JSON.stringify(carol)).not.toContain("beta");
    expect(carol.sessions).toBeUndefined();
  });

  test("deploy/health-probe.sh passes with access tokens on, with the data dir's static token or none", async () => {
    const mounted = join(sandbox.dir, "probe-data");
    mkdirSync(mounted, { recursive: true });
    // The Helm chart mounts a static http-token, which the probe sends: not a JWT, not refused.
    writeFileSync(join(mounted, "http-token"), `${"0".repeat(64)}\n`);
    for (const dataDir of [mounted, join(sandbox.dir, "no-data-dir")])
      for (const mode of ["ready", "live"]) {
        const probe = await runProcess(["bash", join(ROOT, "deploy", "health-probe.sh"), mode], {
          PATH: process.env.PATH ?? "/usr/bin:/bin",
          MCPPROXY_PORT: proxy.url.port,
          MCPPROXY_DATA_DIR: dataDir,
        });
        expect({ mode, dataDir, code: probe.code, stderr: probe.stderr }).toEqual({
          mode,
          dataDir,
          code: 0,
          stderr: "",
        });
      }
  });

  test("refuses a request without a token with 401 naming the metadata document", async () => {
    const response = await post(undefined);
    expect(response.status).toBe(401);
    expect(response.headers.get("www-authenticate")).toBe(
      `Bearer resource_metadata="${proxy.url.origin}/.well-known/oauth-protected-resource/mcp"`,
    );
    for (const path of ["/sse", "/mcp/p/webonly", "/", "/p/webonly/"])
      expect((await fetch(at(path))).status).toBe(401);
  });

  test("the static token of the data dir is neither made nor taken while access tokens are on", async () => {
    expect(existsSync(join(sandbox.dataDir, "http-token"))).toBe(false);
    expect((await post("0".repeat(64))).status).toBe(401);
  });

  test("admits a valid token in both eras", async () => {
    const token = await tokenFor("alice");
    const legacy = await legacyClient(token);
    expect(textOf(await call(legacy, "web__echo", { message: "hello legacy" }))).toContain("hello legacy");
    const modern = await modernClient(token);
    expect(modern.getProtocolEra()).toBe("modern");
    expect(textOf(await call(modern, "web__echo", { message: "hello modern" }))).toContain("hello modern");
  });

  const refusals: [string, () => Promise<string>, RegExp][] = [
    [
      "a token for another audience",
      () => mint({ sub: "alice", aud: "https://other.example/mcp" }),
      /aud claim/,
    ],
    ["a token of another issuer", () => mint({ sub: "alice", iss: "https://evil.example" }), /iss claim/],
    [
      "an expired token",
      () =>
        mint({
          sub: "alice",
          exp: Math.floor(Date.now() / 1000) - 300,
          iat: Math.floor(Date.now() / 1000) - 900,
        }),
      /expired/,
    ],
    [
      "a token not yet valid",
      () => mint({ sub: "alice", nbf: Math.floor(Date.now() / 1000) + 600 }),
      /nbf claim/,
    ],
    [
      "a bad signature (another key under the issuer's kid)",
      async () => {
        const { current } = (await (await fetch(asUrl("/admin/stats"))).json()) as { current: string };
        return mint({ sub: "alice" }, { key: "foreign", kid: current });
      },
      /signature/,
    ],
    ["alg none", () => mint({ sub: "alice" }, { key: "none" }), /algorithm/],
    [
      "HS256 signed with the issuer's public key",
      () => mint({ sub: "alice" }, { key: "hs256-public" }),
      /algorithm/,
    ],
    ["an unknown kid", () => mint({ sub: "alice" }, { key: "foreign" }), /no key of the issuer/],
    ["a token without sub", () => mint({ sub: null }), /sub claim/],
    // A rule admits the staff group: each of these would get in but for its sub (RFC 7519: a string).
    ["a token whose sub is empty", () => mint({ sub: "", groups: "staff" }), /sub claim/],
    ["a token whose sub is a number", () => mint({ sub: 7, groups: "staff" }), /sub claim/],
    [
      "a token whose sub is an object (every one would be the same principal)",
      () => mint({ sub: { id: "alice" }, groups: "staff" }),
      /sub claim/,
    ],
    ["garbage", async () => "not.a.jwt", /well-formed/],
  ];
  for (const [what, make, why] of refusals) {
    test(`refuses ${what} with 401 invalid_token`, async () => {
      const response = await post(await make());
      expect(response.status).toBe(401);
      const header = response.headers.get("www-authenticate") ?? "";
      expect(header).toStartWith('Bearer error="invalid_token", error_description="');
      expect(header).toContain(
        `resource_metadata="${proxy.url.origin}/.well-known/oauth-protected-resource/mcp"`,
      );
      expect(((await response.json()) as { error_description: string }).error_description).toMatch(why);
    });
  }

  test("refuses a valid token without the required scope with 403 insufficient_scope", async () => {
    const response = await post(await tokenFor("alice", "profile"));
    expect(response.status).toBe(403);
    expect(response.headers.get("www-authenticate")).toContain('error="insufficient_scope"');
    expect(response.headers.get("www-authenticate")).toContain('scope="mcp:tools"');
  });

  test("refuses a valid token no access rule names with 403, and admits one a claim rule names", async () => {
    const response = await post(await tokenFor("mallory"));
    expect(response.status).toBe(403);
    expect(((await response.json()) as { error: string }).error).toBe("access_denied");
    const staff = await legacyClient(await mint({ sub: "dave", groups: ["eng", "staff"] }));
    expect(textOf(await call(staff, "web__echo", { message: "staff" }))).toContain("staff");
  });

  test("a flood of unknown kids costs the issuer at most one key set fetch per cooldown", async () => {
    const tokens = await Promise.all(
      Array.from({ length: 30 }, (_, i) => mint({ sub: "alice" }, { key: "foreign", kid: `made-up-${i}` })),
    );
    const before = (await asStats()).jwks;
    const started = performance.now();
    const statuses = await Promise.all(tokens.map(async (token) => (await post(token)).status));
    const elapsedSec = (performance.now() - started) / 1000;
    expect(new Set(statuses)).toEqual(new Set([401]));
    // The cache expiring (CACHE_SEC) and the cooldown both allow one fetch each per period.
    const allowed = 2 + 2 * Math.ceil(elapsedSec / CACHE_SEC);
    expect((await asStats()).jwks - before).toBeLessThanOrEqual(Math.min(allowed, 29));
  });
});

describe("principals", () => {
  test("a legacy session is bound to the principal that opened it: another principal's token on it is refused", async () => {
    const alice = await tokenFor("alice");
    const opened = await post(alice);
    expect(opened.status).toBe(200);
    const session = opened.headers.get("mcp-session-id")!;
    expect(session).toBeTruthy();
    const headers = { "mcp-session-id": session, "mcp-protocol-version": "2025-06-18" };
    await post(alice, { jsonrpc: "2.0", method: "notifications/initialized" }, headers);
    const list = { jsonrpc: "2.0", id: 2, method: "tools/list", params: {} };
    const attacker = await post(await tokenFor("bob"), list, headers);
    expect(attacker.status).toBe(404);
    expect(await attacker.text()).not.toContain("retrieve_tools");
    const owner = await post(alice, list, headers);
    expect(owner.status).toBe(200);
    expect(await owner.text()).toContain("retrieve_tools");
  });

  test("a legacy SSE session takes posts from the principal that opened it only", async () => {
    const alice = await tokenFor("alice");
    const stream = await fetch(at("/sse"), { headers: { authorization: `Bearer ${alice}` } });
    expect(stream.status).toBe(200);
    const reader = stream.body!.getReader();
    let seen = "";
    while (!seen.includes("sessionId=")) seen += new TextDecoder().decode((await reader.read()).value);
    const endpoint = /data: (\S+)/.exec(seen)![1]!;
    const message = (token: string) =>
      fetch(at(endpoint), {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
        body: JSON.stringify(initializeRequest()),
      });
    expect((await message(await tokenFor("bob"))).status).toBe(404);
    expect((await message(alice)).status).toBe(202);
    await reader.cancel();
  });

  test("a principal whose rule names a profile is served that profile at /mcp, and no other", async () => {
    const token = await tokenFor("carol");
    const carol = await legacyClient(token);
    const found = textOf(
      await carol.callTool({
        name: "retrieve_tools",
        arguments: { query: "echo a message back", top_k: 30 },
      }),
    );
    expect(found).toContain("web__echo");
    expect(found).not.toContain("beta__");
    expect(textOf(await call(carol, "beta__echo", { message: "x" }))).toContain("No tool named beta__echo");
    const modern = await modernClient(token);
    expect(textOf(await call(modern, "beta__echo", { message: "x" }))).toContain("No tool named beta__echo");
    for (const path of ["/", "/metrics", "/mcp/p/other"]) {
      const response = await fetch(at(path), { headers: { authorization: `Bearer ${token}` } });
      expect(response.status).toBe(403);
    }
    const own = await legacyClient(token, "/mcp/p/webonly");
    expect(textOf(await call(own, "web__echo", { message: "own profile" }))).toContain("own profile");
    // Whoever no rule confines reaches /metrics and every profile.
    const alice = await tokenFor("alice");
    expect((await fetch(at("/metrics"), { headers: { authorization: `Bearer ${alice}` } })).status).toBe(200);
  });

  test("a principal's call quota refuses its calls past it, with when to retry, and not another's", async () => {
    const quentin = await legacyClient(await tokenFor("quentin"));
    for (let i = 0; i < 2; i++)
      expect(textOf(await call(quentin, "web__echo", { message: `q${i}` }))).toContain(`q${i}`);
    const refused = (await call(quentin, "web__echo", { message: "one too many" })) as {
      isError?: boolean;
      _meta?: Record<string, { limit: string; retryAfterMs: number }>;
    };
    expect(refused.isError).toBe(true);
    expect(textOf(refused)).toContain("Your call quota of 2 calls a minute is used up");
    expect(refused._meta?.["mcpproxy/limit"]).toMatchObject({ limit: "rate" });
    const bob = await legacyClient(await tokenFor("bob"));
    expect(textOf(await call(bob, "web__echo", { message: "bob goes on" }))).toContain("bob goes on");
  });

  test("tools_stat shows the caller's own figures, apart from everyone's", async () => {
    const erin = await legacyClient(await mint({ sub: "erin", groups: "staff" }));
    for (let i = 0; i < 3; i++) await call(erin, "beta__echo", { message: `erin ${i}` });
    const mine = await structured(erin, "tools_stat");
    const yours = mine.yours as {
      principal: string;
      totals: { calls: number };
      top: { tool: string; calls: number }[];
    };
    expect(yours.principal).toBe("erin");
    expect(yours.totals.calls).toBe(3);
    expect(yours.top).toEqual([expect.objectContaining({ tool: "echo", calls: 3 })]);
    expect((mine.totals as { calls: number }).calls).toBeGreaterThan(3);
    const frank = await legacyClient(await mint({ sub: "frank", groups: "staff" }));
    expect(
      ((await structured(frank, "tools_stat")).yours as { totals: { calls: number } }).totals.calls,
    ).toBe(0);
  });

  test("the principal is the enduser.id of the call's span, and in the call's log line", async () => {
    const grace = await legacyClient(await mint({ sub: "grace", groups: "staff" }));
    await call(grace, "web__echo", { message: "traced" });
    const span = await eventually(
      () =>
        collector.spans.find(
          (each) => each.name === "tools/call call_tool" && each.attributes["enduser.id"] === "grace",
        ),
      (found) => found !== undefined,
      15_000,
    );
    expect(span?.kind).toBe("server");
    await proxy.stderr.waitFor(/DEBUG call \{.*"principal":"grace"/, 10_000);
  });

  test("a 2026 client's kept result is its principal's: another principal's 2026 client cannot read it", async () => {
    const alice = await modernClient(await tokenFor("alice"));
    const big = (await call(alice, "web__big_result", { bytes: 200_000 })) as {
      content: { text?: string }[];
    };
    const uri = /mcpproxy:\/\/results\/[\w-]+/.exec(JSON.stringify(big))?.[0];
    expect(uri).toBeDefined();
    const own = await alice.callTool({ name: "read_result", arguments: { uri } });
    expect((own as { isError?: boolean }).isError).toBeFalsy();
    const bob = await modernClient(await tokenFor("bob"));
    const stolen = (await bob.callTool({ name: "read_result", arguments: { uri } })) as { isError?: boolean };
    expect(stolen.isError).toBe(true);
    expect(textOf(stolen)).not.toContain(textOf(own).slice(0, 40));
  });

  test("an agent cannot turn the door off or change it through upstream_servers", async () => {
    const before = readFileSync(sandbox.configPath, "utf8");
    const agent = await legacyClient(await tokenFor("alice"));
    const attempts = [
      {
        operation: "add",
        name: "mcpproxy",
        server: { url: "http://127.0.0.1:9/mcp", httpAuth: { issuer: "https://evil.example" } },
      },
      { operation: "add", servers: { httpAuth: { url: "http://127.0.0.1:9/mcp", access: [] } } },
      { operation: "update", name: "web", server: { httpAuth: false, requireToken: false } },
    ];
    for (const attempt of attempts) {
      const answer = (await agent.callTool({ name: "upstream_servers", arguments: attempt })) as {
        isError?: boolean;
      };
      expect(answer.isError).toBe(true);
    }
    const after = JSON.parse(readFileSync(sandbox.configPath, "utf8")) as { mcpproxy: { httpAuth: unknown } };
    expect(after.mcpproxy.httpAuth).toEqual(JSON.parse(before).mcpproxy.httpAuth);
    expect((await post(undefined)).status).toBe(401);
  });

  test("tokens given to the proxy reach no upstream, no log and no file of the data dir", async () => {
    const token = await tokenFor("alice");
    const alice = await legacyClient(token);
    await call(alice, "web__show_request_meta", {});
    await call(alice, "web__show_request_headers", {});
    const upstream = readFileSync(requestLog, "utf8");
    expect(upstream.length).toBeGreaterThan(0);
    for (const line of upstream.trim().split("\n")) {
      const request = JSON.parse(line) as { headers: Record<string, string> };
      expect(Object.keys(request.headers)).not.toContain("authorization");
    }
    const signatures = issued.map((each) => each.split(".")[2]!).filter((part) => part.length > 10);
    expect(signatures.length).toBeGreaterThan(10);
    const stderr = proxy.stderr.text();
    for (const signature of signatures) {
      expect(upstream).not.toContain(signature);
      expect(stderr).not.toContain(signature);
    }
    for (const file of ["stats.db", "stats.db-wal"]) {
      const path = join(sandbox.dataDir, file);
      if (!existsSync(path)) continue;
      const bytes = readFileSync(path).toString("latin1");
      for (const signature of signatures) expect(bytes).not.toContain(signature);
    }
  });
});

describe("the console under httpAuth", () => {
  test("a sign-in link needs an access token with the admin scope, and its session opens the console", async () => {
    const link = (token?: string) =>
      fetch(at("/console/link"), {
        method: "POST",
        headers: token ? { authorization: `Bearer ${token}` } : {},
      });
    expect((await link()).status).toBe(401);
    expect((await link(await mint({ sub: "alice" }))).status).toBe(403);
    const answer = await link(await mint({ sub: "alice", scope: `mcp:tools ${ADMIN_SCOPE}` }));
    expect(answer.status).toBe(200);
    const { url } = (await answer.json()) as { url: string };
    const login = await fetch(url, { redirect: "manual" });
    expect(login.status).toBe(303);
    const cookie = (login.headers.get("set-cookie") ?? "").split(";")[0]!;
    const page = await fetch(at("/"), { headers: { cookie } });
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('data-server="web"');
    // The cookie is no access token for MCP.
    expect((await fetch(at("/mcp"), { method: "POST", headers: { cookie } })).status).toBe(401);
  });
});

describe("the issuer's keys change", () => {
  test("after a rotation, tokens of the new key pass without a restart; once the old key is retired, its tokens are refused", async () => {
    const old = await tokenFor("alice");
    expect((await post(old)).status).toBe(200);
    await admin("rotate");
    const fresh = await tokenFor("alice");
    expect(JSON.parse(Buffer.from(fresh.split(".")[0]!, "base64url").toString()).alg).toBe("ES256");
    // A new kid is fetched for once the cooldown since the last fetch has passed.
    const status = await eventually(
      async () => (await post(fresh)).status,
      (code) => code === 200,
      20_000,
    );
    expect(status).toBe(200);
    expect((await post(old)).status).toBe(200);
    await admin("retire");
    const refused = await eventually(
      async () => (await post(old)).status,
      (code) => code === 401,
      20_000,
    );
    expect(refused).toBe(401);
    expect((await post(fresh)).status).toBe(200);
  });

  test("while the key set cannot be read, requests get 503 with Retry-After and the proxy keeps running", async () => {
    const token = await tokenFor("alice");
    await admin("jwks-down");
    try {
      const response = await eventually(
        () => post(token),
        (answer) => answer.status === 503,
        20_000,
      );
      expect(response.status).toBe(503);
      expect(response.headers.get("retry-after")).toBe("5");
      expect(((await response.json()) as { error_description: string }).error_description).toContain(
        "the issuer's keys cannot be read",
      );
      expect((await fetch(at("/health"))).status).not.toBe(401);
    } finally {
      await admin("jwks-up");
    }
    const back = await eventually(
      async () => (await post(token)).status,
      (code) => code === 200,
      20_000,
    );
    expect(back).toBe(200);
    expect(proxy.child.exitCode).toBeNull();
  });
});
