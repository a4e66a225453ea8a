import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { createLogger } from "../src/log.ts";
import { seedRegistry, serverRegistryOf } from "../src/store/server-registry.ts";
import { openSharedStore, type SharedStore } from "../src/store/shared-store.ts";
import { freshDatabase, STORE_KEY } from "./support/store-replicas.ts";
import {
  POSTGRES_MISSING,
  postgresBinDir,
  startTempPostgres,
  type TempPostgres,
} from "./support/temp-postgres.ts";

// A loaded 2-core machine can be slow without anything being wrong: a generous bound, not 5 s.
setDefaultTimeout(60_000);

/**
 * seedRegistry and the registry's edits, in process against a real PostgreSQL: what `mcpproxy store
 * init` and the first replica rely on (seeded once, never over servers the store has), and the
 * edits' lock (many at once, from several connections, none lost).
 */
const hasPostgres = postgresBinDir() !== undefined;
if (!hasPostgres) process.stderr.write(POSTGRES_MISSING);

describe.skipIf(!hasPostgres)("the server registry", () => {
  let pg: TempPostgres;
  const stores: SharedStore[] = [];
  const open = async (url: string) => {
    const store = await openSharedStore({
      url,
      shown: url,
      env: { MCPPROXY_STORE_KEY: STORE_KEY },
      logger: createLogger({ level: "error" }),
    });
    stores.push(store);
    return store;
  };

  beforeAll(async () => {
    pg = await startTempPostgres();
  }, 30_000);
  afterAll(async () => {
    await Promise.all(stores.map((store) => store.close()));
    await pg?.cleanup();
  });

  test("replicas seeding at once seed an empty registry once; a registry with servers is never seeded over", async () => {
    const url = await freshDatabase(pg.url, "seeding");
    const [a, b, c] = await Promise.all([open(url), open(url), open(url)]);
    const seeded = await Promise.all([
      seedRegistry(a!, { one: { command: "a" }, two: { url: "http://127.0.0.1:1/mcp" } }),
      seedRegistry(b!, { other: { command: "b" } }),
      seedRegistry(c!, { third: { command: "c" } }),
    ]);
    expect(seeded.filter((count) => count > 0)).toHaveLength(1);
    const winner = await serverRegistryOf(a!).list();
    expect([["one", "two"], ["other"], ["third"]]).toContainEqual(Object.keys(winner).sort());
    expect(await seedRegistry(a!, { late: { command: "late" } })).toBe(0);
    expect(await serverRegistryOf(c!).list()).toEqual(winner);
  }, 30_000);

  test("edits planned under the lock: 40 concurrent increments from 4 connections all land, each heard by the others", async () => {
    const url = await freshDatabase(pg.url, "editing");
    const connections = await Promise.all([0, 1, 2, 3].map(() => open(url)));
    await seedRegistry(connections[0]!, { counter: { command: "x", timeoutMs: 0 } });
    await connections[3]!.changes.catchUp(); // the seed heard before listening
    const heard: string[][] = [];
    const stop = serverRegistryOf(connections[3]!).onChange((names) => {
      heard.push([...names]);
    });
    await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        serverRegistryOf(connections[i % 4]!).edit(
          (current) => [
            {
              name: "counter",
              entry: { ...current.counter, timeoutMs: Number(current.counter?.timeoutMs) + 1 },
            },
          ],
          { by: `edit ${i}` },
        ),
      ),
    );
    expect((await serverRegistryOf(connections[1]!).list()).counter).toEqual({ command: "x", timeoutMs: 40 });
    await connections[3]!.changes.catchUp();
    // Its own 10 edits are not handed back to it; the other 30 are, in order.
    expect(heard).toHaveLength(30);
    expect(heard.every((names) => names.length === 1 && names[0] === "counter")).toBe(true);
    stop();
  }, 30_000);

  test("an edit that does not validate writes nothing and announces nothing", async () => {
    const url = await freshDatabase(pg.url, "refusing");
    const store = await open(url);
    await seedRegistry(store, { kept: { command: "x" } });
    await store.changes.catchUp();
    const before = store.changes.lastApplied();
    const registry = serverRegistryOf(store);
    await expect(
      registry.edit(() => [{ name: "kept", entry: undefined }], {
        by: "test",
        validate: () => {
          throw new Error("not valid");
        },
      }),
    ).rejects.toThrow("not valid");
    expect(Object.keys(await registry.list())).toEqual(["kept"]);
    await store.changes.catchUp();
    expect(store.changes.lastApplied()).toBe(before);
  }, 30_000);
});
