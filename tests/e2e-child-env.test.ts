import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { cleanupAfterEach, connectStdio, eventually, fixtureEntry, runCli, type Sandbox } from "./helpers.ts";

setDefaultTimeout(90_000);

/**
 * What a stdio server receives of the proxy's environment: what it needs to reach the network
 * (proxies, CA bundles) and the locale and temp dir always, the person's other variables only
 * when the person names them (`inheritEnv`), and never through anything an agent writes.
 */
const scope = cleanupAfterEach();

type Proxy = Awaited<ReturnType<typeof connectStdio>>;

const NETWORK = {
  HTTPS_PROXY: "http://proxy.corp.example:3128",
  HTTP_PROXY: "http://proxy.corp.example:3128",
  NO_PROXY: "localhost,127.0.0.1,.corp.example",
  https_proxy: "http://proxy.corp.example:3128",
  no_proxy: "localhost",
  NODE_EXTRA_CA_CERTS: "/etc/corp/ca.pem",
  SSL_CERT_FILE: "/etc/corp/ca.pem",
  SSL_CERT_DIR: "/etc/corp/certs",
  REQUESTS_CA_BUNDLE: "/etc/corp/ca.pem",
  LANG: "de_DE.UTF-8",
  LC_MESSAGES: "de_DE.UTF-8",
  TZ: "Europe/Berlin",
  TMPDIR: "/tmp",
  TEMP: "/tmp",
  TMP: "/tmp",
};
const SECRETS = { SECRET_TOKEN: "s3cr3t-value", AWS_SECRET_ACCESS_KEY: "aws-s3cr3t" };

const textOf = (result: unknown) =>
  ((result as { content: { text?: string }[] }).content ?? []).map((part) => part.text ?? "").join("\n");
const flags = (sandbox: Sandbox) => ["--config", sandbox.configPath, "--data-dir", sandbox.dataDir];

/** The values of `names` in the server's environment (null where it has none), through call_tool. */
async function environmentOf(proxy: Proxy, server: string, names: string[]) {
  const result = await proxy.client.callTool({
    name: "call_tool",
    arguments: { name: `${server}__show_environment`, arguments: { values_of: names } },
  });
  if (result.isError) throw new Error(`${server}: ${textOf(result)}`);
  return JSON.parse(textOf(result)) as Record<string, string | null>;
}

/** Approves what an agent's server runs, then (once it has listed them) its tools, as a person does. */
async function approveServerAndTools(proxy: Proxy, sandbox: Sandbox, server: string) {
  expect((await runCli(["approve", server, ...flags(sandbox)], sandbox.env())).code).toBe(0);
  const call = () =>
    proxy.client.callTool({
      name: "call_tool",
      arguments: { name: `${server}__echo`, arguments: { message: "hi" } },
    });
  await eventually(
    async () => textOf(await call()),
    (text) => text.includes("quarantined"),
    15_000,
  );
  expect((await runCli(["approve", server, ...flags(sandbox)], sandbox.env())).code).toBe(0);
}

function upstreamServers(proxy: Proxy, operation: string, extra: Record<string, unknown>) {
  return proxy.client.callTool(
    { name: "upstream_servers", arguments: { operation, ...extra } },
    CallToolResultSchema,
    { timeout: 30_000 },
  );
}

describe("a stdio server's environment", () => {
  test("has the proxy, CA bundle, locale and temp variables of the proxy's environment, and none of its secrets", async () => {
    const sandbox = scope.sandbox();
    sandbox.writeConfig({ mcpServers: { plain: fixtureEntry() } });
    const proxy = await connectStdio(sandbox, { ...NETWORK, ...SECRETS, FOO: "foo" });
    scope.defer(() => proxy.close());
    const env = await environmentOf(proxy, "plain", [
      ...Object.keys(NETWORK),
      ...Object.keys(SECRETS),
      "FOO",
    ]);
    expect(env).toEqual({ ...NETWORK, SECRET_TOKEN: null, AWS_SECRET_ACCESS_KEY: null, FOO: null });
  });

  test("gets the person's other variables only as inheritEnv (per server, or mcpproxy.inheritEnv) names them", async () => {
    const sandbox = scope.sandbox();
    sandbox.writeConfig({
      mcpServers: {
        plain: fixtureEntry(),
        named: { ...fixtureEntry({ env: { BAR: "from-the-entry" } }), inheritEnv: ["FOO", "BAR"] },
        everything: { ...fixtureEntry(), inheritEnv: true },
        optedOut: { ...fixtureEntry(), inheritEnv: false },
      },
      mcpproxy: { inheritEnv: ["GLOBAL_VAR"] },
    });
    const proxy = await connectStdio(sandbox, {
      ...NETWORK,
      ...SECRETS,
      FOO: "foo",
      BAR: "from-the-shell",
      GLOBAL_VAR: "global",
      MCPPROXY_LOG_LEVEL: "info",
    });
    scope.defer(() => proxy.close());
    const asked = [
      ...Object.keys(NETWORK),
      ...Object.keys(SECRETS),
      "FOO",
      "BAR",
      "GLOBAL_VAR",
      "MCPPROXY_LOG_LEVEL",
    ];

    const plain = await environmentOf(proxy, "plain", asked);
    expect(plain).toMatchObject(NETWORK);
    expect(plain).toMatchObject({ SECRET_TOKEN: null, AWS_SECRET_ACCESS_KEY: null, FOO: null, BAR: null });
    // mcpproxy.inheritEnv reaches the person's entries that do not say otherwise.
    expect(plain.GLOBAL_VAR).toBe("global");

    const named = await environmentOf(proxy, "named", asked);
    expect(named).toMatchObject({ ...NETWORK, FOO: "foo", SECRET_TOKEN: null, GLOBAL_VAR: null });
    // The entry's own env wins over what it inherits.
    expect(named.BAR).toBe("from-the-entry");

    const everything = await environmentOf(proxy, "everything", asked);
    expect(everything).toMatchObject({ ...NETWORK, ...SECRETS, FOO: "foo", GLOBAL_VAR: "global" });
    // Not the proxy's own settings: a server that is an mcpproxy must not take them.
    expect(everything.MCPPROXY_LOG_LEVEL).toBeNull();

    const optedOut = await environmentOf(proxy, "optedOut", asked);
    expect(optedOut).toMatchObject({ ...NETWORK, GLOBAL_VAR: null, SECRET_TOKEN: null });
  });

  test("a bad inheritEnv is a config problem naming the key, and an HTTP server cannot have one", async () => {
    const sandbox = scope.sandbox();
    sandbox.writeConfig({
      mcpServers: {
        bad: { ...fixtureEntry(), inheritEnv: "HTTPS_PROXY" },
        remote: { url: "http://127.0.0.1:9/mcp", inheritEnv: true },
      },
      mcpproxy: { inheritEnv: ["A=B"] },
    });
    const result = await runCli(["servers", "list", ...flags(sandbox)], sandbox.env());
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(
      "mcpServers.bad.inheritEnv: must be true, false or a list of variable names",
    );
    expect(result.stderr).toContain("mcpServers.remote.inheritEnv: is for servers with a command (stdio)");
    expect(result.stderr).toContain("mcpproxy.inheritEnv.0: must be a variable name");
  });
});

describe("an agent and the person's environment", () => {
  test("cannot set inheritEnv; its server gets no variable through mcpproxy.inheritEnv; one the person adds needs approval again", async () => {
    const sandbox = scope.sandbox();
    sandbox.writeConfig({ mcpServers: { fx: fixtureEntry() }, mcpproxy: { inheritEnv: true } });
    const proxy = await connectStdio(sandbox, SECRETS);
    scope.defer(() => proxy.close());
    const before = readFileSync(sandbox.configPath, "utf8");

    // Asking for the person's variables outright is refused, with the key named.
    for (const inheritEnv of [true, ["SECRET_TOKEN"]]) {
      const added = await upstreamServers(proxy, "add", {
        name: "x",
        server: { ...fixtureEntry(), inheritEnv },
      });
      expect(added.isError).toBe(true);
      expect(textOf(added)).toContain("inheritEnv: this key is not for an agent to set");
      const updated = await upstreamServers(proxy, "update", { name: "fx", server: { inheritEnv } });
      expect(updated.isError).toBe(true);
      expect(textOf(updated)).toContain("inheritEnv");
    }
    expect(readFileSync(sandbox.configPath, "utf8")).toBe(before);

    // A server it adds, approved by the person, still gets nothing through the global setting.
    expect((await upstreamServers(proxy, "add", { name: "x", server: fixtureEntry() })).isError).toBeFalsy();
    await approveServerAndTools(proxy, sandbox, "x");
    const agents = await eventually(
      () => environmentOf(proxy, "x", ["SECRET_TOKEN"]).catch(() => undefined),
      (env) => env !== undefined,
      15_000,
    );
    expect(agents).toEqual({ SECRET_TOKEN: null });
    expect(await environmentOf(proxy, "fx", ["SECRET_TOKEN"])).toEqual({ SECRET_TOKEN: "s3cr3t-value" });

    // The person names a variable for the agent's entry by hand: what runs changed, so it waits for them.
    const config = JSON.parse(readFileSync(sandbox.configPath, "utf8"));
    config.mcpServers.x.inheritEnv = ["SECRET_TOKEN"];
    writeFileSync(sandbox.configPath, JSON.stringify(config, null, 2));
    const review = await eventually(
      async () => (await runCli(["approve", ...flags(sandbox)], sandbox.env(SECRETS))).stdout,
      (out) => out.includes("x: awaiting approval"),
      15_000,
    );
    expect(review).toContain('inheritEnv: ["SECRET_TOKEN"]');
    expect(review).toContain("SECRET_TOKEN (inheritEnv)");
    expect(review).not.toContain("s3cr3t-value");
    const stateOfX = async () => {
      const listed = await upstreamServers(proxy, "list", {});
      const rows = (listed.structuredContent as { servers: { name: string; state: string }[] }).servers;
      return rows.find((row) => row.name === "x")?.state;
    };
    expect(await eventually(stateOfX, (state) => state === "awaiting-approval", 15_000)).toBe(
      "awaiting-approval",
    );
    await expect(environmentOf(proxy, "x", ["SECRET_TOKEN"])).rejects.toThrow();
    await approveServerAndTools(proxy, sandbox, "x");
    const granted = await eventually(
      () => environmentOf(proxy, "x", ["SECRET_TOKEN"]).catch(() => undefined),
      (env) => env?.SECRET_TOKEN === "s3cr3t-value",
      15_000,
    );
    expect(granted).toEqual({ SECRET_TOKEN: "s3cr3t-value" });
  });
});
