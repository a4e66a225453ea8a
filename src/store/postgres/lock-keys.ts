/**
 * The advisory locks the shared store takes, in one place so that no two uses collide. PostgreSQL's
 * two-number form: the first names mcpproxy ('mcpx' as an integer), the second the purpose.
 */
export const MCPPROXY_LOCK_SPACE = 0x6d637078;

export const LOCKS = {
  /** Held while migrations run: replicas that start at once migrate once. */
  migrations: 1,
  /** The lease: its holder indexes, runs the periodic checks and compacts statistics. */
  lease: 2,
  /**
   * Held (per transaction) by every transaction that records a change, from the change's row to its
   * commit: change ids are then given in commit order, so a reader that has applied id N never
   * meets a smaller id committed later (store-changes.ts).
   */
  changes: 3,
  /** Held (tried, never waited for) while the rows of replicas that are gone are folded together. */
  statsCompaction: 4,
  /** Held by each edit of the server registry (server-registry.ts): edits are made one after another. */
  registry: 5,
  /**
   * Kept large results (kept-results.ts): held (per transaction) while a new result's owner and the
   * whole table are brought back under their bounds, so two replicas never evict for each other at
   * once; tried, never waited for, by the sweep of expired results (one replica sweeps at a time).
   */
  keptResults: 6,
} as const;

/**
 * Per-server locks of upstream OAuth refreshes (oauth-records.ts): their own first number, the
 * second PostgreSQL's `hashtext` of the server's name. A collision of two names only makes their
 * refreshes take turns.
 */
export const OAUTH_REFRESH_LOCK_SPACE = 0x6d63706f;
