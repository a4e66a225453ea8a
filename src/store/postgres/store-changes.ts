import { describeError } from "../../errors.ts";
import type { Logger } from "../../log.ts";
import { isStoreUnreachable, type Sql, type Tx } from "./connect.ts";
import { LOCKS, MCPPROXY_LOCK_SPACE } from "./lock-keys.ts";

/**
 * How a change made on one replica reaches the others: the change is a row of `mcpproxy.changes`
 * written in the same transaction as the change itself, and that transaction sends NOTIFY with the
 * row's id (delivered at commit, so never before the data is visible). Every replica LISTENs; on a
 * notification, and whenever its listening connection comes back (PostgreSQL restarted, the
 * network dropped), it reads every change after the last one it applied, in order. A lost
 * notification therefore delays a change until the next one or the next reconnect, never loses it;
 * `poll` covers a quiet store as well.
 */
const CHANGES_CHANNEL = "mcpproxy_changes";

export interface StoreChange {
  id: number;
  kind: string;
  subject: Record<string, unknown>;
  /** The replica that made it. */
  origin: string;
  /** This replica made it (it applied it already). */
  isOwn: boolean;
}

type ChangeHandler = (change: StoreChange) => void | Promise<void>;

/**
 * Records a change inside the caller's transaction (`tx`) and notifies at its commit. It holds the
 * change-log lock until that commit, so record the change as the transaction's last step.
 */
export async function recordChange(
  tx: Sql | Tx,
  origin: string,
  kind: string,
  subject: Record<string, unknown>,
): Promise<number> {
  // Without the lock, a transaction that took id 5 and commits after the one with id 6 would be
  // skipped by a reader that had already read 6.
  await tx`SELECT pg_advisory_xact_lock(${MCPPROXY_LOCK_SPACE}, ${LOCKS.changes})`;
  const [row] = await tx<{ id: string }[]>`
    INSERT INTO mcpproxy.changes (kind, subject, origin) VALUES (${kind}, ${tx.json(subject as never)}, ${origin})
    RETURNING id`;
  const id = Number(row?.id);
  await tx`SELECT pg_notify(${CHANGES_CHANNEL}, ${String(id)})`;
  return id;
}

export interface ChangeListener {
  /** Handlers run in change order, one change at a time; a throwing handler is logged, not retried. */
  on(kind: string, handler: ChangeHandler): () => void;
  /** Reads what is new now (also what the listener does on every notification). */
  catchUp(): Promise<void>;
  /** The id of the last change applied. */
  lastApplied(): number;
  stop(): Promise<void>;
}

/** How often a replica looks for changes when no notification came (a missed one, a quiet store). */
const POLL_MS = 5_000;

export async function startChangeListener(
  sql: Sql,
  replicaId: string,
  logger: Logger,
  options: { pollMs?: number } = {},
): Promise<ChangeListener> {
  const handlers = new Map<string, Set<ChangeHandler>>();
  const [top] = await sql<{ id: string | null }[]>`SELECT max(id) AS id FROM mcpproxy.changes`;
  let applied = Number(top?.id ?? 0);
  let running: Promise<void> | undefined;
  let again = false;
  let isStopped = false;

  const readNew = async () => {
    for (;;) {
      const rows = await sql<
        { id: string; kind: string; subject: Record<string, unknown>; origin: string }[]
      >`
        SELECT id, kind, subject, origin FROM mcpproxy.changes WHERE id > ${applied} ORDER BY id LIMIT 500`;
      for (const row of rows) {
        const change: StoreChange = {
          id: Number(row.id),
          kind: row.kind,
          subject: row.subject,
          origin: row.origin,
          isOwn: row.origin === replicaId,
        };
        for (const handler of handlers.get(row.kind) ?? []) {
          try {
            await handler(change);
          } catch (error) {
            // The store went away while the change was applied: it is read again once the store
            // answers (catchUp says so, and the next notice or poll reads from this change on).
            if (isStoreUnreachable(error)) throw error;
            logger.error(
              `applying the store's change ${change.id} (${change.kind}): ${describeError(error)}`,
            );
          }
        }
        applied = change.id;
      }
      if (rows.length < 500) return;
    }
  };
  /** One reader at a time; a notification during a read makes it read once more. */
  const catchUp = async (): Promise<void> => {
    if (isStopped) return;
    if (running) {
      again = true;
      return running;
    }
    running = (async () => {
      try {
        do {
          again = false;
          await readNew();
        } while (again && !isStopped);
      } catch (error) {
        logger.warn(`reading the store's changes: ${describeError(error)} (tried again on the next notice)`);
      } finally {
        running = undefined;
      }
    })();
    return running;
  };

  const subscription = await sql.listen(
    CHANGES_CHANNEL,
    () => void catchUp(),
    // Also called after every reconnect of the listening connection: what was missed is read then.
    () => void catchUp(),
  );
  const poll = setInterval(() => void catchUp(), options.pollMs ?? POLL_MS);
  poll.unref?.();
  return {
    on(kind, handler) {
      const set = handlers.get(kind) ?? new Set<ChangeHandler>();
      handlers.set(kind, set);
      set.add(handler);
      return () => set.delete(handler);
    },
    catchUp,
    lastApplied: () => applied,
    async stop() {
      isStopped = true;
      clearInterval(poll);
      await subscription.unlisten().catch(() => {});
      await running;
    },
  };
}
