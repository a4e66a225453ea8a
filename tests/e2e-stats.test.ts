import { afterEach, describe, expect, setDefaultTimeout, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js";
import {
  connectHttp,
  connectStdio,
  createSandbox,
  fixtureEntry,
  runCli,
  type Sandbox,
  startHttpProxy,
} from "./helpers.ts";

// A loaded 2-core machine can be slow without anything being wrong: a generous bound, not 5 s.
setDefaultTimeout(60_000);

/**
 * Call statistics and fallback suggestions through the compiled binary: calls are counted per
 * tool (stats.db), the figures survive a restart and match the calls made, `tools_stat` and
 * `mcpproxy stats` report them, and a failing call comes back with alternatives.
 */
const sandboxes: Sandbox[] = [];
afterEach(() => {
  for (const sandbox of sandboxes.splice(0)) sandbox.cleanup();
});

type Proxy = Awaited<ReturnType<typeof connectStdio>>;

const call = async (proxy: Proxy, name: string) =>
  CallToolResultSchema.parse(
    await proxy.client.callTool({
      name: "call_tool",
      arguments: { name, arguments: name.endsWith("echo") ? { message: "hi" } : {} },
    }),
  );

interface Report {
  totals: { calls: number; successes: number; failures: number };
  top: {
    server: string;
    tool: string;
    calls: number;
    successes: number;
    afterSearch: number;
    successRate: number;
  }[];
  failing: { server: string; tool: string; calls: number; successRate: number; lastError?: string }[];
}

async function toolsStat(proxy: Proxy): Promise<Report> {
  const result = await proxy.client.callTool({ name: "tools_stat", arguments: {} });
  return (result as unknown as { structuredContent: Report }).structuredContent;
}

describe("call statistics", () => {
  test("calls are counted per tool, survive a restart, and a failing call gets alternatives", async () => {
    const sandbox = createSandbox();
    sandboxes.push(sandbox);
    sandbox.writeConfig({
      mcpServers: { fx: fixtureEntry(), backup: fixtureEntry({ args: ["--name", "backup"] }) },
    });
    const args = ["--config", sandbox.configPath, "--data-dir", sandbox.dataDir];
    let proxy = await connectStdio(sandbox);
    try {
      await proxy.client.callTool({ name: "retrieve_tools", arguments: { query: "echo a message back" } });
      for (let i = 0; i < 3; i++) expect((await call(proxy, "fx__echo")).isError).toBeFalsy();
      const failed = await call(proxy, "fx__always_fails");
      await call(proxy, "fx__always_fails");
      expect(failed.isError).toBe(true);
      // The failure keeps the server's own message and adds up to three other tools, with why.
      const texts = failed.content.map((part) => ("text" in part ? String(part.text) : ""));
      expect(texts[0]).toBe("this tool always fails");
      expect(texts[1]).toContain("Other tools that may do this");
      const alternatives = (failed._meta as Record<string, { name: string; why: string }[]>)[
        "mcpproxy/alternatives"
      ]!;
      expect(alternatives.length).toBeGreaterThan(0);
      expect(alternatives.length).toBeLessThanOrEqual(3);
      expect(alternatives.map((a) => a.name)).not.toContain("fx__always_fails");
      expect(alternatives[0]).toMatchObject({ name: "backup__always_fails" });
      expect(alternatives[0]!.why).toContain("similar to fx__always_fails");

      const live = await toolsStat(proxy);
      expect(live.totals).toMatchObject({ calls: 5, successes: 3, failures: 2 });
      expect(live.top[0]).toMatchObject({
        server: "fx",
        tool: "echo",
        calls: 3,
        successes: 3,
        afterSearch: 3,
      });
      expect(live.failing[0]).toMatchObject({ server: "fx", tool: "always_fails", calls: 2, successRate: 0 });
      expect(live.failing[0]!.lastError).toContain("this tool always fails");
    } finally {
      await proxy.close();
    }

    // Written at shutdown at the latest: the command and a new proxy see the same figures.
    const printed = JSON.parse((await runCli(["stats", "--json", ...args], sandbox.env())).stdout) as Report;
    expect(printed.totals).toMatchObject({ calls: 5, successes: 3, failures: 2 });
    proxy = await connectStdio(sandbox);
    try {
      await call(proxy, "fx__echo");
      const after = await toolsStat(proxy);
      expect(after.totals.calls).toBe(6);
      expect(after.top[0]).toMatchObject({ tool: "echo", calls: 4 });
    } finally {
      await proxy.close();
    }

    const reset = await runCli(["stats", "--reset", "fx/echo", ...args], sandbox.env());
    expect(reset.stdout).toContain("Cleared the figures of 1 tool(s)");
    const left = JSON.parse((await runCli(["stats", "--json", ...args], sandbox.env())).stdout) as Report;
    expect(left.totals.calls).toBe(2);
    const text = await runCli(["stats", ...args], sandbox.env());
    expect(text.stdout).toContain("fx/always_fails: 2 calls, 0% ok");
  }, 60_000);
});

describe("the learned prior", () => {
  test("with learnedPrior on, a tool that keeps failing sinks below its twin on another server", async () => {
    const sandbox = createSandbox();
    sandboxes.push(sandbox);
    sandbox.writeConfig({
      mcpServers: { fx: fixtureEntry(), backup: fixtureEntry({ args: ["--name", "backup"] }) },
      mcpproxy: { learnedPrior: true },
    });
    const proxy = await connectStdio(sandbox);
    const ranked = async () => {
      const result = await proxy.client.callTool({
        name: "retrieve_tools",
        arguments: { query: "a tool that reports failure with isError" },
      });
      return (
        result as unknown as { structuredContent: { tools: { name: string }[] } }
      ).structuredContent.tools.map((tool) => tool.name);
    };
    try {
      const before = await ranked();
      const top = before[0]!;
      expect(top.endsWith("__always_fails")).toBe(true);
      for (let i = 0; i < 5; i++) await call(proxy, top);
      await Bun.sleep(1100); // the prior reads the figures at most once a second
      const after = await ranked();
      expect(after[0]).not.toBe(top);
      expect(after[0]!.endsWith("__always_fails")).toBe(true);
    } finally {
      await proxy.close();
    }
  }, 60_000);
});

describe("/metrics", () => {
  test("counts calls, errors and latency per tool in the Prometheus format, only when turned on", async () => {
    const sandbox = createSandbox();
    sandboxes.push(sandbox);
    sandbox.writeConfig({ mcpServers: { fx: fixtureEntry() }, mcpproxy: { metrics: true } });
    const proxy = await startHttpProxy(sandbox);
    const client = await connectHttp(proxy.url);
    try {
      for (const name of ["fx__echo", "fx__echo", "fx__always_fails"]) {
        await client.callTool({
          name: "call_tool",
          arguments: { name, arguments: name.endsWith("echo") ? { message: "hi" } : {} },
        });
      }
      const response = await fetch(new URL("/metrics", proxy.url));
      expect(response.headers.get("content-type")).toContain("text/plain");
      const text = await response.text();
      expect(text).toContain('mcpproxy_tool_calls_total{server="fx",tool="echo"} 2');
      expect(text).toContain(
        'mcpproxy_tool_call_errors_total{server="fx",tool="always_fails",kind="isError"} 1',
      );
      expect(text).toContain('mcpproxy_tool_call_duration_seconds_count{server="fx",tool="echo"} 2');
      expect(text).toContain('mcpproxy_servers{state="connected"} 1');
      expect(text).toMatch(/mcpproxy_indexed_tools \d+/);
      // The same guard as /mcp: a page on another site cannot read it through the browser.
      const foreign = await fetch(new URL("/metrics", proxy.url), {
        headers: { origin: "http://evil.example" },
      });
      expect(foreign.status).toBe(403);
    } finally {
      await client.close();
      await proxy.stop();
    }
    const off = createSandbox();
    sandboxes.push(off);
    off.writeConfig({ mcpServers: { fx: fixtureEntry() } });
    const plain = await startHttpProxy(off);
    try {
      const off = await fetch(new URL("/metrics", plain.url));
      expect(off.status).toBe(404);
      // It says how to turn it on, not only that nothing is there.
      const { error } = (await off.json()) as { error: string };
      expect(error).toContain('"mcpproxy": {"metrics": true}');
      expect(error).toContain("MCPPROXY_METRICS=1");
    } finally {
      await plain.stop();
    }
  }, 60_000);
});

describe("/metrics with many tools", () => {
  test("keeps per-tool series bounded: the first 100 tools called get their own, the rest count as (other)", async () => {
    const sandbox = createSandbox();
    sandboxes.push(sandbox);
    const count = 2_000;
    const toolsFile = join(sandbox.dir, "tools.json");
    writeFileSync(
      toolsFile,
      JSON.stringify(
        Array.from({ length: count }, (_, i) => ({
          name: `tool_${i}`,
          description: `Tool number ${i}`,
          inputSchema: { type: "object" },
        })),
      ),
    );
    sandbox.writeConfig({
      mcpServers: { many: fixtureEntry({ args: ["--tools-file", toolsFile] }) },
      mcpproxy: { metrics: true },
    });
    const proxy = await startHttpProxy(sandbox);
    const client = await connectHttp(proxy.url);
    try {
      for (let start = 0; start < count; start += 50) {
        await Promise.all(
          Array.from({ length: Math.min(50, count - start) }, (_, i) =>
            client.callTool({ name: "call_tool", arguments: { name: `many__tool_${start + i}` } }),
          ),
        );
      }
      const text = await (await fetch(new URL("/metrics", proxy.url))).text();
      const calls = [...text.matchAll(/^mcpproxy_tool_calls_total\{server="many",tool="([^"]+)"\} (\d+)$/gm)];
      const labels = calls.map((match) => match[1]!);
      expect(labels).toHaveLength(101);
      expect(labels).toContain("(other)");
      expect(labels.filter((label) => label.startsWith("tool_"))).toHaveLength(100);
      // Every call is counted: sum by (server) is the server's exact total.
      expect(calls.reduce((sum, match) => sum + Number(match[2]), 0)).toBe(count);
      expect(text).toContain(`mcpproxy_tool_calls_total{server="many",tool="(other)"} ${count - 100}`);
      expect(text).toContain(
        `mcpproxy_tool_call_duration_seconds_count{server="many",tool="(other)"} ${count - 100}`,
      );
      const series = text.split("\n").filter((line) => line && !line.startsWith("#")).length;
      // About 20 series per tool with its own; 2,000 tools called once made 40,000 before.
      expect(series).toBeLessThan(101 * 20 + 50);
    } finally {
      await client.close();
      await proxy.stop();
    }
  }, 120_000);

  test("metricsToolLimit 0 keeps per-server series only", async () => {
    const sandbox = createSandbox();
    sandboxes.push(sandbox);
    sandbox.writeConfig({ mcpServers: { fx: fixtureEntry() }, mcpproxy: { metrics: true } });
    const proxy = await startHttpProxy(sandbox, [], { MCPPROXY_METRICS_TOOL_LIMIT: "0" });
    const client = await connectHttp(proxy.url);
    try {
      for (const name of ["fx__echo", "fx__tiny_picture", "fx__always_fails"]) {
        await client.callTool({
          name: "call_tool",
          arguments: { name, arguments: name.endsWith("echo") ? { message: "hi" } : {} },
        });
      }
      const text = await (await fetch(new URL("/metrics", proxy.url))).text();
      expect(text).toContain('mcpproxy_tool_calls_total{server="fx",tool="(other)"} 3');
      expect(text).toContain('mcpproxy_tool_call_errors_total{server="fx",tool="(other)",kind="isError"} 1');
      expect(text).not.toMatch(/tool="(echo|tiny_picture|always_fails)"/);
    } finally {
      await client.close();
      await proxy.stop();
    }
  }, 60_000);
});

describe("stats on the command line", () => {
  test("--server and --reset name an unknown server or tool and exit 2 instead of succeeding in silence", async () => {
    const sandbox = createSandbox();
    sandboxes.push(sandbox);
    sandbox.writeConfig({ mcpServers: { fx: fixtureEntry() } });
    const args = ["--config", sandbox.configPath, "--data-dir", sandbox.dataDir];
    expect((await runCli(["index", ...args], sandbox.env())).code).toBe(0);
    for (const command of [
      ["stats", "--server", "nosuch"],
      ["stats", "--reset", "nosuch"],
      ["stats", "--reset", "nosuch/echo"],
    ]) {
      const result = await runCli([...command, ...args], sandbox.env());
      expect(result.code).toBe(2);
      expect(result.stderr).toContain("No server named nosuch");
      expect(result.stderr).toContain("Known servers: fx");
      expect(result.stdout).toBe("");
    }
    const tool = await runCli(["stats", "--reset", "fx/no_such_tool", ...args], sandbox.env());
    expect(tool.code).toBe(2);
    expect(tool.stderr).toContain("fx has no tool named no_such_tool");
    // Known names still work, with nothing recorded yet.
    expect((await runCli(["stats", "--server", "fx", ...args], sandbox.env())).code).toBe(0);
    const reset = await runCli(["stats", "--reset", "fx/echo", ...args], sandbox.env());
    expect(reset.code).toBe(0);
    expect(reset.stdout).toContain("Cleared the figures of 0 tool(s) (fx/echo)");
  }, 60_000);

  test("the p95 of one slow call is that call's time, never above the slowest call", async () => {
    const sandbox = createSandbox();
    sandboxes.push(sandbox);
    sandbox.writeConfig({ mcpServers: { fx: fixtureEntry() } });
    const proxy = await connectStdio(sandbox);
    try {
      await proxy.client.callTool({
        name: "call_tool",
        arguments: { name: "fx__sleep_then_answer", arguments: { ms: 1300 } },
      });
    } finally {
      await proxy.close();
    }
    const args = ["--config", sandbox.configPath, "--data-dir", sandbox.dataDir];
    const report = JSON.parse((await runCli(["stats", "--json", ...args], sandbox.env())).stdout) as {
      top: { tool: string; calls: number; meanMs: number; p95Ms: number }[];
    };
    const [slow] = report.top;
    expect(slow).toMatchObject({ tool: "sleep_then_answer", calls: 1 });
    // One call: its mean is its time. The old power-of-two buckets showed 1,448 ms for it.
    expect(slow!.meanMs).toBeGreaterThanOrEqual(1300);
    expect(slow!.p95Ms).toBeLessThanOrEqual(slow!.meanMs);
    expect(slow!.p95Ms).toBeGreaterThanOrEqual(slow!.meanMs * 0.97);
  }, 60_000);
});

describe("fallback suggestions", () => {
  test("leave out tools of servers that are down", async () => {
    const sandbox = createSandbox();
    sandboxes.push(sandbox);
    const servers = {
      fx: fixtureEntry(),
      backup: fixtureEntry({ args: ["--name", "backup"] }),
      gone: fixtureEntry({ args: ["--name", "gone"] }),
    };
    sandbox.writeConfig({ mcpServers: servers });
    const args = ["--config", sandbox.configPath, "--data-dir", sandbox.dataDir];
    expect((await runCli(["index", ...args], sandbox.env())).code).toBe(0);
    // `gone` now fails at start; its indexed tools stay searchable, but calling them fails.
    sandbox.writeConfig({
      mcpServers: { ...servers, gone: fixtureEntry({ args: ["--name", "gone", "--mode", "exit-on-init"] }) },
    });
    const proxy = await connectStdio(sandbox);
    try {
      const stateOf = async (name: string) => {
        const listed = (await proxy.client.callTool({
          name: "upstream_servers",
          arguments: { operation: "list" },
        })) as unknown as { structuredContent: { servers: { name: string; state: string }[] } };
        return listed.structuredContent.servers.find((server) => server.name === name)?.state;
      };
      const deadline = Date.now() + 20_000;
      while ((await stateOf("gone")) !== "failed" || (await stateOf("backup")) !== "connected") {
        if (Date.now() > deadline) throw new Error("gone never failed, or backup never connected");
        await Bun.sleep(50);
      }
      const failed = await call(proxy, "fx__always_fails");
      const alternatives = (failed._meta as Record<string, { name: string; server: string }[]>)[
        "mcpproxy/alternatives"
      ]!;
      expect(alternatives.map((a) => a.name)).toContain("backup__always_fails");
      expect(alternatives.map((a) => a.server)).not.toContain("gone");
    } finally {
      await proxy.close();
    }
  }, 60_000);
});
