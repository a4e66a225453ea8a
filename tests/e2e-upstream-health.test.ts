import { describe, expect, setDefaultTimeout, test } from "bun:test";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import {
  cleanupAfterEach,
  eventually,
  fixtureEntry,
  httpProxyWithClient,
  type ServerHealth,
  startHttpFixture,
} from "./helpers.ts";

setDefaultTimeout(60_000);

/**
 * What /health and `upstream_servers list` say of servers that are down: the retry schedule
 * (retryAt, failures, circuitOpen), and a remote server that went away is noticed without a call.
 */

const scope = cleanupAfterEach();

async function proxyWith(servers: Record<string, unknown>, env: Record<string, string> = {}) {
  const { client, health: report } = await httpProxyWithClient(scope, servers, env);
  const health = async (name: string) => (await report()).servers.find((server) => server.name === name)!;
  return { client, health };
}

async function listed(client: Client, name: string): Promise<ServerHealth> {
  const result = await client.callTool({ name: "upstream_servers", arguments: { operation: "list" } });
  const text = (result.content as { text: string }[])[0]!.text;
  return (JSON.parse(text) as { servers: ServerHealth[] }).servers.find((server) => server.name === name)!;
}

describe("the retry schedule", () => {
  test("/health and upstream_servers list show when a failed server is tried again", async () => {
    // The retry is planned after the failure, so after this instant: an order, not a duration.
    const startedAt = Date.now();
    const { client, health } = await proxyWith({
      broken: fixtureEntry({ args: ["--mode", "exit-on-init"] }),
      fine: fixtureEntry(),
    });
    const broken = await eventually(
      () => health("broken"),
      (server) => server.retryAt !== undefined,
      20_000,
    );
    expect(broken.state).toBe("failed");
    expect(Date.parse(broken.retryAt!)).toBeGreaterThan(startedAt);
    expect(broken.failures).toBeGreaterThanOrEqual(1);
    expect(broken.circuitOpen).toBe(false);
    const row = await listed(client, "broken");
    expect(row.retryAt).toMatch(/^\d{4}-\d\d-\d\dT/);
    expect(row.failures).toBeGreaterThanOrEqual(1);
    expect((await health("fine")).retryAt).toBeUndefined();
  });
});

describe("a streamable-HTTP server that dies", () => {
  // Noticed two ways: by the periodic ping (a server without a GET stream gives no other sign), and
  // at once when its GET event stream breaks (with the periodic ping off).
  for (const { how, flags, healthCheckMs } of [
    { how: "by the periodic ping", flags: ["--no-get-stream"], healthCheckMs: "300" },
    { how: "by its event stream breaking", flags: [], healthCheckMs: "0" },
  ]) {
    test(`reads failed with its reason and retry time without any call (${how}), and a call says it is down`, async () => {
      const remote = await startHttpFixture("mortal", flags);
      scope.defer(() => remote.stop());
      const { client, health } = await proxyWith(
        { mortal: { url: remote.url } },
        { MCPPROXY_HEALTH_CHECK_MS: healthCheckMs },
      );
      const up = await eventually(
        () => health("mortal"),
        (server) => server.state === "connected",
        20_000,
      );
      expect(up.state).toBe("connected");
      const stoppedAt = Date.now();
      remote.stop();
      await remote.child.exited;
      const gone = await eventually(
        () => health("mortal"),
        (server) => server.state !== "connected" && server.retryAt !== undefined,
        15_000,
      );
      expect(gone.state).toBe("failed");
      expect(gone.error).toContain("the server stopped answering");
      expect(Date.parse(gone.retryAt!)).toBeGreaterThan(stoppedAt);
      expect((await listed(client, "mortal")).state).toBe("failed");
      const call = await client.callTool({
        name: "call_tool",
        arguments: { name: "mortal__echo", arguments: { message: "anyone?" } },
      });
      expect(call.isError).toBe(true);
    });
  }
});
