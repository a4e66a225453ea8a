import type { Database } from "bun:sqlite";

/**
 * What each server said it is for: the `instructions` of its initialize result (2025) or
 * `server/discover` answer (2026-07-28), as it last sent them. Kept in the catalog file so that a
 * lazy server, or one not connected yet on this run, is still described by retrieve_tools
 * (server/tools/search-description.ts). Untrusted text: it is stored as sent and judged where quoted.
 */
export interface InstructionStore {
  get(server: string): string | undefined;
  /**
   * Every server's text, as `get` gives it, read at once: a walk over thousands of servers asked
   * the file once per server (20,000 queries, a tenth of a second at 100,000 tools).
   */
  all(): ReadonlyMap<string, string>;
  /**
   * `undefined`: the server sent none (any earlier text is dropped). Whether what is kept changed:
   * a reconnect that sends the same text changes nothing (and writes nothing).
   */
  put(server: string, instructions: string | undefined): boolean;
  forgetExcept(keep: ReadonlySet<string>): void;
}

/** More than this is not kept: only the start of it is ever quoted, and a server must not grow the file. */
export const MAX_STORED_INSTRUCTIONS = 8 * 1024;

export function createInstructionSchema(db: Database): void {
  db.exec(`CREATE TABLE IF NOT EXISTS server_instructions (
      server TEXT PRIMARY KEY, instructions TEXT NOT NULL, seen_at INTEGER NOT NULL);`);
}

/**
 * `writable`: written to the file; otherwise (a read-only catalog: a second serve, `search`) kept
 * in memory for the life of the process, over what the file holds.
 */
export function openInstructionStore(db: Database, options: { writable: boolean }): InstructionStore {
  const isStored = Boolean(
    db.query("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'server_instructions'").get(),
  );
  const memory = new Map<string, string | undefined>();
  const select = isStored
    ? db.query<{ instructions: string }, [string]>(
        "SELECT instructions FROM server_instructions WHERE server = ?",
      )
    : undefined;
  const isWritable = options.writable && isStored;
  const get = (server: string) => {
    if (memory.has(server)) return memory.get(server);
    return select?.get(server)?.instructions ?? undefined;
  };
  const selectAll = isStored
    ? db.query<{ server: string; instructions: string }, []>(
        "SELECT server, instructions FROM server_instructions",
      )
    : undefined;
  return {
    get,
    all() {
      const texts = new Map<string, string>();
      for (const row of selectAll?.all() ?? []) texts.set(row.server, row.instructions);
      for (const [server, text] of memory) {
        if (text === undefined) texts.delete(server);
        else texts.set(server, text);
      }
      return texts;
    },
    put(server, instructions) {
      const text = instructions?.slice(0, MAX_STORED_INSTRUCTIONS) || undefined;
      if (get(server) === text) return false;
      if (!isWritable) {
        memory.set(server, text);
        return true;
      }
      if (text === undefined) db.run("DELETE FROM server_instructions WHERE server = ?", [server]);
      else
        db.run(
          `INSERT INTO server_instructions (server, instructions, seen_at) VALUES (?, ?, ?)
           ON CONFLICT (server) DO UPDATE SET instructions = excluded.instructions, seen_at = excluded.seen_at`,
          [server, text, Date.now()],
        );
      return true;
    },
    forgetExcept(keep) {
      for (const server of [...memory.keys()]) if (!keep.has(server)) memory.delete(server);
      if (!isWritable) return;
      const gone = db
        .query<{ server: string }, []>("SELECT server FROM server_instructions")
        .all()
        .filter((row) => !keep.has(row.server));
      if (gone.length === 0) return;
      db.transaction(() => {
        for (const row of gone) db.run("DELETE FROM server_instructions WHERE server = ?", [row.server]);
      }).immediate();
    },
  };
}
