import { describeError } from "../../errors.ts";
import type { WriterLock } from "../../index/writer-lock.ts";
import type { Logger } from "../../log.ts";
import type { SharedStore } from "../shared-store.ts";
import { LOCKS, MCPPROXY_LOCK_SPACE } from "./lock-keys.ts";

/**
 * The lease of a team deployment: which replica indexes servers into the shared catalog, takes
 * `mcpproxy index` requests and writes what is found once for all. It is a PostgreSQL advisory lock
 * held by one connection kept for the purpose: when that replica dies, its connection closes, the
 * lock is free, and another replica takes it within a second (the index keeper tries every second,
 * index-keeper.ts) and indexes. It is the data dir's writer lock (writer-lock.ts) of a team: a
 * replica holds the lease only while it also holds its own data dir.
 */
export interface StoreLease extends WriterLock {
  /** Waits for one attempt to take the lease (at start, before the catalog is opened). */
  tryAcquireNow(): Promise<boolean>;
}

/** How often the holder checks that its lock's connection is still there. */
export const LEASE_CHECK_MS = 1_000;

export async function openStoreLease(
  store: SharedStore,
  local: WriterLock,
  logger: Logger,
): Promise<StoreLease> {
  let connection: Awaited<ReturnType<SharedStore["sql"]["reserve"]>> | undefined;
  let isLeaseHeld = false;
  let attempt: Promise<boolean> | undefined;
  let isReleased = false;

  const take = async (): Promise<boolean> => {
    if (isReleased || !local.isHeld) return false;
    connection ??= await store.sql.reserve();
    const [row] = await connection<{ ok: boolean }[]>`
      SELECT pg_try_advisory_lock(${MCPPROXY_LOCK_SPACE}, ${LOCKS.lease}) AS ok`;
    isLeaseHeld = row?.ok === true;
    return isLeaseHeld;
  };
  const tryAcquireNow = (): Promise<boolean> => {
    attempt ??= take()
      .then((ok) => ok && held())
      .catch((error) => {
        logger.warn(`taking the shared store's lease: ${describeError(error)}`);
        connection?.release();
        connection = undefined;
        return false;
      })
      .finally(() => {
        attempt = undefined;
      });
    return attempt;
  };
  // The lock lives as long as its connection: when PostgreSQL restarts it is gone, and the holder
  // takes it again as soon as it can (the others try only every second, so it usually wins). If
  // another replica took it meanwhile, both write the catalog until this one restarts: their writes
  // are the same rows of the same servers, so that costs work, not correctness, and it is said once.
  /** This replica took the lease once, and its catalog is open for writing since. */
  let isWriter = false;
  let isLostSaid = false;
  const check = setInterval(async () => {
    if (!isWriter || isReleased || attempt) return;
    try {
      if (isLeaseHeld && connection) {
        await connection`SELECT 1`;
        return;
      }
    } catch {
      connection?.release();
      connection = undefined;
      isLeaseHeld = false;
    }
    try {
      if (!(await take()) && !isLostSaid) {
        isLostSaid = true;
        logger.warn(
          "lost the shared store's lease when PostgreSQL went away, and another replica holds it now",
        );
      }
    } catch {
      connection?.release();
      connection = undefined; // PostgreSQL is still away: the next tick tries again
    }
  }, LEASE_CHECK_MS);
  check.unref?.();
  const held = () => {
    if (local.isHeld && isLeaseHeld) isWriter = true;
    return local.isHeld && isWriter;
  };

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
      if (connection) {
        const held = connection;
        connection = undefined;
        void held`SELECT pg_advisory_unlock(${MCPPROXY_LOCK_SPACE}, ${LOCKS.lease})`
          .catch(() => {})
          .finally(() => held.release());
      }
      local.release();
    },
  };
}
