import { describeError } from "../../errors.ts";
import type { Logger } from "../../log.ts";
import type { SharedStore } from "../shared-store.ts";
import type { WriterLock } from "../sqlite/writer-lock.ts";
import { LOCKS, MCPPROXY_LOCK_SPACE } from "./lock-keys.ts";

/**
 * The lease of a team deployment: which replica indexes servers into the shared catalog, takes
 * `mcpproxy index` requests and writes what is found once for all. It is a PostgreSQL advisory lock
 * held by a connection of its own: when that replica dies, its connection closes, the lock is free,
 * and another replica takes it within a second (the index keeper tries every second,
 * index-keeper.ts) and indexes. It is the data dir's writer lock (writer-lock.ts) of a team: a
 * replica holds the lease only while it also holds its own data dir.
 */
export interface StoreLease extends WriterLock {
  /** Waits for one attempt to take the lease (at start, before the catalog is opened). */
  tryAcquireNow(): Promise<boolean>;
}

/** How often the holder checks that its lock's session is still there. */
const LEASE_CHECK_MS = 1_000;

export async function openStoreLease(
  store: SharedStore,
  local: WriterLock,
  logger: Logger,
): Promise<StoreLease> {
  // The client reconnects by itself after a restart of PostgreSQL: a new session, without the lock.
  // So the holder asks whether its session holds it, not merely whether a query works.
  const sql = store.connectAlone();
  let isLeaseHeld = false;
  let attempt: Promise<boolean> | undefined;
  let isReleased = false;
  /** This replica took the lease once, and its catalog is open for writing since. */
  let isWriter = false;
  let isLostSaid = false;

  const take = async (): Promise<boolean> => {
    if (isReleased || !local.isHeld) return false;
    const [row] = await sql<{ ok: boolean }[]>`
      SELECT pg_try_advisory_lock(${MCPPROXY_LOCK_SPACE}, ${LOCKS.lease}) AS ok`;
    isLeaseHeld = row?.ok === true;
    return isLeaseHeld;
  };
  const stillHeld = async (): Promise<boolean> => {
    const [row] = await sql<{ held: boolean }[]>`
      SELECT EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid()
        AND classid = ${MCPPROXY_LOCK_SPACE} AND objid = ${LOCKS.lease} AND granted) AS held`;
    return row?.held === true;
  };
  const held = () => {
    if (local.isHeld && isLeaseHeld) isWriter = true;
    return local.isHeld && isWriter;
  };
  const tryAcquireNow = (): Promise<boolean> => {
    attempt ??= take()
      .then((ok) => ok && held())
      .catch((error) => {
        logger.warn(`taking the shared store's lease: ${describeError(error)}`);
        return false;
      })
      .finally(() => {
        attempt = undefined;
      });
    return attempt;
  };
  // When PostgreSQL restarts the lock is gone with the session, and the holder takes it again as
  // soon as it can (the others try only every second, so it usually wins). If another replica took
  // it meanwhile, both write the catalog until this one restarts: their writes are the same rows of
  // the same servers, so that costs work, not correctness, and it is said once.
  const check = setInterval(async () => {
    if (!isWriter || isReleased || attempt) return;
    try {
      if (await stillHeld()) return;
      isLeaseHeld = false;
      if (!(await take()) && !isReleased && !isLostSaid) {
        isLostSaid = true;
        logger.warn(
          "lost the shared store's lease when PostgreSQL went away, and another replica holds it now",
        );
      }
    } catch {
      isLeaseHeld = false; // PostgreSQL is still away: the next check tries again
    }
  }, LEASE_CHECK_MS);
  check.unref?.();

  return {
    get isHeld() {
      return held();
    },
    tryAcquire() {
      if (held()) return true;
      if (!local.isHeld && !local.tryAcquire()) return false;
      void tryAcquireNow();
      return false;
    },
    tryAcquireNow,
    holder: () => undefined,
    release() {
      isReleased = true;
      clearInterval(check);
      // Ending the session frees the lock; the unlock first says so at once where it can.
      void sql`SELECT pg_advisory_unlock_all()`
        .catch(() => {})
        .finally(() => sql.end({ timeout: 1 }).catch(() => {}));
      local.release();
    },
  };
}
