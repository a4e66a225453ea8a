/**
 * The tables of a data dir's catalog.db that replicas share, with the same names and columns in the
 * shared store (postgres/migrations.ts). Replication copies rows by primary key and knows nothing
 * of what they mean: approvals, quarantine, what servers listed, their eras and instructions are
 * kept by the catalog's own code, unchanged, on every replica.
 */
export type ColumnType = "text" | "int" | "blob";

export interface SharedTable {
  name: string;
  key: readonly string[];
  /** Every column, key first, with its type (PostgreSQL returns BIGINT as text, BYTEA as bytes). */
  columns: readonly (readonly [string, ColumnType])[];
}

export const SHARED_TABLES: readonly SharedTable[] = [
  {
    name: "tools",
    key: ["server", "tool"],
    columns: [
      ["server", "text"],
      ["tool", "text"],
      ["name", "text"],
      ["hash", "text"],
      ["definition", "text"],
      ["updated_at", "int"],
    ],
  },
  {
    name: "vectors",
    key: ["server", "tool"],
    columns: [
      ["server", "text"],
      ["tool", "text"],
      ["hash", "text"],
      ["vector", "blob"],
    ],
  },
  {
    name: "approvals",
    key: ["server", "tool"],
    columns: [
      ["server", "text"],
      ["tool", "text"],
      ["hash", "text"],
      ["definition", "text"],
      ["approved_at", "int"],
    ],
  },
  {
    name: "capabilities",
    key: ["server", "kind", "name"],
    columns: [
      ["server", "text"],
      ["kind", "text"],
      ["name", "text"],
      ["hash", "text"],
      ["definition", "text"],
    ],
  },
  {
    name: "capability_approvals",
    key: ["server", "kind", "name"],
    columns: [
      ["server", "text"],
      ["kind", "text"],
      ["name", "text"],
      ["hash", "text"],
      ["definition", "text"],
      ["approved_at", "int"],
    ],
  },
  {
    name: "server_eras",
    key: ["server"],
    columns: [
      ["server", "text"],
      ["era", "text"],
      ["key", "text"],
      ["protocol_version", "text"],
      ["discover", "text"],
      ["checked_at", "int"],
    ],
  },
  {
    name: "server_instructions",
    key: ["server"],
    columns: [
      ["server", "text"],
      ["instructions", "text"],
      ["seen_at", "int"],
    ],
  },
];

export function sharedTable(name: string): SharedTable | undefined {
  return SHARED_TABLES.find((table) => table.name === name);
}

/** A row's values in column order, as the other side stores them. */
export type RowValues = unknown[];

/** A value read from either side, as the given column type holds it in JavaScript. */
export function normalizeValue(value: unknown, type: ColumnType): unknown {
  if (value === null || value === undefined) return null;
  if (type === "int") return Number(value);
  if (type === "blob") return value instanceof Uint8Array ? value : new Uint8Array(value as ArrayBuffer);
  return String(value);
}
