import { describe, expect, setDefaultTimeout, test } from "bun:test";
import type { ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import type { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import {
  BINARY,
  cleanupAfterEach,
  connectStdio,
  eventually,
  fixtureEntry,
  processesMatching,
  type Sandbox,
  watchOutput,
} from "./helpers.ts";

setDefaultTimeout(60_000);

/**
 * The proxy stopping, whoever asks: an MCP client closing it the SDK's way, Ctrl-C or SIGTERM
 * during `index` or `doctor`, a session that ends while servers are still starting. Every server
 * and every helper it started is gone once the proxy has exited, also those that ignore SIGTERM.
 */
const scope = cleanupAfterEach();

/** Processes left behind (on a failure) are killed after the test, so they do not pile up. */
function tokenFor(prefix: string): string {
  const token = `${prefix}-${crypto.randomUUID()}`;
  scope.defer(() => {
    for (const pid of processesMatching(token)) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        // Gone already.
      }
    }
  });
  return token;
}

const goneWithin = (token: string, ms: number) =>
  eventually(
    () => processesMatching(token),
    (pids) => pids.length === 0,
    ms,
  );

describe("a client that closes the proxy the SDK's way", () => {
  test("leaves no server or helper behind, even ones that ignore stdin EOF and SIGTERM, and the proxy exits by itself", async () => {
    const sandbox = scope.sandbox();
    const token = tokenFor("sdk-close");
    sandbox.writeConfig({
      mcpServers: {
        stubborn: fixtureEntry({
          args: ["--mode", "ignore-eof", "--ignore-sigterm", "--spawn-helper", "--name", `${token}-stubborn`],
        }),
        plain: fixtureEntry({ args: ["--spawn-helper", "--name", `${token}-plain`] }),
      },
    });
    const proxy = await connectStdio(sandbox);
    // Two servers and their two helpers.
    expect(
      await eventually(
        () => processesMatching(token),
        (pids) => pids.length === 4,
        20_000,
      ),
    ).toHaveLength(4);
    await eventually(proxy.stderr, (text) => text.includes("2 of 2 servers indexed"), 20_000);
    const transport = proxy.client.transport as StdioClientTransport;
    const child = (transport as unknown as { _process?: ChildProcess })._process;
    expect(child).toBeDefined();

    // The SDK closes stdin, waits 2 s, sends SIGTERM, waits 2 s, then SIGKILLs the proxy.
    await proxy.close();
    expect(await goneWithin(token, 3_000)).toEqual([]);
    // It exited on its own (the SDK's SIGKILL would leave no exit code), its servers stopped first.
    expect(child?.exitCode).toBe(0);
  });
});

describe("Ctrl-C or SIGTERM while servers are starting", () => {
  for (const command of ["index", "doctor"] as const) {
    for (const signal of ["SIGINT", "SIGTERM"] as const) {
      test(`${signal} during ${command} ends the servers and their helpers, and exits ${signal === "SIGINT" ? 130 : 143}`, async () => {
        const sandbox = scope.sandbox();
        const token = tokenFor(`${command}-${signal}`);
        sandbox.writeConfig({
          mcpServers: {
            // Slow to start (npx fetching a package), with a helper, neither minding SIGTERM.
            slow: {
              ...fixtureEntry({
                args: [
                  "--init-delay",
                  "60000",
                  "--spawn-helper",
                  "--ignore-sigterm",
                  "--name",
                  `${token}-slow`,
                ],
              }),
              timeoutMs: 120_000,
            },
            quick: fixtureEntry({ args: ["--spawn-helper", "--name", `${token}-quick`] }),
          },
        });
        const child = Bun.spawn(
          [BINARY, command, "--config", sandbox.configPath, "--data-dir", sandbox.dataDir],
          { env: sandbox.env(), stdout: "pipe", stderr: "pipe" },
        );
        scope.defer(() => child.kill("SIGKILL"));
        const stderr = watchOutput(child.stderr);
        watchOutput(child.stdout);
        // The slow server and its helper are up (the quick one may have come and gone with doctor).
        const running = await eventually(
          () => processesMatching(`${token}-slow`),
          (pids) => pids.length === 2,
          20_000,
        );
        expect(running).toHaveLength(2);
        child.kill(signal);
        const code = await child.exited;
        expect(await goneWithin(token, 3_000)).toEqual([]);
        expect(code).toBe(signal === "SIGINT" ? 130 : 143);
        expect(stderr.text()).toContain(`${command} stopped by ${signal}`);
      });
    }
  }
});

describe("a short stdio session", () => {
  test("ending while servers still connect stops them at once and quietly: no 'could not connect' per server", async () => {
    const sandbox: Sandbox = scope.sandbox();
    const token = tokenFor("short");
    const readyLog = join(sandbox.dir, "ready.log");
    sandbox.writeConfig({
      mcpServers: {
        first: fixtureEntry({ args: ["--name", `${token}-first`] }),
        second: fixtureEntry({ args: ["--name", `${token}-second`] }),
        // Would be serving 3 s after it started, and stops only for SIGKILL.
        slow: {
          ...fixtureEntry({
            args: ["--init-delay", "3000", "--ignore-sigterm", "--name", `${token}-slow`],
            env: { FIXTURE_READY_LOG: readyLog },
          }),
          timeoutMs: 60_000,
        },
      },
    });
    const child = Bun.spawn(
      [BINARY, "serve", "--config", sandbox.configPath, "--data-dir", sandbox.dataDir],
      { env: sandbox.env(), stdin: "pipe", stdout: "pipe", stderr: "pipe" },
    );
    scope.defer(() => child.kill("SIGKILL"));
    const stderr = watchOutput(child.stderr);
    watchOutput(child.stdout);
    await stderr.waitFor(/serving MCP over stdio/, 20_000);
    child.stdin.end();
    expect(await child.exited).toBe(0);
    await stderr.done;
    // Ordering, not a stopwatch: the proxy was gone before the slow server would have served.
    expect(await goneWithin(token, 3_000)).toEqual([]);
    expect(existsSync(readyLog)).toBe(false);
    const log = stderr.text();
    expect(log.match(/could not connect/g) ?? []).toEqual([]);
    expect(log).not.toContain("indexing failed");
    expect(log.match(/shutting down/g)).toHaveLength(1);
  });
});
