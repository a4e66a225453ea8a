import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { createLogger } from "../src/log.ts";
import { connectPostgres, type Sql } from "../src/store/postgres/connect.ts";
import { migrate } from "../src/store/postgres/migrations.ts";
import {
  type ChangeListener,
  recordChange,
  type StoreChange,
  startChangeListener,
} from "../src/store/postgres/store-changes.ts";
import { freshDatabase } from "./support/store-databases.ts";
import { startTcpGate } from "./support/tcp-gate.ts";
import {
  POSTGRES_MISSING,
  postgresBinDir,
  startTempPostgres,
  type TempPostgres,
} from "./support/temp-postgres.ts";

setDefaultTimeout(60_000);

/**
 * The change log (src/store/postgres/store-changes.ts) against a real PostgreSQL: what one
 * connection records reaches a listener on another, in order, once, also across a restart of
 * PostgreSQL; and the notice latency, measured and printed (no bound asserted).
 */
const hasPostgres = postgresBinDir() !== undefined;
if (!hasPostgres) process.stderr.write(POSTGRES_MISSING);

let pg: TempPostgres;
const open: Sql[] = [];
const listeners: ChangeListener[] = [];
const logger = createLogger({ level: "error" });

beforeAll(async () => {
  if (hasPostgres) pg = await startTempPostgres();
});
afterAll(async () => {
  for (const listener of listeners) await listener.stop();
  for (const sql of open) await sql.end({ timeout: 1 });
  await pg?.cleanup();
});

function connect(url: string): Sql {
  const sql = connectPostgres(url, { logger });
  open.push(sql);
  return sql;
}

/** A migrated database, a writer and a listener that collects what it is told (on its own pool). */
async function changeLog(options: { pollMs?: number; listenUrl?: (url: string) => string } = {}) {
  const url = await freshDatabase(pg);
  const writer = connect(url);
  await migrate(writer);
  const reader = connect(options.listenUrl?.(url) ?? url);
  const listener = await startChangeListener(reader, "replica-b", logger, {
    pollMs: options.pollMs ?? 60_000,
  });
  listeners.push(listener);
  const seen: StoreChange[] = [];
  listener.on("approval", (change) => {
    seen.push(change);
  });
  const record = (n: number, origin = "replica-a") =>
    writer.begin((tx) => recordChange(tx as unknown as Sql, origin, "approval", { n }));
  return { url, writer, listener, seen, record };
}

const until = async (holds: () => boolean, timeoutMs = 10_000) => {
  const deadline = Date.now() + timeoutMs;
  while (!holds() && Date.now() < deadline) await Bun.sleep(5);
  return holds();
};

describe.skipIf(!hasPostgres)("the change log", () => {
  test("changes recorded on one connection reach a listener on another, in order, each once, own ones marked", async () => {
    const { seen, record, listener } = await changeLog();
    for (let n = 1; n <= 50; n++) await record(n, n % 10 === 0 ? "replica-b" : "replica-a");
    expect(await until(() => seen.length >= 50)).toBe(true);
    await listener.catchUp();
    expect(seen.map((change) => change.subject.n)).toEqual(Array.from({ length: 50 }, (_, i) => i + 1));
    expect(seen.filter((change) => change.isOwn).map((change) => change.subject.n)).toEqual([
      10, 20, 30, 40, 50,
    ]);
    const ids = seen.map((change) => change.id);
    expect([...ids].sort((a, b) => a - b)).toEqual(ids);
    expect(listener.lastApplied()).toBe(ids.at(-1)!);
  });

  test("a change whose transaction commits after a later one's is still applied (ids in commit order)", async () => {
    const { writer, seen, record } = await changeLog();
    // The first transaction records its change and stays open while a second one records and commits.
    let commitFirst!: () => void;
    const held = new Promise<void>((resolve) => {
      commitFirst = resolve;
    });
    const first = writer.begin(async (tx) => {
      await recordChange(tx as unknown as Sql, "replica-a", "approval", { n: 1 });
      await held;
    });
    await Bun.sleep(100);
    const second = record(2);
    // Without the change-log lock the second commits now and the listener reads past the first's id.
    await Bun.sleep(300);
    commitFirst();
    await Promise.all([first, second]);
    expect(await until(() => seen.length >= 2)).toBe(true);
    await Bun.sleep(200);
    expect(seen.map((change) => change.subject.n)).toEqual([1, 2]);
  });

  test("a listener whose PostgreSQL restarted catches up on the changes made before it reconnected, each once", async () => {
    // The listener reaches PostgreSQL through a gate the test holds shut while it is away.
    const gate = startTcpGate({ host: "127.0.0.1", port: pg.port });
    try {
      const { seen, record } = await changeLog({
        listenUrl: (url) => url.replace(`:${pg.port}/`, `:${gate.port}/`),
      });
      await record(1);
      expect(await until(() => seen.length === 1)).toBe(true);
      gate.close();
      await pg.restart();
      // Made while the listener is cut off: no notification can reach it.
      for (let n = 2; n <= 6; n++) await record(n);
      await Bun.sleep(300);
      expect(seen).toHaveLength(1);
      gate.open();
      // The poll is a minute away: only the catch-up on reconnecting can bring these.
      expect(await until(() => seen.length >= 6, 15_000)).toBe(true);
      await record(7);
      expect(await until(() => seen.length >= 7)).toBe(true);
      await Bun.sleep(200);
      expect(seen.map((change) => change.subject.n)).toEqual([1, 2, 3, 4, 5, 6, 7]);
    } finally {
      gate.stop();
    }
  });

  test("a change whose handler lost the store is read again once it answers; a handler's own failure is skipped", async () => {
    const { listener, record } = await changeLog();
    const applied: string[] = [];
    const failures = { lost: 0, bug: 0 };
    let isStoreAway = true;
    listener.on("approval", (change) => {
      const n = String(change.subject.n);
      if (n === "1" && isStoreAway) {
        failures.lost++;
        throw Object.assign(new Error("read ECONNRESET"), { code: "ECONNRESET" });
      }
      if (n === "2") {
        failures.bug++;
        throw new Error("a bug in this handler");
      }
      applied.push(n);
    });
    await record(1);
    await listener.catchUp();
    expect(failures.lost).toBeGreaterThanOrEqual(1);
    expect(listener.lastApplied()).toBe(0);
    isStoreAway = false;
    await record(2);
    await record(3);
    await listener.catchUp();
    // 1 applied once it could be (not lost), 2 tried once (skipped, logged), then 3.
    expect(applied).toEqual(["1", "3"]);
    expect(failures.bug).toBe(1);
    expect(listener.lastApplied()).toBe(3);
  });

  test("notice latency over 200 changes (printed, not asserted)", async () => {
    const { seen, record } = await changeLog();
    const arrived: number[] = [];
    const latencies: number[] = [];
    for (let n = 0; n < 200; n++) {
      const before = seen.length;
      const start = performance.now();
      await record(n);
      await until(() => seen.length > before);
      arrived.push(seen.length);
      latencies.push(performance.now() - start);
    }
    expect(seen).toHaveLength(200);
    latencies.sort((a, b) => a - b);
    const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))]!;
    process.stderr.write(
      `change-log notice latency (commit + NOTIFY + read, 200 changes): p50 ${at(0.5).toFixed(1)} ms, ` +
        `p99 ${at(0.99).toFixed(1)} ms, max ${latencies.at(-1)!.toFixed(1)} ms\n`,
    );
  });
});
