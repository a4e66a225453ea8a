import { afterEach, describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { EmptyResultSchema } from "@modelcontextprotocol/core";
import type { HttpServerConfig, StdioServerConfig } from "../src/config/parse-server.ts";
import { silentLogger } from "../src/log.ts";
import { createUpstreamPool, type UpstreamPool } from "../src/upstream/upstream-pool.ts";
import { FIXTURE, MODERN_FIXTURE, startModernHttpFixture } from "./helpers.ts";

setDefaultTimeout(30_000);

/** The upstream pool in process against a 2026-07-28 server: what the server side hands it per request. */

const pools: UpstreamPool[] = [];
afterEach(async () => {
  for (const pool of pools.splice(0)) await pool.close();
});

function server(name: string, file: string, args: string[]): StdioServerConfig {
  return {
    name,
    enabled: true,
    timeoutMs: 15_000,
    transport: "stdio",
    command: process.execPath,
    args: [file, ...args],
    env: {},
  };
}

function poolOf(...servers: StdioServerConfig[]) {
  const pool = createUpstreamPool({ servers, logger: silentLogger });
  pools.push(pool);
  return pool;
}

const textOf = (result: object) => ((result as { content: unknown }).content as { text: string }[])[0]!.text;

describe("a call to a 2026-07-28 server", () => {
  test("carries the caller's capabilities when given, and none otherwise", async () => {
    const pool = poolOf(server("modern", MODERN_FIXTURE, ["--modern-only", "--capable-tools"]));
    await pool.connectAll();
    const asked = await pool.callTool(
      "modern",
      "client_capabilities",
      {},
      {
        clientCapabilities: { elicitation: { form: {} } },
      },
    );
    expect(JSON.parse(textOf(asked))).toEqual({ elicitation: { form: {} } });
    expect(JSON.parse(textOf(await pool.callTool("modern", "client_capabilities", {})))).toEqual({});
  });

  test("a request the revision removed is not sent to it: it resolves empty, where a 2025 server gets it", async () => {
    const pool = poolOf(server("modern", MODERN_FIXTURE, ["--modern-only"]), server("legacy", FIXTURE, []));
    await pool.connectAll();
    expect(
      await pool.request(
        "modern",
        { method: "logging/setLevel", params: { level: "info" } },
        EmptyResultSchema,
      ),
    ).toEqual({});
    // The 2025 fixture declares no logging: the request reaches it and it answers so.
    await expect(
      pool.request("legacy", { method: "logging/setLevel", params: { level: "info" } }, EmptyResultSchema),
    ).rejects.toThrow("Method not found");
    expect(pool.status().map((row) => [row.name, row.protocolVersion])).toEqual([
      ["modern", "2026-07-28"],
      ["legacy", "2025-11-25"],
    ]);
  });
});

describe("a 404 from a 2026-07-28 server", () => {
  test("is its answer (an unknown method), not a lost session: the call is not sent again", async () => {
    const dir = mkdtempSync(join(tmpdir(), "mcpproxy-vanishing-"));
    const calls = join(dir, "calls.log");
    const remote = await startModernHttpFixture(["--modern-only", "--vanishing-tool"], {
      FIXTURE_CALL_LOG: calls,
    });
    try {
      const config: HttpServerConfig = {
        name: "remote",
        enabled: true,
        timeoutMs: 15_000,
        transport: "streamable-http",
        url: remote.url,
        headers: {},
      };
      const pool = createUpstreamPool({ servers: [config], logger: silentLogger });
      pools.push(pool);
      await pool.connectAll();
      await expect(pool.callTool("remote", "vanishing", {})).rejects.toThrow();
      expect(existsSync(calls) ? readFileSync(calls, "utf8").trim().split("\n") : []).toEqual(["vanishing"]);
      expect(pool.status()[0]?.state).toBe("connected");
    } finally {
      remote.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
