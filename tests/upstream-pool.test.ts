import { afterEach, describe, expect, setDefaultTimeout, test } from "bun:test";
import type { ServerConfig } from "../src/config/parse-server.ts";
import { silentLogger } from "../src/log.ts";
import { createUpstreamPool, type UpstreamPool } from "../src/upstream/upstream-pool.ts";
import { eventually, FIXTURE, processesMatching } from "./helpers.ts";

setDefaultTimeout(30_000);

/** The upstream pool in process, against real fixture server processes. */

const pools: UpstreamPool[] = [];
afterEach(async () => {
  for (const pool of pools.splice(0)) await pool.close();
});

function fixtureServer(name: string, token: string, extraArgs: string[] = []): ServerConfig {
  return {
    name,
    enabled: true,
    timeoutMs: 15_000,
    transport: "stdio",
    command: process.execPath,
    args: [FIXTURE, "--name", token, ...extraArgs],
    env: {},
  };
}

describe("one live process per server", () => {
  test("a child killed with calls in flight is started again exactly once, whatever path reconnects it", async () => {
    const token = `single-${crypto.randomUUID()}`;
    const pool = createUpstreamPool({ servers: [fixtureServer("memory", token)], logger: silentLogger });
    pools.push(pool);
    await pool.connectAll();
    // The background retry fires after the on-demand reconnect below has finished: the race that
    // started a second copy.
    pool.startRetrying({ initialDelayMs: 1_500, maxDelayMs: 1_500 });
    const [pid] = processesMatching(token);
    expect(pid).toBeNumber();

    const inFlight = [1, 2, 3].map(() =>
      pool.callTool("memory", "sleep_then_answer", { ms: 20_000 }).then(
        () => "answered",
        (error: Error) => error.message,
      ),
    );
    await Bun.sleep(200);
    process.kill(pid!, "SIGKILL");
    // Each call in flight gets an error at once, not at a timeout.
    for (const outcome of await Promise.all(inFlight)) expect(outcome).toMatch(/Connection closed/);

    const calls = await Promise.all(
      [1, 2, 3, 4].map((i) => pool.callTool("memory", "echo", { message: `after ${i}` })),
    );
    expect(calls.map((result) => result.content)).toEqual(
      [1, 2, 3, 4].map((i) => [{ type: "text", text: `${token} echo: after ${i}` }]),
    );
    await Bun.sleep(2_500);
    expect(processesMatching(token)).toHaveLength(1);
    expect(pool.status()[0]?.state).toBe("connected");
  });

  test("closing the pool stops a server that is still starting", async () => {
    const token = `starting-${crypto.randomUUID()}`;
    const pool = createUpstreamPool({
      servers: [fixtureServer("slow", token, ["--mode", "hang"])],
      logger: silentLogger,
    });
    const connecting = pool.connectAll();
    expect(
      await eventually(
        () => processesMatching(token),
        (pids) => pids.length === 1,
        10_000,
      ),
    ).toHaveLength(1);
    await pool.close();
    const [outcome] = await connecting;
    expect(outcome?.error).toContain("shutting down");
    expect(processesMatching(token)).toEqual([]);
  });
});
