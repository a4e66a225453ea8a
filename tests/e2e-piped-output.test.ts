import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { createSandbox, fixtureEntry, requireBinary, runCli, type Sandbox } from "./helpers.ts";

setDefaultTimeout(90_000);

/**
 * What a command prints reaches a pipe whole, however slowly the other end reads: the process
 * used to exit with its writes still queued, and `tools --json | wc -c` counted 131,072 bytes.
 */
const TOOL_COUNT = 1_000;

/** Tools that all match one query, each with a schema of a few KB, so every output is well over 64 KiB. */
function bigToolsFile(sandbox: Sandbox): string {
  const tools = Array.from({ length: TOOL_COUNT }, (_, i) => ({
    name: `fetch_records_${i}`,
    description: `Fetch the records of ledger ${i} and return them as rows`,
    inputSchema: {
      type: "object",
      properties: {
        ledger: { type: "string", description: `ledger ${i}: ${"a ledger name. ".repeat(250)}` },
      },
    },
  }));
  const path = join(sandbox.dir, "tools.json");
  writeFileSync(path, JSON.stringify(tools));
  return path;
}

/**
 * Runs the binary into a pipe whose reader comes a second late, as `mcpproxy tools --json | (sleep
 * 1; wc -c)` does. (Bun's own pipes read eagerly into memory, so the reader is a shell's.)
 */
async function runWithSlowReader(args: string[], env: Record<string, string>) {
  const child = Bun.spawn(
    ["bash", "-c", 'set -o pipefail; "$@" | { sleep 1; cat; }', "bash", requireBinary(), ...args],
    { env, stdout: "pipe", stderr: "pipe" },
  );
  const [stdout, stderr, code] = await Promise.all([
    new Response(child.stdout).text(),
    new Response(child.stderr).text(),
    child.exited,
  ]);
  return { code, stdout, stderr };
}

describe("output to a slow pipe arrives whole", () => {
  let sandbox: Sandbox;
  let flags: string[];
  /** A data dir where every tool waits for approval, for the listing of `approve`. */
  let heldFlags: string[];
  beforeAll(async () => {
    sandbox = createSandbox();
    const toolsFile = bigToolsFile(sandbox);
    sandbox.writeConfig({ mcpServers: { ledger: fixtureEntry({ args: ["--tools-file", toolsFile] }) } });
    flags = ["--config", sandbox.configPath, "--data-dir", sandbox.dataDir];
    heldFlags = ["--config", sandbox.configPath, "--data-dir", join(sandbox.dir, "held")];
    expect((await runCli(["index", ...flags], sandbox.env())).code).toBe(0);
    const held = await runCli(["index", ...heldFlags], sandbox.env({ MCPPROXY_QUARANTINE_NEW_SERVERS: "1" }));
    expect(held.code).toBe(0);
  });
  afterAll(() => sandbox.cleanup());

  test("tools --json", async () => {
    const tools = await runWithSlowReader(["tools", "--json", ...flags], sandbox.env());
    expect(tools.code).toBe(0);
    expect(tools.stdout.length).toBeGreaterThan(128 * 1024);
    expect(JSON.parse(tools.stdout).tools).toHaveLength(TOOL_COUNT);
  });

  test("search --json", async () => {
    const found = await runWithSlowReader(
      ["search", "fetch ledger records", "--json", "--top-k", "50", "--min-score", "0", ...flags],
      sandbox.env(),
    );
    expect(found.code).toBe(0);
    expect(found.stdout.length).toBeGreaterThan(128 * 1024);
    expect(JSON.parse(found.stdout).tools).toHaveLength(50);
  });

  test("approve --json", async () => {
    const waiting = await runWithSlowReader(["approve", "--json", ...heldFlags], sandbox.env());
    expect(waiting.code).toBe(0);
    expect(waiting.stdout.length).toBeGreaterThan(128 * 1024);
    expect(JSON.parse(waiting.stdout).quarantined).toHaveLength(TOOL_COUNT);
  });
});

describe("output that cannot be written", () => {
  const shell = (script: string) => {
    const child = Bun.spawn(["bash", "-c", script, "bash", requireBinary()], {
      stdout: "pipe",
      stderr: "pipe",
    });
    return Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
  };

  test.skipIf(process.platform !== "linux")(
    "a full device is a failure that is said (exit 1), not a silent success",
    async () => {
      const [, stderr, code] = await shell('"$1" --help > /dev/full');
      expect(code).toBe(1);
      expect(stderr).toContain("mcpproxy: could not write the output (ENOSPC)");
    },
  );

  test("a reader that stops early (| head) is no failure", async () => {
    const [stdout, stderr, code] = await shell('set -o pipefail; "$1" --help | head -c 10');
    expect(stdout).toHaveLength(10);
    expect(code).toBe(0);
    expect(stderr).toBe("");
  });
});
