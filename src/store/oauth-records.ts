import { describeError } from "../errors.ts";
import type { Logger } from "../log.ts";
import { OAUTH_REFRESH_LOCK_SPACE } from "./postgres/lock-keys.ts";
import type { SharedStore } from "./shared-store.ts";

/**
 * Upstream OAuth logins in the shared store (`mcpproxy.oauth_records`): one row per server, the
 * whole record (tokens, client registration, the server's URL) sealed with MCPPROXY_STORE_KEY for
 * `oauth:<server>`, so the database never holds a token in clear and a sealed record cannot be
 * moved to another server's row. A login on one machine (`mcpproxy auth login --store`) or a
 * refresh on one replica is a change of kind `oauth`: every replica reads that server's row again.
 *
 * The OAuth provider reads and writes its record synchronously (auth/oauth-store.ts), so each
 * replica keeps the records in memory: read whole at start, written through in order (`flush`
 * waits), re-read on another's change. A change heard while this replica's own write of the same
 * server is on its way is not read: that write lands after it and is the one every replica keeps.
 */
const OAUTH_CHANGE = "oauth";

export interface SharedOAuthRecords {
  /** The record kept for `server`, as it was put; undefined when there is none. */
  get(server: string): unknown;
  /** Keeps `record` for `server`: in memory at once, in the store in order. */
  put(server: string, record: unknown): void;
  /** Forgets `server`'s record; whether there was one. */
  remove(server: string): boolean;
  /**
   * Runs `work` (a token refresh) while holding `server`'s refresh lock, so replicas refresh one at a
   * time: the record is read from the store first (another may have refreshed it) and what `work`
   * wrote is in the store before the lock is let go. Without the store (PostgreSQL down) `work` runs
   * anyway: a replica keeps its upstreams logged in from memory.
   */
  exclusive(server: string, work: () => Promise<void>): Promise<void>;
  /** Waits for the writes made so far; rejects when the last of them failed. */
  flush(): Promise<void>;
  /** Stops hearing the other replicas' changes. */
  stop(): void;
}

/** How long a refresh waits for another replica's refresh of the same server (they take a second). */
const REFRESH_LOCK_WAIT_MS = 30_000;

/** What a server's login is sealed for (`store rekey` seals them again). */
export const oauthPurpose = (server: string) => `oauth:${server}`;

export async function openSharedOAuthRecords(
  store: SharedStore,
  logger: Logger,
): Promise<SharedOAuthRecords> {
  const { sql, key } = store;
  const records = new Map<string, unknown>();
  /** Own writes on their way, per server. */
  const pending = new Map<string, number>();
  let writes: Promise<void> = Promise.resolve();
  let lastFailure: unknown;

  const opened = (server: string, sealed: Uint8Array): unknown => {
    try {
      return JSON.parse(key.open(Buffer.from(sealed), oauthPurpose(server)).toString("utf8"));
    } catch (error) {
      logger.warn(
        `the shared store's OAuth login of ${server} cannot be read (${describeError(error)}): log in again`,
      );
      return undefined;
    }
  };
  const readOne = async (server: string) => {
    const [row] = await sql<{ sealed: Uint8Array }[]>`
      SELECT sealed FROM mcpproxy.oauth_records WHERE server = ${server}`;
    const record = row ? opened(server, row.sealed) : undefined;
    if (record === undefined) records.delete(server);
    else records.set(server, record);
  };
  for (const row of await sql<{ server: string; sealed: Uint8Array }[]>`
    SELECT server, sealed FROM mcpproxy.oauth_records`) {
    const record = opened(row.server, row.sealed);
    if (record !== undefined) records.set(row.server, record);
  }

  const write = (server: string, record: unknown) => {
    pending.set(server, (pending.get(server) ?? 0) + 1);
    writes = writes.then(async () => {
      try {
        await sql.begin(async (transaction) => {
          const tx = transaction as unknown as SharedStore["sql"];
          if (record === undefined) await tx`DELETE FROM mcpproxy.oauth_records WHERE server = ${server}`;
          else {
            const sealed = key.seal(Buffer.from(JSON.stringify(record)), oauthPurpose(server));
            await tx`
              INSERT INTO mcpproxy.oauth_records (server, sealed, updated_at) VALUES (${server}, ${sealed}, now())
              ON CONFLICT (server) DO UPDATE SET sealed = EXCLUDED.sealed, updated_at = now()`;
          }
          await store.recordChange(tx, OAUTH_CHANGE, { server });
        });
        lastFailure = undefined;
      } catch (error) {
        lastFailure = error;
        logger.error(
          `could not keep ${server}'s OAuth login in the shared store (${describeError(error)}): ` +
            "this replica uses it; the others will not until it is written again",
        );
      } finally {
        const left = (pending.get(server) ?? 1) - 1;
        if (left > 0) pending.set(server, left);
        else pending.delete(server);
      }
    });
  };

  const stopHearing = store.changes.on(OAUTH_CHANGE, async (change) => {
    const server = change.subject.server;
    if (change.isOwn || typeof server !== "string" || pending.has(server)) return;
    await readOne(server);
  });
  return {
    get: (server) => records.get(server),
    put(server, record) {
      records.set(server, record);
      write(server, record);
    },
    remove(server) {
      const had = records.delete(server);
      write(server, undefined);
      return had;
    },
    async exclusive(server, work) {
      // A session lock on a connection of its own (the pool's connections come and go), ended after.
      let connection: ReturnType<typeof store.connectAlone> | undefined;
      try {
        connection = store.connectAlone();
        const held = connection;
        const deadline = Date.now() + REFRESH_LOCK_WAIT_MS;
        for (;;) {
          const [row] = await held<{ locked: boolean }[]>`
            SELECT pg_try_advisory_lock(${OAUTH_REFRESH_LOCK_SPACE}, hashtext(${server})) AS locked`;
          if (row?.locked) break;
          if (Date.now() > deadline) throw new Error("another replica's refresh has held the lock for 30 s");
          await Bun.sleep(50);
        }
        await writes;
        await readOne(server);
      } catch (error) {
        await connection?.end({ timeout: 1 }).catch(() => {});
        connection = undefined;
        logger.warn(`refreshing ${server}'s OAuth token without the store's lock: ${describeError(error)}`);
      }
      try {
        await work();
        await writes;
      } finally {
        if (connection) {
          // Ending the session lets the lock go; the unlock says so at once where it can.
          await connection`SELECT pg_advisory_unlock(${OAUTH_REFRESH_LOCK_SPACE}, hashtext(${server}))`.catch(
            () => undefined,
          );
          await connection.end({ timeout: 1 }).catch(() => {});
        }
      }
    },
    async flush() {
      await writes;
      if (lastFailure !== undefined) throw lastFailure;
    },
    stop: stopHearing,
  };
}
