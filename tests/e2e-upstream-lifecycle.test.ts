import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { join } from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import {
  BINARY,
  cleanupAfterEach,
  connectStdio,
  eventually,
  fixtureEntry,
  processesMatching,
  type Sandbox,
  startEverythingHttp,
  startHttpProxy,
  watchOutput,
} from "./helpers.ts";

setDefaultTimeout(60_000);

/** How upstream servers come and go behind the compiled binary: restarts, loops, process trees. */

const scope = cleanupAfterEach();
let sandbox: Sandbox;

async function callThrough(client: Client, name: string, args: Record<string, unknown>) {
  const result = await client.callTool({ name: "call_tool", arguments: { name, arguments: args } });
  const text = (result.content as { type: string; text?: string }[])
    .map((block) => block.text ?? "")
    .join("");
  return { isError: Boolean(result.isError), text };
}

describe("a remote server that restarts", () => {
  for (const mode of ["streamableHttp", "sse"] as const) {
    test(`is reached again through a new session after it restarts on the same port (${mode})`, async () => {
      sandbox = scope.sandbox();
      const upstream = await startEverythingHttp(mode);
      scope.defer(() => upstream.child.kill());
      sandbox.writeConfig({ mcpServers: { everything: { url: upstream.url } } });
      const proxy = await connectStdio(sandbox);
      scope.defer(() => proxy.close());

      expect(await callThrough(proxy.client, "everything__echo", { message: "before" })).toEqual({
        isError: false,
        text: "Echo: before",
      });

      upstream.child.kill();
      await upstream.child.exited;
      const restarted = await startEverythingHttp(mode, upstream.port);
      scope.defer(() => restarted.child.kill());

      // No client action in between: the proxy notices the lost session and opens a new one.
      const after = await callThrough(proxy.client, "everything__echo", { message: "after" });
      expect(after).toEqual({ isError: false, text: "Echo: after" });
      expect(proxy.stderr()).toContain("[upstream:everything] reconnected");
    });
  }
});

describe("a config that lists mcpproxy itself", () => {
  test("does not fork proxies: that server is refused with the reason, the others are served", async () => {
    sandbox = scope.sandbox();
    sandbox.writeConfig({
      mcpServers: {
        itself: { command: BINARY, args: ["serve", "--config", sandbox.configPath] },
        fixture: fixtureEntry(),
      },
    });
    const proxy = await startHttpProxy(sandbox);
    scope.defer(() => proxy.stop());
    const health = () =>
      fetch(new URL("/health", proxy.url)).then(
        (response) =>
          response.json() as Promise<{ servers: { name: string; state: string; error?: string }[] }>,
      );
    const refused = await eventually(
      health,
      (h) => h.servers.some((s) => s.name === "itself" && s.state === "failed"),
      20_000,
    );
    const itself = refused.servers.find((s) => s.name === "itself")!;
    expect(itself.state).toBe("failed");
    expect(itself.error).toContain("proxy loop");

    // Past the first background retry (2.5-5 s): the refused server is never started again.
    let most = 0;
    for (let i = 0; i < 30; i++) {
      most = Math.max(most, processesMatching(sandbox.configPath).length);
      await Bun.sleep(200);
    }
    expect(most).toBeLessThanOrEqual(2); // this proxy, and for a moment the copy that refused
    expect(processesMatching(sandbox.configPath)).toHaveLength(1);
    expect((await health()).servers.find((s) => s.name === "fixture")?.state).toBe("connected");
  });

  test("is caught through a chain of two configs, while chaining to another config works", async () => {
    sandbox = scope.sandbox();
    const configA = sandbox.configPath;
    const configB = join(sandbox.dir, "b.json");
    await Bun.write(
      configB,
      JSON.stringify({
        mcpServers: {
          a: { command: BINARY, args: ["serve", "--config", configA, "--data-dir", join(sandbox.dir, "a2")] },
          fixture: fixtureEntry(),
        },
      }),
    );
    sandbox.writeConfig({
      mcpServers: {
        b: { command: BINARY, args: ["serve", "--config", configB, "--data-dir", join(sandbox.dir, "b")] },
      },
    });
    const proxy = await connectStdio(sandbox);
    scope.defer(() => proxy.close());

    // B runs below A and serves its fixture; the copy of A that B started refused, and B said why.
    const echoed = await callThrough(proxy.client, "b__call_tool", {
      name: "fixture__echo",
      arguments: { message: "through two proxies" },
    });
    expect(echoed).toEqual({ isError: false, text: "fixture echo: through two proxies" });
    // The copy of A that B started refused at once; nothing else runs either config.
    expect(
      await eventually(
        () => processesMatching(configA),
        (pids) => pids.length === 1,
        10_000,
      ),
    ).toHaveLength(1);
    expect(processesMatching(configB)).toHaveLength(1);
  });
});

describe("stopping servers", () => {
  test("shutdown ends servers still starting, servers that ignore stdin EOF, and their helpers", async () => {
    sandbox = scope.sandbox();
    const token = `tree-${crypto.randomUUID()}`;
    sandbox.writeConfig({
      mcpServers: {
        forker: fixtureEntry({ args: ["--spawn-helper", "--name", `${token}-forker`] }),
        stubborn: fixtureEntry({ args: ["--mode", "ignore-eof", "--name", `${token}-stubborn`] }),
        starting: fixtureEntry({
          args: ["--mode", "hang", "--name", `${token}-starting`],
          timeoutMs: 120_000,
        }),
      },
    });
    const proxy = await startHttpProxy(sandbox);
    // Four processes: the three servers and the forker's helper.
    const running = await eventually(
      () => processesMatching(token),
      (pids) => pids.length === 4,
      20_000,
    );
    expect(running).toHaveLength(4);
    await proxy.stderr.waitFor(/\[upstream:stubborn\] connected/, 20_000);

    expect(await proxy.stop()).toBe(0);
    expect(
      await eventually(
        () => processesMatching(token),
        (pids) => pids.length === 0,
        10_000,
      ),
    ).toEqual([]);
  });
});

describe("the proxy going away", () => {
  for (const how of ["SIGINT", "SIGHUP", "SIGTERM", "stdin EOF"] as const) {
    test(`on ${how} it exits and leaves no server or helper behind`, async () => {
      sandbox = scope.sandbox();
      const token = `bye-${crypto.randomUUID()}`;
      sandbox.writeConfig({
        mcpServers: {
          forker: fixtureEntry({ args: ["--spawn-helper", "--name", `${token}-forker`] }),
          stubborn: fixtureEntry({ args: ["--mode", "ignore-eof", "--name", `${token}-stubborn`] }),
        },
      });
      const child = Bun.spawn(
        [BINARY, "serve", "--config", sandbox.configPath, "--data-dir", sandbox.dataDir],
        { env: sandbox.env(), stdin: "pipe", stdout: "pipe", stderr: "pipe" },
      );
      const stderr = watchOutput(child.stderr);
      watchOutput(child.stdout);
      await stderr.waitFor(/2 of 2 servers indexed/, 20_000);
      expect(processesMatching(token)).toHaveLength(3);
      if (how === "stdin EOF") child.stdin.end();
      else child.kill(how);
      expect(await child.exited).toBe(0);
      expect(
        await eventually(
          () => processesMatching(token),
          (pids) => pids.length === 0,
          10_000,
        ),
      ).toEqual([]);
    });
  }
});
