import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import net from "node:net";
import { connectPostgres } from "../src/store/postgres/connect.ts";
import { migrate, schemaStatus } from "../src/store/postgres/migrations.ts";
import {
  POSTGRES_MISSING,
  postgresBinDir,
  startTempPostgres,
  type TempPostgres,
} from "./support/temp-postgres.ts";

setDefaultTimeout(60_000);

/**
 * The store's client against connections that die at the worst moment. A connection cut right
 * after its start-up (PostgreSQL stopping while replicas reconnect) must fail the statement that
 * was waiting for it, and nothing else: an error no caller holds is an unhandled rejection, which
 * ends a `serve --store`. Under bun test such an error fails the test it happens in.
 */
const hasPostgres = postgresBinDir() !== undefined;
if (!hasPostgres) process.stderr.write(POSTGRES_MISSING);

let pg: TempPostgres;
beforeAll(async () => {
  if (hasPostgres) pg = await startTempPostgres();
});
afterAll(async () => {
  await pg?.cleanup();
});

/**
 * A TCP relay to PostgreSQL that cuts each connection when the client sends its first statement
 * after the server said it was ready (a simple or an extended query: 'Q' or 'P').
 */
async function cuttingRelay(port: number): Promise<{ url: string; cuts: () => number; close: () => void }> {
  let cuts = 0;
  const server = net.createServer((client) => {
    const upstream = net.connect(port, "127.0.0.1");
    let isReady = false;
    upstream.on("data", (chunk: Buffer) => {
      client.write(chunk);
      if (chunk.includes(Buffer.from([0x5a, 0, 0, 0, 5]))) isReady = true; // ReadyForQuery
    });
    client.on("data", (chunk: Buffer) => {
      if (isReady && (chunk[0] === 0x51 || chunk[0] === 0x50)) {
        cuts++;
        client.destroy();
        upstream.destroy();
        return;
      }
      upstream.write(chunk);
    });
    client.on("error", () => upstream.destroy());
    upstream.on("error", () => client.destroy());
    client.on("close", () => upstream.destroy());
    upstream.on("close", () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address() as net.AddressInfo;
  return {
    url: pg.url.replace(`:${pg.port}/`, `:${address.port}/`),
    cuts: () => cuts,
    close: () => server.close(),
  };
}

describe.skipIf(!hasPostgres)("the store's client", () => {
  test("a connection cut as its first statement goes out fails that statement, and leaves no error unheld", async () => {
    const relay = await cuttingRelay(pg.port);
    const sql = connectPostgres(relay.url, { max: 2 });
    try {
      for (let i = 0; i < 3; i++) {
        const error = await sql`SELECT 1 AS one`.then(
          () => undefined,
          (e: unknown) => e as { code?: string },
        );
        expect(error?.code).toBe("CONNECTION_CLOSED");
      }
      // Give an error no caller holds the time to surface (it would fail this test).
      await Bun.sleep(200);
      expect(relay.cuts()).toBe(3);
    } finally {
      await sql.end({ timeout: 1 }).catch(() => {});
      relay.close();
    }
  });

  test("migrations from clients that have not connected yet run once, one after the other (no reserved connection waits forever)", async () => {
    const clients = [connectPostgres(pg.url, { max: 2 }), connectPostgres(pg.url, { max: 2 })];
    try {
      const applied = await Promise.all(clients.map((client) => migrate(client)));
      const sorted = [...applied].sort((a, b) => b.length - a.length);
      const status = await schemaStatus(clients[0]!);
      expect(status.pending).toEqual([]);
      expect(sorted[0]).toEqual(status.applied.map((step) => step.version));
      expect(sorted[1]).toEqual([]);
      expect(await migrate(clients[0]!)).toEqual([]);
    } finally {
      await Promise.all(clients.map((client) => client.end({ timeout: 1 }).catch(() => {})));
    }
  });
});
