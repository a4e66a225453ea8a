import { randomBytes } from "node:crypto";

/**
 * Large tool results kept out of the agent's context (result-spill.ts), held in memory for the
 * caller that got them. Memory, not the data dir: a result may carry whatever the tool read
 * (secrets included), and files would outlive a crash and need sweeping; the price is that a
 * restart forgets them, which their short life makes cheap. Bounded three ways, the oldest going
 * first: entries per scope, bytes per scope, bytes for the whole proxy. Sizes are UTF-8 bytes of
 * text and decoded bytes of blobs (what the agent would have received), not the heap's own count.
 *
 * A scope is who may read an entry back: one 2025 session, or, for a 2026-07-28 client that has no
 * session, its principal (input-rounds.ts `principalOf`). An entry read under another scope is
 * "not found", exactly as an expired or unknown one, so a URI tells nothing to whoever guesses it.
 */
export interface StoredResult {
  readonly id: string;
  readonly scope: string;
  /** Text (a text block, an embedded text resource, structuredContent as JSON) or base64 data. */
  readonly kind: "text" | "blob";
  readonly data: string;
  readonly mimeType: string;
  /** UTF-8 bytes of text, decoded bytes of a blob. */
  readonly bytes: number;
  readonly expiresAt: number;
}

export interface ResultStoreOptions {
  ttlMs: number;
  perScope: number;
  scopeBytes: number;
  totalBytes: number;
  now?: () => number;
}

export interface ResultStore {
  /** Keeps `data` for `scope`; undefined when it alone is larger than a scope or the store may hold. */
  put(
    scope: string,
    item: { kind: "text" | "blob"; data: string; mimeType: string },
  ): StoredResult | undefined;
  /** The entry, when it exists, has not expired and belongs to `scope`. */
  get(scope: string, id: string): StoredResult | undefined;
  /** Forgets a scope's entries (its session closed). */
  drop(scope: string): void;
  /** Forgets what has expired. */
  sweep(): void;
  size(): { entries: number; bytes: number };
}

function sizeOf(kind: "text" | "blob", data: string): number {
  return kind === "text" ? Buffer.byteLength(data, "utf8") : Buffer.byteLength(data, "base64");
}

/** 128 random bits, URL-safe: the part of the URI nobody can guess. */
const newId = () => randomBytes(16).toString("base64url");

export function createResultStore(options: ResultStoreOptions): ResultStore {
  const now = options.now ?? Date.now;
  // Insertion order is age order: Map iteration gives the oldest first.
  const entries = new Map<string, StoredResult>();
  let total = 0;
  const remove = (entry: StoredResult) => {
    if (entries.delete(entry.id)) total -= entry.bytes;
  };
  const ofScope = (scope: string) => [...entries.values()].filter((entry) => entry.scope === scope);
  const sweep = () => {
    const at = now();
    for (const entry of entries.values()) if (entry.expiresAt <= at) remove(entry);
  };
  return {
    put(scope, item) {
      const bytes = sizeOf(item.kind, item.data);
      if (bytes > options.scopeBytes || bytes > options.totalBytes || options.perScope < 1) return undefined;
      sweep();
      const mine = ofScope(scope);
      let mineBytes = mine.reduce((sum, entry) => sum + entry.bytes, 0);
      while (mine.length > 0 && (mine.length >= options.perScope || mineBytes + bytes > options.scopeBytes)) {
        const oldest = mine.shift()!;
        mineBytes -= oldest.bytes;
        remove(oldest);
      }
      for (const oldest of entries.values()) {
        if (total + bytes <= options.totalBytes) break;
        remove(oldest);
      }
      const entry: StoredResult = { id: newId(), scope, ...item, bytes, expiresAt: now() + options.ttlMs };
      entries.set(entry.id, entry);
      total += bytes;
      return entry;
    },
    get(scope, id) {
      const entry = entries.get(id);
      if (!entry || entry.scope !== scope) return undefined;
      if (entry.expiresAt <= now()) {
        remove(entry);
        return undefined;
      }
      return entry;
    },
    drop: (scope) => ofScope(scope).forEach(remove),
    sweep,
    size: () => ({ entries: entries.size, bytes: total }),
  };
}
