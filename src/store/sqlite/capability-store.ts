import type { Database } from "bun:sqlite";

/**
 * What the catalog keeps of a server's capabilities besides tools, in the same SQLite file: the
 * prompts and resource templates it listed last (definition and hash), and the ones approved (the
 * definition approved, for the diff `approve` shows). A row with an empty name records a kind
 * reviewed as a whole: the server's first listing of it accepted on first sight, or, for kind
 * `server`, the person's approval of a server held as a whole.
 */
export type CapabilityKind = "prompt" | "template" | "server";

export interface CapabilityRow {
  server: string;
  kind: CapabilityKind;
  name: string;
  hash: string;
}

export interface StoredCapability extends CapabilityRow {
  definition: Record<string, unknown>;
}

export interface CapabilityStore {
  /** Replaces what the server listed of one kind with `items`. */
  putListed(server: string, kind: CapabilityKind, items: readonly StoredCapability[]): void;
  /** Everything listed last, with definitions (for `approve`). */
  listed(): StoredCapability[];
  approvals(): CapabilityRow[];
  approvedDefinition(server: string, kind: CapabilityKind, name: string): Record<string, unknown> | undefined;
  approve(items: readonly (CapabilityRow & { definition?: Record<string, unknown> | undefined })[]): void;
  /** Drops what is kept of the servers not in `keep`; returns how many servers lost something. */
  forgetExcept(keep: ReadonlySet<string>): number;
  /**
   * Changes when what is listed or approved may have changed: this store wrote, or another process
   * (`mcpproxy approve`) committed to the catalog (SQLite's data_version). Cheap: one pragma.
   */
  version(): string;
}

export function createCapabilitySchema(db: Database): void {
  db.exec(`CREATE TABLE IF NOT EXISTS capabilities (
      server TEXT NOT NULL, kind TEXT NOT NULL, name TEXT NOT NULL, hash TEXT NOT NULL,
      definition TEXT NOT NULL, PRIMARY KEY (server, kind, name));
    CREATE TABLE IF NOT EXISTS capability_approvals (
      server TEXT NOT NULL, kind TEXT NOT NULL, name TEXT NOT NULL, hash TEXT NOT NULL,
      definition TEXT, approved_at INTEGER NOT NULL, PRIMARY KEY (server, kind, name));`);
}

/**
 * `writable`: what is listed is written; `approvalsWritable`: approvals are. What may not be
 * written (a read-only catalog) is kept in memory for the life of the process.
 */
export function openCapabilityStore(
  db: Database,
  options: { writable: boolean; approvalsWritable: boolean },
): CapabilityStore {
  const hasTables = () =>
    Boolean(db.query("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'capabilities'").get());
  if (options.approvalsWritable && !hasTables()) createCapabilitySchema(db);
  const isStored = hasTables();
  const memoryListed = new Map<string, StoredCapability>();
  const memoryApprovals = new Map<string, CapabilityRow & { definition?: Record<string, unknown> }>();
  const key = (row: { server: string; kind: string; name: string }) =>
    `${row.server}\u0000${row.kind}\u0000${row.name}`;
  const parse = (text: string | null) =>
    text === null ? undefined : (JSON.parse(text) as Record<string, unknown>);

  const storedListed = (): StoredCapability[] =>
    isStored
      ? db
          .query<CapabilityRow & { definition: string }, []>(
            "SELECT server, kind, name, hash, definition FROM capabilities ORDER BY server, kind, name",
          )
          .all()
          .map((row) => ({ ...row, definition: parse(row.definition)! }))
      : [];
  const storedApprovals = (): (CapabilityRow & { definition?: Record<string, unknown> })[] =>
    isStored
      ? db
          .query<CapabilityRow & { definition: string | null }, []>(
            "SELECT server, kind, name, hash, definition FROM capability_approvals",
          )
          .all()
          .map((row) => ({ ...row, definition: parse(row.definition) }))
      : [];
  const withMemory = <T extends { server: string; kind: string; name: string }>(
    stored: T[],
    memory: Map<string, T>,
    isReplaced?: (row: T) => boolean,
  ) => {
    const out = new Map(stored.filter((row) => !isReplaced?.(row)).map((row) => [key(row), row]));
    for (const [k, row] of memory) out.set(k, row);
    return [...out.values()];
  };
  const replacedKinds = new Set<string>();
  /** Writes made through this store (in the file or in memory). */
  let writes = 0;

  return {
    putListed(server, kind, items) {
      writes++;
      if (options.writable && isStored) {
        db.transaction(() => {
          db.run("DELETE FROM capabilities WHERE server = ? AND kind = ?", [server, kind]);
          const insert = db.prepare(
            "INSERT OR REPLACE INTO capabilities (server, kind, name, hash, definition) VALUES (?, ?, ?, ?, ?)",
          );
          for (const item of items)
            insert.run(server, kind, item.name, item.hash, JSON.stringify(item.definition));
        }).immediate();
        return;
      }
      replacedKinds.add(`${server}\u0000${kind}`);
      for (const k of [...memoryListed.keys()])
        if (k.startsWith(`${server}\u0000${kind}\u0000`)) memoryListed.delete(k);
      for (const item of items) memoryListed.set(key(item), item);
    },
    listed: () =>
      withMemory(storedListed(), memoryListed, (row) => replacedKinds.has(`${row.server}\u0000${row.kind}`)),
    approvals: () => withMemory(storedApprovals(), memoryApprovals).map(({ definition: _, ...row }) => row),
    approvedDefinition: (server, kind, name) =>
      withMemory(storedApprovals(), memoryApprovals).find(
        (row) => row.server === server && row.kind === kind && row.name === name,
      )?.definition,
    approve(items) {
      writes++;
      if (!(options.approvalsWritable && isStored)) {
        for (const item of items) memoryApprovals.set(key(item), item);
        return;
      }
      const put = db.prepare(
        `INSERT INTO capability_approvals (server, kind, name, hash, definition, approved_at) VALUES (?, ?, ?, ?, ?, ?)
         ON CONFLICT (server, kind, name) DO UPDATE SET hash = excluded.hash, definition = excluded.definition,
           approved_at = excluded.approved_at`,
      );
      const now = Date.now();
      db.transaction(() => {
        for (const item of items) {
          put.run(
            item.server,
            item.kind,
            item.name,
            item.hash,
            item.definition ? JSON.stringify(item.definition) : null,
            now,
          );
        }
      }).immediate();
    },
    forgetExcept(keep) {
      const servers = new Set([...storedListed(), ...storedApprovals()].map((row) => row.server));
      const gone = [...servers].filter((server) => !keep.has(server));
      if (gone.length === 0 || !(options.approvalsWritable && isStored)) return 0;
      writes++;
      db.transaction(() => {
        for (const server of gone) {
          db.run("DELETE FROM capabilities WHERE server = ?", [server]);
          db.run("DELETE FROM capability_approvals WHERE server = ?", [server]);
        }
      }).immediate();
      return gone.length;
    },
    version() {
      const row = db.query<{ data_version: number }, []>("PRAGMA data_version").get();
      return `${row?.data_version ?? 0}:${writes}`;
    },
  };
}
