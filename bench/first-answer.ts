#!/usr/bin/env bun
/**
 * How long the first retrieve_tools of a first run takes when one server is slow to start: a
 * fixture server that answers at once and one that answers after 20 s, a fresh data dir, serve
 * over stdio. Figures, not pass/fail.
 *
 *   bun bench/first-answer.ts [BINARY ...]     (default: dist/mcpproxy)
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { BINARY, ROOT } from "./proxy-process.ts";

const FIXTURE = join(ROOT, "tests", "fixtures", "fixture-server.ts");
const SLOW_START_MS = 20_000;

export async function measureFirstAnswer(
  binary: string,
): Promise<{ ms: number; top?: string; connecting?: string[] }> {
  const dir = mkdtempSync(join(tmpdir(), "mcpproxy-first-"));
  try {
    const config = join(dir, "mcp_config.json");
    writeFileSync(
      config,
      JSON.stringify({
        mcpServers: {
          fast: { command: process.execPath, args: [FIXTURE] },
          slow: {
            command: process.execPath,
            args: [FIXTURE, "--init-delay", String(SLOW_START_MS)],
            timeoutMs: 60_000,
          },
        },
      }),
    );
    const transport = new StdioClientTransport({
      command: binary,
      args: ["serve", "--config", config, "--data-dir", join(dir, "data")],
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: dir },
      stderr: "ignore",
    });
    const client = new Client({ name: "mcpproxy-bench", version: "1.0.0" });
    await client.connect(transport);
    try {
      const started = performance.now();
      const result = await client.callTool({
        name: "retrieve_tools",
        arguments: { query: "echo back the message" },
      });
      const ms = performance.now() - started;
      const answer = result.structuredContent as {
        tools: { name: string }[];
        connecting?: { servers: string[] };
      };
      return {
        ms,
        ...(answer.tools[0] ? { top: answer.tools[0].name } : {}),
        ...(answer.connecting ? { connecting: answer.connecting.servers } : {}),
      };
    } finally {
      await client.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.main) {
  const binaries = process.argv.length > 2 ? process.argv.slice(2) : [BINARY];
  for (const binary of binaries) {
    const { ms, top, connecting } = await measureFirstAnswer(binary);
    process.stdout.write(
      `${binary}: first retrieve_tools in ${(ms / 1000).toFixed(2)} s (a server ${SLOW_START_MS / 1000} s slow to start); ` +
        `top hit ${top ?? "none"}; still connecting: ${connecting?.join(", ") ?? "not said"}\n`,
    );
  }
}
