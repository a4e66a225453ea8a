import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { cleanupAfterEach, FIXTURE, ROOT, runCli } from "./helpers.ts";

setDefaultTimeout(120_000);

/**
 * The labelled poisoning corpus (bench/poisoning-corpus.json) through the compiled binary: every
 * tool case served by a real MCP server under its own server name, indexed with
 * `poisoning: "block"`. Every poisoned tool (homoglyphs, format characters, spaced letters, text
 * hidden in titles, enums, defaults, property names or output schemas, other servers' tools
 * however spelled) must be held for approval, and every benign one offered.
 */
const scope = cleanupAfterEach();

interface CorpusCase {
  id: string;
  kind: "tool" | "prompt" | "resource";
  item: { name: string } & Record<string, unknown>;
  server: string;
  expect: string;
}

describe("the poisoning corpus through the binary", () => {
  test('with poisoning "block", every poisoned tool is held and no benign one is', async () => {
    const corpus = JSON.parse(readFileSync(join(ROOT, "bench", "poisoning-corpus.json"), "utf8")) as {
      servers: string[];
      cases: CorpusCase[];
    };
    const sandbox = scope.sandbox();
    const byServer = new Map<string, CorpusCase[]>();
    for (const entry of corpus.cases.filter((c) => c.kind === "tool")) {
      byServer.set(entry.server, [...(byServer.get(entry.server) ?? []), entry]);
    }
    const expected = new Map<string, string>(); // server/tool → what it must be
    const mcpServers: Record<string, unknown> = {};
    for (const [server, cases] of byServer) {
      const names = new Set<string>();
      const tools = cases.map((entry) => {
        let name = entry.item.name;
        while (names.has(name)) name = `${name}_again`;
        names.add(name);
        expected.set(`${server}/${name}`, entry.expect);
        return { ...entry.item, name, inputSchema: entry.item.inputSchema ?? { type: "object" } };
      });
      const file = join(sandbox.dir, `${server}.json`);
      writeFileSync(file, JSON.stringify(tools));
      mcpServers[server] = { command: process.execPath, args: [FIXTURE, "--tools-file", file] };
    }
    // The corpus's other servers are configured too (disabled): the scan knows them by name.
    for (const server of corpus.servers) {
      mcpServers[server] ??= { command: process.execPath, args: [FIXTURE], enabled: false };
    }
    sandbox.writeConfig({ mcpServers, mcpproxy: { poisoning: "block" } });
    const flags = ["--config", sandbox.configPath, "--data-dir", sandbox.dataDir];
    const indexed = await runCli(["index", ...flags], sandbox.env());
    expect(indexed.code).toBe(0);

    const review = JSON.parse((await runCli(["approve", "--json", ...flags], sandbox.env())).stdout) as {
      quarantined: { server: string; tool: string; findings: string[] }[];
    };
    const held = new Set(review.quarantined.map((tool) => `${tool.server}/${tool.tool}`));
    const poisoned = [...expected].filter(([, kind]) => kind !== "none").map(([tool]) => tool);
    const benign = [...expected].filter(([, kind]) => kind === "none").map(([tool]) => tool);
    expect(poisoned.length).toBeGreaterThan(100);
    expect(poisoned.filter((tool) => !held.has(tool))).toEqual([]);
    expect(benign.filter((tool) => held.has(tool))).toEqual([]);
    const search = await runCli(
      ["search", "get the weather forecast for a city", "--json", ...flags],
      sandbox.env(),
    );
    const found = (JSON.parse(search.stdout) as { tools: { server: string; tool: string }[] }).tools;
    expect(found.filter((tool) => held.has(`${tool.server}/${tool.tool}`))).toEqual([]);
  });
});
