import { describeError } from "../../errors.ts";
import type { Logger } from "../../log.ts";
import {
  normalizeValue,
  type RowValues,
  SHARED_TABLES,
  type SharedTable,
  sharedTable,
} from "../catalog-tables.ts";
import type { LocalCopy } from "../local-copy.ts";
import type { SharedStore } from "../shared-store.ts";
import type { Sql, Tx } from "./connect.ts";

/**
 * Keeps a replica's catalog.db and the shared store's catalog tables the same: at start it pulls
 * every row (or, on a store that holds none yet, seeds it from this data dir, so approvals made on
 * one machine survive the move to a team deployment); then it pushes what this replica writes (its
 * outbox, local-copy.ts) and pulls what the others write, announced as `catalog` changes.
 * PostgreSQL going away costs nothing but time: the outbox keeps local writes until a push
 * succeeds, and the change log brings what was missed.
 */
const CATALOG_CHANGE = "catalog";

/** How often the outbox is looked at: a local write reaches the store within this (plus the push). */
const PUSH_EVERY_MS = 250;
const BATCH = 500;

export interface CatalogReplica {
  /** Pushes the outbox now; resolves to how many rows went. */
  push(): Promise<number>;
  /** Applied rows pulled since start (a figure for tests and status). */
  pulledRows(): number;
  stop(): Promise<void>;
}

type Subject = { rows: [string, unknown[]][] };

const quoted = (table: SharedTable) => `mcpproxy.${table.name}`;
const columnsOf = (table: SharedTable) => table.columns.map(([column]) => column);

async function readTable(sql: Sql, table: SharedTable): Promise<RowValues[]> {
  const rows = await sql.unsafe(`SELECT ${columnsOf(table).join(", ")} FROM ${quoted(table)}`);
  return rows.map((row) => table.columns.map(([column, type]) => normalizeValue(row[column], type)));
}

/** The rows with these keys now, by key text; a key missing from the map was deleted. */
async function readRows(
  sql: Sql,
  table: SharedTable,
  keys: readonly unknown[][],
): Promise<Map<string, RowValues>> {
  const found = new Map<string, RowValues>();
  const width = table.key.length;
  // In slices: one statement per slice instead of one per row, and a bounded number of parameters.
  for (let start = 0; start < keys.length; start += 200) {
    const slice = keys.slice(start, start + 200);
    const tuples = slice.map((_, i) => `(${table.key.map((__, j) => `$${i * width + j + 1}`).join(", ")})`);
    const rows = await sql.unsafe(
      `SELECT ${columnsOf(table).join(", ")} FROM ${quoted(table)} WHERE (${table.key.join(", ")}) IN (${tuples.join(", ")})`,
      slice.flat() as never[],
    );
    for (const row of rows) {
      const values = table.columns.map(([column, type]) => normalizeValue(row[column], type));
      found.set(JSON.stringify(values.slice(0, width)), values);
    }
  }
  return found;
}

async function writeRow(tx: Tx, table: SharedTable, key: readonly unknown[], values: RowValues | undefined) {
  if (!values) {
    const where = table.key.map((column, i) => `${column} = $${i + 1}`).join(" AND ");
    await tx.unsafe(`DELETE FROM ${quoted(table)} WHERE ${where}`, key as never[]);
    return;
  }
  const columns = columnsOf(table);
  const updates = columns.filter((column) => !table.key.includes(column));
  await tx.unsafe(
    `INSERT INTO ${quoted(table)} (${columns.join(", ")}) VALUES (${columns.map((_, i) => `$${i + 1}`).join(", ")})
     ON CONFLICT (${table.key.join(", ")}) DO UPDATE SET ${updates.map((c) => `${c} = EXCLUDED.${c}`).join(", ")}`,
    values.map((value) => (value instanceof Uint8Array ? Buffer.from(value) : value)) as never[],
  );
}

/** Every shared table as the store has it at one moment (a read-only, repeatable-read transaction). */
async function readAllTables(store: SharedStore): Promise<Map<SharedTable, RowValues[]>> {
  const tables = await store.sql.begin("isolation level repeatable read read only", async (tx) => {
    const read = new Map<SharedTable, RowValues[]>();
    for (const table of SHARED_TABLES) read.set(table, await readTable(tx as unknown as Sql, table));
    return read;
  });
  return tables as Map<SharedTable, RowValues[]>;
}

/**
 * Copies the store's catalog into `local` as it is at one moment, for a command that reads it
 * (`search`, `tools`). Nothing is written to the store; resolves to the rows written locally.
 */
export async function pullCatalog(store: SharedStore, local: LocalCopy): Promise<number> {
  const mark = local.mark();
  return local.replaceAll(await readAllTables(store), mark);
}

export async function startCatalogReplica(
  store: SharedStore,
  local: LocalCopy,
  logger: Logger,
): Promise<CatalogReplica> {
  const { sql } = store;
  let pulled = 0;
  const isStoreEmpty = async () => {
    for (const table of SHARED_TABLES) {
      const [row] = await sql.unsafe(`SELECT 1 FROM ${quoted(table)} LIMIT 1`);
      if (row) return false;
    }
    return true;
  };
  if ((await isStoreEmpty()) && !local.isEmpty()) {
    const queued = local.queueAll();
    logger.info(`the shared store holds no catalog yet: seeding it from this data dir (${queued} rows)`);
  } else {
    // Marked before the read: a process beside this one (serve, when this is `approve`) may write
    // and push rows meanwhile, which the read may not show (local-copy.ts).
    const mark = local.mark();
    pulled += local.replaceAll(await readAllTables(store), mark);
  }

  let pushing: Promise<number> | undefined;
  const pushOnce = async (): Promise<number> => {
    let total = 0;
    for (;;) {
      const entries = local.outbox(BATCH);
      if (entries.length === 0) return total;
      const seen = new Set<string>();
      const rows: Subject["rows"] = [];
      await sql.begin(async (tx) => {
        for (const entry of entries) {
          const text = `${entry.table.name}\u0000${JSON.stringify(entry.key)}`;
          if (seen.has(text)) continue;
          seen.add(text);
          await writeRow(tx, entry.table, entry.key, local.row(entry.table, entry.key));
          rows.push([entry.table.name, entry.key]);
        }
        await store.recordChange(tx, CATALOG_CHANGE, { rows });
      });
      local.pushed(entries[entries.length - 1]?.seq ?? 0);
      total += rows.length;
    }
  };
  /** One push at a time; a failure is logged and the outbox kept for the next try. */
  const push = (): Promise<number> => {
    pushing ??= pushOnce()
      .catch((error) => {
        logger.warn(
          `pushing catalog changes to the shared store: ${describeError(error)} (kept; tried again)`,
        );
        return 0;
      })
      .finally(() => {
        pushing = undefined;
      });
    return pushing;
  };
  await push();
  const timer = setInterval(() => void push(), PUSH_EVERY_MS);
  timer.unref?.();

  const stopListening = store.changes.on(CATALOG_CHANGE, async (change) => {
    if (change.isOwn) return;
    const keysByTable = new Map<SharedTable, unknown[][]>();
    for (const [name, key] of (change.subject as Subject).rows ?? []) {
      const table = sharedTable(name);
      if (!table || !Array.isArray(key)) continue;
      keysByTable.set(table, [...(keysByTable.get(table) ?? []), key]);
    }
    const changes: Parameters<LocalCopy["apply"]>[0][number][] = [];
    const mark = local.mark();
    for (const [table, keys] of keysByTable) {
      const now = await readRows(sql, table, keys);
      for (const key of keys) changes.push({ table, key, values: now.get(JSON.stringify(key)) });
    }
    pulled += local.apply(changes, mark);
  });
  return {
    push,
    pulledRows: () => pulled,
    async stop() {
      clearInterval(timer);
      stopListening();
      await push();
    },
  };
}
