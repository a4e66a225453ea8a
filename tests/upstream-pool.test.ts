import { afterEach, describe, expect, setDefaultTimeout, setSystemTime, test } from "bun:test";
import { existsSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { HttpServerConfig, StdioServerConfig } from "../src/config/parse-server.ts";
import { silentLogger } from "../src/log.ts";
import { createClientPriority } from "../src/upstream/client-priority.ts";
import { DEFAULT_RETRY_POLICY } from "../src/upstream/restart-policy.ts";
import { createUpstreamPool, PAUSED_MESSAGE, type UpstreamPool } from "../src/upstream/upstream-pool.ts";
import { eventually, FIXTURE, FIXTURE_TOOLS, freePort, processesMatching, watchOutput } from "./helpers.ts";

setDefaultTimeout(30_000);

/** The upstream pool in process, against real fixture server processes. */

const pools: UpstreamPool[] = [];
afterEach(async () => {
  for (const pool of pools.splice(0)) await pool.close();
});

function fixtureServer(name: string, token: string, extraArgs: string[] = []): StdioServerConfig {
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

describe("restarts", () => {
  test("100 calls at once to a dead server start it again once", async () => {
    const token = `herd-${crypto.randomUUID()}`;
    const starts = join(tmpdir(), `${token}.log`);
    const pool = createUpstreamPool({
      servers: [{ ...fixtureServer("herd", token), env: { FIXTURE_START_LOG: starts } }],
      logger: silentLogger,
    });
    pools.push(pool);
    await pool.connectAll();
    process.kill(processesMatching(token)[0]!, "SIGKILL");
    await eventually(
      () => pool.status()[0]?.state,
      (state) => state === "failed",
      5_000,
    );
    const results = await Promise.all(
      Array.from({ length: 100 }, (_, i) => pool.callTool("herd", "echo", { message: `n${i}` })),
    );
    expect(results.map((result) => (result.content as { text: string }[])[0]?.text)).toEqual(
      Array.from({ length: 100 }, (_, i) => `${token} echo: n${i}`),
    );
    expect(readFileSync(starts, "utf8").trim().split("\n")).toHaveLength(2);
    rmSync(starts, { force: true });
  });

  test("a crash loop backs off, opens the circuit (calls fail at once, nothing is started), and status shows it", async () => {
    const token = `loop-${crypto.randomUUID()}`;
    const starts = join(tmpdir(), `${token}.log`);
    const startedAt = Date.now();
    const pool = createUpstreamPool({
      servers: [
        {
          ...fixtureServer("looping", token, ["--mode", "crash-after", "--after", "150"]),
          env: { FIXTURE_START_LOG: starts },
        },
      ],
      logger: silentLogger,
    });
    pools.push(pool);
    await pool.connectAll();
    pool.startRetrying({ initialDelayMs: 200, maxDelayMs: 60_000 });
    const startCount = () =>
      existsSync(starts) ? readFileSync(starts, "utf8").trim().split("\n").length : 0;
    // Each crash comes soon after a start, so each counts as a failure: the delays grow 100-200, 200-400, 400-800 ms…
    const status = await eventually(
      () => pool.status()[0]!,
      (s) => s.circuitOpen === true,
      10_000,
    );
    expect(status.state).toBe("failed");
    // It crashes 150 ms after it starts: after initialize, or (on a loaded machine) during it.
    expect(status.error).toMatch(/the connection closed|closed the connection during initialize/);
    expect(status.retryAt).toBeGreaterThan(startedAt);
    const before = startCount();
    const refused = await pool
      .callTool("looping", "echo", { message: "x" })
      .catch((error: Error) => error.message);
    expect(refused).toMatch(/^Server looping is down: its last \d+ starts failed/);
    expect(refused).toContain("The proxy tries it again at");
    expect(startCount()).toBe(before);
    // Two seconds: with a fixed 200 ms delay a loop would start 8 times or more; backing off, far fewer.
    await Bun.sleep(2_000);
    expect(startCount()).toBeLessThanOrEqual(before + 3);
    rmSync(starts, { force: true });
  });
});

describe("a server that stays down", () => {
  test("is retried with the usual backoff for ten minutes, then every 7.5-15 minutes, even after a restart on request", async () => {
    const token = `long-down-${crypto.randomUUID()}`;
    const pool = createUpstreamPool({
      servers: [fixtureServer("gone", token, ["--mode", "exit-on-init"])],
      logger: silentLogger,
    });
    pools.push(pool);
    const MINUTE = 60_000;
    // The clock stands still where it is set: each delay read below is the one the retry was scheduled with.
    const downAt = Date.now();
    const at = (ms: number) => setSystemTime(new Date(downAt + ms));
    const scheduled = () => {
      const status = pool.status()[0]!;
      expect(status.state).toBe("failed");
      return { delay: status.retryAt! - Date.now(), failures: status.failures };
    };
    const failAgain = () => pool.callTool("gone", "echo", { message: "x" }).catch(() => undefined);
    try {
      at(0);
      await pool.connectAll();
      pool.startRetrying(DEFAULT_RETRY_POLICY);
      const tries = [scheduled()];
      at(9.5 * MINUTE);
      await failAgain();
      tries.push(scheduled());
      at(10 * MINUTE);
      await failAgain();
      tries.push(scheduled());
      // A restart on request tries at once, and its failure does not bring back the short delays.
      at(40 * MINUTE);
      await pool.restart("gone");
      tries.push(scheduled());

      // One failure per try above, in order: no background try came in between.
      expect(tries.map(({ failures }) => failures)).toEqual([1, 2, 3, 1]);
      const [first, second, longDown, restarted] = tries.map(({ delay }) => delay);
      // Down less than ten minutes: 2.5-5 s, then 5-10 s, as before.
      expect(first).toBeGreaterThanOrEqual(2_500);
      expect(first).toBeLessThanOrEqual(5_000);
      expect(second).toBeGreaterThanOrEqual(5_000);
      expect(second).toBeLessThanOrEqual(10_000);
      // Down ten minutes: 7.5-15 min, at the third failure as at the first after a restart.
      for (const delay of [longDown, restarted]) {
        expect(delay).toBeGreaterThanOrEqual(7.5 * MINUTE);
        expect(delay).toBeLessThanOrEqual(15 * MINUTE);
      }
    } finally {
      setSystemTime();
    }
  });
});

describe("an HTTP server that is down", () => {
  test("is retried by a bare port check, without a client, while nothing listens, and connected once it is up", async () => {
    const port = await freePort();
    const web: HttpServerConfig = {
      name: "web",
      enabled: true,
      timeoutMs: 15_000,
      transport: "streamable-http",
      url: `http://127.0.0.1:${port}/mcp`,
      headers: {},
    };
    const pool = createUpstreamPool({ servers: [web], logger: silentLogger });
    pools.push(pool);
    await pool.connectAll();
    pool.startRetrying({ initialDelayMs: 100, maxDelayMs: 100 });
    const first = pool.status()[0]!;
    expect(first.state).toBe("failed");
    expect(first.failures).toBe(1);
    // The first start takes the full way: its error is the client's own.
    expect(first.error).toContain("ECONNREFUSED");
    expect(first.error).not.toContain("nothing accepts connections");
    const retried = await eventually(
      () => pool.status()[0]!,
      (status) => (status.failures ?? 0) >= 3,
      20_000,
    );
    // Each retry ended at the port check, before any client was built (whose error would read otherwise).
    expect(retried.state).toBe("failed");
    expect(retried.error).toContain(`ECONNREFUSED: nothing accepts connections at 127.0.0.1:${port}`);
    const child = Bun.spawn([process.execPath, FIXTURE, "--http", String(port), "--name", "web"], {
      stdout: "pipe",
      stderr: "ignore",
    });
    try {
      await watchOutput(child.stdout).waitFor(/\{"port":(\d+)\}/, 10_000);
      const back = await eventually(
        () => pool.status()[0]!,
        (status) => status.state === "connected",
        20_000,
      );
      expect(back.state).toBe("connected");
      expect(back.toolCount).toBe(FIXTURE_TOOLS);
      expect(back.error).toBeUndefined();
      const result = await pool.callTool("web", "echo", { message: "back" });
      expect(result.content).toEqual([{ type: "text", text: "web echo: back" }]);
    } finally {
      await pool.close();
      child.kill();
      await child.exited;
    }
  });
});

describe("lazy servers", () => {
  test("are not started until a call needs them", async () => {
    const token = `lazy-${crypto.randomUUID()}`;
    const pool = createUpstreamPool({
      servers: [{ ...fixtureServer("sleepy", token), lazy: true }],
      logger: silentLogger,
    });
    pools.push(pool);
    expect(await pool.connectAll()).toEqual([]);
    expect(pool.status()[0]?.state).toBe("configured");
    expect(processesMatching(token)).toEqual([]);
    const result = await pool.callTool("sleepy", "echo", { message: "wake up" });
    expect(result.content).toEqual([{ type: "text", text: `${token} echo: wake up` }]);
    expect(pool.status()[0]?.state).toBe("connected");
    expect(processesMatching(token)).toHaveLength(1);
  });
});

describe("what the pool keeps of its servers' states", () => {
  test("which servers are still connecting, in the config's order, and a failed one's error redacted as stored", async () => {
    const token = `states-${crypto.randomUUID()}`;
    const secret = "ghp_abcdefghijklmnopqrstuvwxyz0123456789AB";
    const pool = createUpstreamPool({
      servers: [
        { ...fixtureServer("a-slow", `${token}-a`, ["--mode", "hang"]), timeoutMs: 60_000 },
        {
          ...fixtureServer("b-broken", `${token}-b`, ["--mode", "exit-on-init"]),
          env: { FIXTURE_FATAL: `login refused for token ${secret}` },
        },
        fixtureServer("c-up", `${token}-c`),
        { ...fixtureServer("d-slow", `${token}-d`, ["--mode", "hang"]), timeoutMs: 60_000 },
      ],
      logger: silentLogger,
    });
    pools.push(pool);
    expect(pool.connecting()).toEqual(["a-slow", "b-broken", "c-up", "d-slow"]);
    expect(pool.isStarting()).toBe(true);
    void pool.connectAll();
    await eventually(
      () => pool.connecting(),
      (names) => names.length === 2,
      20_000,
    );
    expect(pool.connecting()).toEqual(["a-slow", "d-slow"]);
    expect(pool.live().map(({ server }) => server)).toEqual(["c-up"]);
    const broken = pool.status().find((status) => status.name === "b-broken")!;
    expect(broken.state).toBe("failed");
    expect(broken.error).toContain("[REDACTED:github-token]");
    expect(JSON.stringify(pool.status())).not.toContain(secret);
    // What a call to it says is the stored text too, never the secret.
    const refused = await pool.callTool("b-broken", "echo", { message: "x" }).catch((e: Error) => e.message);
    expect(refused).not.toContain(secret);
  });
});

describe("the first pass while clients ask", () => {
  test("keeps only the busy share of connects in flight, and a connect held back ends with the pool", async () => {
    const token = `priority-${crypto.randomUUID()}`;
    const clientPriority = createClientPriority({ busyConcurrency: 2, quietMs: 60_000 });
    const names = ["a", "b", "c", "d", "e"];
    const pool = createUpstreamPool({
      servers: names.map((name) => ({
        ...fixtureServer(name, `${token}-${name}`, ["--mode", "hang"]),
        timeoutMs: 60_000,
      })),
      logger: silentLogger,
      clientPriority,
    });
    pools.push(pool);
    clientPriority.requested();
    const connecting = pool.connectAll();
    await eventually(
      () => processesMatching(token),
      (pids) => pids.length === 2,
      10_000,
    );
    await Bun.sleep(300);
    // Two started (the others wait for the clients to be quiet), not all five.
    expect(processesMatching(token)).toHaveLength(2);
    const closing = performance.now();
    await pool.close();
    const outcomes = await connecting;
    expect(performance.now() - closing).toBeLessThan(10_000);
    expect(outcomes.filter((outcome) => outcome.stopped)).toHaveLength(5);
  });
});

describe("a pool paused by a person", () => {
  test("refuses calls and forwarded requests and offers no lane, while its servers keep running", async () => {
    const token = `paused-${crypto.randomUUID()}`;
    const pool = createUpstreamPool({ servers: [fixtureServer("fx", token)], logger: silentLogger });
    pools.push(pool);
    await pool.connectAll();
    const [pid] = processesMatching(token);
    expect(pool.laneTo("fx")).toBeDefined();
    pool.setPaused(true);
    expect(pool.isPaused()).toBe(true);
    await expect(pool.callTool("fx", "echo", { message: "x" })).rejects.toThrow(PAUSED_MESSAGE);
    await expect(pool.forward("fx", "prompts/get", { name: "p" })).rejects.toThrow(PAUSED_MESSAGE);
    expect(pool.laneTo("fx")).toBeUndefined();
    // Nothing was stopped: the same process answers once resumed.
    expect(processesMatching(token)).toEqual([pid!]);
    pool.setPaused(false);
    const result = await pool.callTool("fx", "echo", { message: "back" });
    expect(result.content).toEqual([{ type: "text", text: `${token} echo: back` }]);
  });
});
