import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  cleanupAfterEach,
  eventually,
  fixtureEntry,
  freePort,
  ROOT,
  runProcess,
  startHttpProxy,
} from "./helpers.ts";

// A loaded 2-core machine can be slow without anything being wrong: a generous bound, not 5 s.
setDefaultTimeout(60_000);

/**
 * deploy/health-probe.sh, the probe the image's HEALTHCHECK and the Helm chart's readiness and
 * liveness run, against the compiled binary with the bearer token on (as it always is when a
 * container binds 0.0.0.0): the token comes from the data dir, `ready` wants a usable server, and
 * `live` only an answer.
 */
const PROBE = join(ROOT, "deploy", "health-probe.sh");
const { defer, sandbox: newSandbox } = cleanupAfterEach();

async function probe(mode: "ready" | "live", port: number, dataDir: string) {
  const env = {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    MCPPROXY_PORT: String(port),
    MCPPROXY_DATA_DIR: dataDir,
  };
  return runProcess(["bash", PROBE, mode], env);
}

async function serveWith(servers: Record<string, unknown>) {
  const sandbox = newSandbox();
  sandbox.writeConfig({ mcpServers: servers });
  const proxy = await startHttpProxy(sandbox, [], { MCPPROXY_REQUIRE_TOKEN: "1" });
  defer(() => proxy.stop());
  return { sandbox, port: Number(proxy.url.port), url: proxy.url };
}

describe("deploy/health-probe.sh against mcpproxy serve with the bearer token", () => {
  test("ready and live pass once a server is connected, with the token read from the data dir", async () => {
    const { sandbox, port, url } = await serveWith({ fixture: fixtureEntry() });
    // /health itself wants the token: without it, 401.
    expect((await fetch(new URL("/health", url))).status).toBe(401);
    const ready = await eventually(
      () => probe("ready", port, sandbox.dataDir),
      (result) => result.code === 0,
      15_000,
    );
    expect(ready).toMatchObject({ code: 0 });
    expect(await probe("live", port, sandbox.dataDir)).toMatchObject({ code: 0 });
  });

  test("ready fails and live passes when no server is usable (503)", async () => {
    const { sandbox, port, url } = await serveWith({ broken: { command: "/nonexistent/mcp-server" } });
    const token = readFileSync(join(sandbox.dataDir, "http-token"), "utf8").trim();
    const health = await eventually(
      () => fetch(new URL("/health", url), { headers: { authorization: `Bearer ${token}` } }),
      (response) => response.status === 503,
      15_000,
    );
    expect(health.status).toBe(503);
    const ready = await probe("ready", port, sandbox.dataDir);
    expect(ready.code).not.toBe(0);
    expect(ready.stderr).toContain("/health answered 503 (ready)");
    expect(await probe("live", port, sandbox.dataDir)).toMatchObject({ code: 0 });
  });

  test("both fail with a wrong token (401) and when nothing listens", async () => {
    const { sandbox, port } = await serveWith({ fixture: fixtureEntry() });
    const wrong = newSandbox();
    writeFileSync(join(wrong.dir, "http-token"), `${"0".repeat(64)}\n`);
    for (const mode of ["ready", "live"] as const) {
      const refused = await probe(mode, port, wrong.dir);
      expect(refused.code).not.toBe(0);
      expect(refused.stderr).toContain(`/health answered 401 (${mode})`);
      expect((await probe(mode, await freePort(), sandbox.dataDir)).code).not.toBe(0);
    }
  });
});
