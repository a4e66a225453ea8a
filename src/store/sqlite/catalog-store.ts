import { Database } from "bun:sqlite";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { createPrivateFile } from "../../atomic-file.ts";
import { describeError, ProxyError } from "../../errors.ts";
import type { UpstreamTool } from "../../upstream-tool.ts";
import { type CapabilityStore, createCapabilitySchema, openCapabilityStore } from "./capability-store.ts";
import { isUnchangedSinceCleanClose, recordCleanClose } from "./clean-close.ts";
import { createEraSchema, type EraStore, openEraStore } from "./era-store.ts";
import { openForReading } from "./open-for-reading.ts";
import {
  createInstructionSchema,
  type InstructionStore,
  openInstructionStore,
} from "./server-instructions.ts";

/**
 * The durable record of every indexed tool: its definition, hash and public name, in SQLite (WAL).
 * Definitions stay on disk and are read for the few tools a search returns: at 10k tools, holding
 * every schema in memory cost tens of MB and its parse a good part of the start-up time.
 * It is the source of truth; the search index snapshot is derived from it and rebuilt from it
 * whenever the two disagree (their `generation` differs).
 */
export interface ToolRow {
  server: string;
  tool: string;
  name: string;
  hash: string;
}

interface StoredTool extends ToolRow {
  definition: UpstreamTool;
}

interface CatalogChanges {
  upserts: readonly StoredTool[];
  deletes: readonly { server: string; tool: string }[];
  renames: readonly { server: string; tool: string; name: string }[];
}

interface StoredVector {
  server: string;
  tool: string;
  /** The tool hash the vector was computed from; a different current hash means it is stale. */
  hash: string;
  vector: Float32Array;
}

export interface CatalogStore {
  readonly path: string;
  /** Prompts and resource templates: what servers listed, and what was approved (capability-store.ts). */
  readonly capabilities: CapabilityStore;
  /** Which protocol era each server spoke when last connected (era-store.ts). */
  readonly eras: EraStore;
  /** What each server said it is for, as it last said it (server-instructions.ts). */
  readonly instructions: InstructionStore;
  /** Every tool without its definition: what the proxy keeps in memory. */
  listTools(): ToolRow[];
  /** Every tool with its definition (rebuilding the search index). */
  listDefinitions(): StoredTool[];
  definitionOf(server: string, tool: string): UpstreamTool | undefined;
  /** Records the embedder; when it differs from the stored one every vector is dropped. */
  useEmbedder(key: string): void;
  listVectors(): StoredVector[];
  /** What the stored public names were computed for (name limit and reserved names). */
  namingKey(): string | undefined;
  setNamingKey(key: string): void;
  putVectors(vectors: readonly StoredVector[]): void;
  /** Applies changes in one transaction and returns the new generation. */
  apply(changes: CatalogChanges): number;
  /** Every approved tool with the hash of the definition that was approved (no definitions: they are big). */
  listApprovals(): { server: string; tool: string; hash: string }[];
  /** The definition a tool had when it was approved. */
  approvedDefinition(server: string, tool: string): UpstreamTool | undefined;
  /** Approves these tools with the definitions they have in the catalog now. */
  approve(tools: readonly ApprovedTool[]): void;
  /**
   * Keeps the approved definition of a tool about to change (call before the change is applied),
   * so that `approve` can show what changed. An approval otherwise points at the current one.
   */
  keepApprovedDefinition(server: string, tool: string): void;
  /** Drops every approval of the servers not in `keep` (servers removed from the config); returns how many servers. */
  forgetApprovalsExcept(keep: ReadonlySet<string>): number;
  /** Changes when another connection (another mcpproxy) commits, so approvals can be re-read. */
  dataVersion(): number;
  generation(): number;
  close(): void;
}

interface ApprovedTool {
  server: string;
  tool: string;
  /** The hash of the definition that was approved. */
  hash: string;
}

const SCHEMA_VERSION = "1";

function createSchema(db: Database): void {
  db.exec(`CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
    CREATE TABLE IF NOT EXISTS tools (
      server TEXT NOT NULL, tool TEXT NOT NULL, name TEXT NOT NULL, hash TEXT NOT NULL,
      definition TEXT NOT NULL, updated_at INTEGER NOT NULL, PRIMARY KEY (server, tool));
    CREATE TABLE IF NOT EXISTS vectors (
      server TEXT NOT NULL, tool TEXT NOT NULL, hash TEXT NOT NULL, vector BLOB NOT NULL,
      PRIMARY KEY (server, tool));
    CREATE TABLE IF NOT EXISTS approvals (
      server TEXT NOT NULL, tool TEXT NOT NULL, hash TEXT NOT NULL, definition TEXT,
      approved_at INTEGER NOT NULL, PRIMARY KEY (server, tool));`);
  // What listTools reads at every start, in its order, without the definitions: scanned from this
  // index rather than looked up row by row in the table, whose rows hold them (at 100,000 tools
  // 0.07 s instead of 0.18; a catalog from before it gets it at its first writable open).
  db.exec("CREATE INDEX IF NOT EXISTS tools_listed ON tools (server, tool, name, hash)");
  createCapabilitySchema(db);
  createEraSchema(db);
  createInstructionSchema(db);
  // A catalog from before approvals existed: what it holds was trusted, so it starts approved.
  if (!db.query("SELECT 1 FROM meta WHERE key = 'approvals'").get()) {
    db.transaction(() => {
      db.run("INSERT OR IGNORE INTO approvals SELECT server, tool, hash, NULL, ? FROM tools", [Date.now()]);
      db.run("INSERT INTO meta (key, value) VALUES ('approvals', '1')");
    }).immediate();
  }
  db.run("INSERT OR IGNORE INTO meta (key, value) VALUES ('schema_version', ?), ('generation', '0')", [
    SCHEMA_VERSION,
  ]);
}
export const CATALOG_FILE = "catalog.db";

export interface CatalogStoreOptions {
  /**
   * Never write (`search`, or a second `serve` on the data dir): SQLite refuses writes
   * (query_only), and what a caller would store (public names, vectors, the embedder, the
   * definitions of tools listed since opening) stays in memory. A missing catalog reads as empty.
   */
  readOnly?: boolean;
  /** With readOnly, approvals are still written (`mcpproxy approve` beside a running proxy). */
  approvalsWritable?: boolean;
}

export function openCatalogStore(dataDir: string, options: CatalogStoreOptions = {}): CatalogStore {
  const readOnly = options.readOnly ?? false;
  const approvalsWritable = !readOnly || (options.approvalsWritable ?? false);
  const path = join(dataDir, CATALOG_FILE);
  let db: Database;
  try {
    // Looked at before the open, which sets the file's mode (and so its ctime).
    const isUnchanged = isUnchangedSinceCleanClose(path);
    if (readOnly && !existsSync(path)) {
      db = new Database(":memory:");
      createSchema(db);
    } else if (readOnly) {
      db = openForReading(path, approvalsWritable);
    } else {
      createPrivateFile(path);
      db = new Database(path, { create: true });
      // The wait first: switching to WAL takes a lock that a running proxy may hold, and without a
      // busy timeout the open failed at once ("database is locked") while it wrote.
      db.exec("PRAGMA busy_timeout = 5000");
      db.exec("PRAGMA journal_mode = WAL");
      // Each server's sync is one commit: with FULL every commit waited for an fsync, a tenth of the
      // time of indexing 10,000 servers. In WAL mode NORMAL never corrupts the file; a power cut may
      // lose the last commits, which the next sync writes again.
      db.exec("PRAGMA synchronous = NORMAL");
      createSchema(db);
    }
    // A damaged page shows up here, once, rather than as "0 tools" or a crash in the middle of a
    // search; not again for a file nothing touched since it was closed cleanly (clean-close.ts).
    if (!isUnchanged) {
      const check = db.query<{ quick_check: string }, []>("PRAGMA quick_check(1)").get()?.quick_check;
      if (check !== "ok") throw new Error(`the file is damaged: ${check}`);
    }
    const version = db
      .query<{ value: string }, []>("SELECT value FROM meta WHERE key = 'schema_version'")
      .get();
    if (version && version.value !== SCHEMA_VERSION) {
      throw new Error(`catalog schema version ${version.value} is not ${SCHEMA_VERSION}`);
    }
  } catch (error) {
    throw new ProxyError(
      "INDEX_UNREADABLE",
      `Cannot read the tool catalog ${path}: ${describeError(error)}. Run \`mcpproxy index\` to rebuild it.`,
      { cause: error },
    );
  }

  const upsert = db.prepare(
    `INSERT INTO tools (server, tool, name, hash, definition, updated_at) VALUES (?, ?, ?, ?, ?, ?)
     ON CONFLICT (server, tool) DO UPDATE SET name = excluded.name, hash = excluded.hash,
       definition = excluded.definition, updated_at = excluded.updated_at`,
  );
  const remove = db.prepare("DELETE FROM tools WHERE server = ? AND tool = ?");
  const selectDefinition = db.query<{ definition: string }, [string, string]>(
    "SELECT definition FROM tools WHERE server = ? AND tool = ?",
  );
  const removeVector = db.prepare("DELETE FROM vectors WHERE server = ? AND tool = ?");
  const putVector = db.prepare(
    `INSERT INTO vectors (server, tool, hash, vector) VALUES (?, ?, ?, ?)
     ON CONFLICT (server, tool) DO UPDATE SET hash = excluded.hash, vector = excluded.vector`,
  );
  const readMeta = (key: string) =>
    db.query<{ value: string }, [string]>("SELECT value FROM meta WHERE key = ?").get(key)?.value;
  const writeMeta = (key: string, value: string) =>
    db.run(
      "INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
      [key, value],
    );
  const rename = db.prepare("UPDATE tools SET name = ? WHERE server = ? AND tool = ?");
  const readGeneration = () => Number(readMeta("generation") ?? 0);
  const putVectors = db.transaction((vectors: readonly StoredVector[]) => {
    for (const v of vectors) {
      putVector.run(
        v.server,
        v.tool,
        v.hash,
        new Uint8Array(v.vector.buffer, v.vector.byteOffset, v.vector.byteLength),
      );
    }
  }).immediate;
  const useEmbedder = db.transaction((key: string) => {
    if (readMeta("embedder") === key) return;
    db.run("DELETE FROM vectors");
    writeMeta("embedder", key);
  }).immediate;
  // Read-only, vectors of another embedder are not deleted but must not be used.
  let hasOtherEmbedder = false;
  // Read-only, definitions of tools listed since opening are kept here instead of written.
  const unsaved = new Map<string, UpstreamTool | undefined>();
  // Read-only, approvals given since opening, likewise.
  const unsavedApprovals: ApprovedTool[] = [];
  const hasApprovalsTable = Boolean(
    db.query("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'approvals'").get(),
  );
  const putApproval =
    hasApprovalsTable && approvalsWritable
      ? db.prepare(
          `INSERT INTO approvals (server, tool, hash, definition, approved_at) VALUES (?, ?, ?, NULL, ?)
         ON CONFLICT (server, tool) DO UPDATE SET hash = excluded.hash, definition = NULL,
           approved_at = excluded.approved_at`,
        )
      : undefined;
  const definitionOf = (server: string, tool: string): UpstreamTool | undefined => {
    const key = keyOf(server, tool);
    if (unsaved.has(key)) return unsaved.get(key);
    const row = selectDefinition.get(server, tool);
    return row ? (JSON.parse(row.definition) as UpstreamTool) : undefined;
  };
  const approveAll = db.transaction((approved: readonly ApprovedTool[]) => {
    const now = Date.now();
    for (const a of approved) putApproval?.run(a.server, a.tool, a.hash, now);
  }).immediate;
  const keyOf = (server: string, tool: string) => `${server}\u0000${tool}`;

  const applyAll = db.transaction((changes: CatalogChanges) => {
    const now = Date.now();
    for (const t of changes.upserts) {
      upsert.run(t.server, t.tool, t.name, t.hash, JSON.stringify(t.definition), now);
    }
    for (const t of changes.deletes) {
      remove.run(t.server, t.tool);
      removeVector.run(t.server, t.tool);
    }
    for (const t of changes.renames) rename.run(t.name, t.server, t.tool);
    const next = readGeneration() + 1;
    db.run("UPDATE meta SET value = ? WHERE key = 'generation'", [String(next)]);
    return next;
  }).immediate;

  const capabilities = openCapabilityStore(db, { writable: !readOnly, approvalsWritable });
  const eras = openEraStore(db, { writable: !readOnly });
  const instructions = openInstructionStore(db, { writable: !readOnly });
  return {
    path,
    capabilities,
    eras,
    instructions,
    listTools: () =>
      db.query<ToolRow, []>("SELECT server, tool, name, hash FROM tools ORDER BY server, tool").all(),
    listDefinitions() {
      const rows = db
        .query<{ server: string; tool: string; name: string; hash: string; definition: string }, []>(
          "SELECT server, tool, name, hash, definition FROM tools ORDER BY server, tool",
        )
        .all();
      return rows.map((row) => ({ ...row, definition: JSON.parse(row.definition) as UpstreamTool }));
    },
    definitionOf,
    namingKey: () => readMeta("naming"),
    setNamingKey: (key) => {
      if (!readOnly) writeMeta("naming", key);
    },
    useEmbedder: (key) => {
      if (readOnly) hasOtherEmbedder = readMeta("embedder") !== key;
      else useEmbedder(key);
    },
    listVectors() {
      if (hasOtherEmbedder) return [];
      return db
        .query<{ server: string; tool: string; hash: string; vector: Uint8Array }, []>(
          "SELECT server, tool, hash, vector FROM vectors",
        )
        .all()
        .map((row) => ({ ...row, vector: new Float32Array(row.vector.slice().buffer) }));
    },
    putVectors: (vectors) => {
      if (!readOnly) putVectors(vectors);
    },
    listApprovals() {
      // A read-only catalog from before approvals existed: everything in it counts as approved.
      const table = hasApprovalsTable ? "approvals" : "tools";
      const rows = db.query<{ server: string; tool: string; hash: string }, []>(
        `SELECT server, tool, hash FROM ${table}`,
      );
      const stored = rows.all();
      return unsavedApprovals.length === 0 ? stored : [...stored, ...unsavedApprovals];
    },
    approvedDefinition(server, tool) {
      const current = () => definitionOf(server, tool);
      if (unsavedApprovals.some((row) => row.server === server && row.tool === tool)) return current();
      if (!hasApprovalsTable) return current();
      const row = db
        .query<{ definition: string | null }, [string, string]>(
          "SELECT definition FROM approvals WHERE server = ? AND tool = ?",
        )
        .get(server, tool);
      // No definition kept: the approval is of the definition the catalog has now.
      if (!row) return undefined;
      return row.definition === null ? current() : (JSON.parse(row.definition) as UpstreamTool);
    },
    keepApprovedDefinition(server, tool) {
      if (!putApproval) return;
      db.run(
        `UPDATE approvals SET definition = (SELECT definition FROM tools WHERE server = ? AND tool = ?)
         WHERE server = ? AND tool = ? AND definition IS NULL`,
        [server, tool, server, tool],
      );
    },
    approve(approved) {
      if (putApproval) approveAll(approved);
      else unsavedApprovals.push(...approved);
    },
    forgetApprovalsExcept(keep) {
      if (!putApproval) return 0;
      const fromCapabilities = capabilities.forgetExcept(keep);
      const gone = db
        .query<{ server: string }, []>("SELECT DISTINCT server FROM approvals")
        .all()
        .map((row) => row.server)
        .filter((server) => !keep.has(server));
      if (gone.length === 0) return fromCapabilities;
      const remove = db.prepare("DELETE FROM approvals WHERE server = ?");
      db.transaction(() => {
        for (const server of gone) remove.run(server);
      }).immediate();
      return gone.length;
    },
    dataVersion: () => db.query<{ data_version: number }, []>("PRAGMA data_version").get()?.data_version ?? 0,
    apply(changes) {
      if (!readOnly) return applyAll(changes) as number;
      for (const tool of changes.upserts) unsaved.set(keyOf(tool.server, tool.tool), tool.definition);
      for (const tool of changes.deletes) unsaved.set(keyOf(tool.server, tool.tool), undefined);
      return readGeneration();
    },
    generation: readGeneration,
    close: () => {
      if (readOnly) return db.close();
      // The log emptied into the file now (SQLite does it at the last close, which statements
      // still cached put off): a file left whole is recorded as such (clean-close.ts).
      try {
        db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
      } catch {
        // Busy (another process reads it): nothing is recorded, and the next open checks.
      }
      db.close();
      recordCleanClose(path);
    },
  };
}
