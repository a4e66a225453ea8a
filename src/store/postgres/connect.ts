import postgres from "postgres";
import type { Logger } from "../../log.ts";
import { resetSafeSockets } from "./reset-safe-socket.ts";

/** The client of the shared store: the `postgres` package, used nowhere outside src/store/. */
export type Sql = postgres.Sql;
/** A transaction of `Sql` (`sql.begin`), which writes a change together with its data. */
export type Tx = postgres.TransactionSql;

export interface ConnectOptions {
  /** How many connections this process may hold (a replica needs few: its writes are small). */
  max?: number;
  /** Shown in pg_stat_activity, so an operator sees which replica holds what. */
  applicationName?: string;
  logger?: Logger | undefined;
}

/** Seconds to wait for a connection: a store that does not answer must not hold up a command for long. */
export const CONNECT_TIMEOUT_S = 5;

export function connectPostgres(url: string, options: ConnectOptions = {}): Sql {
  // `socket` is an option of the package its types do not list (reset-safe-socket.ts says why).
  const sockets = { socket: resetSafeSockets(options.logger) } as Record<string, unknown>;
  return postgres(url, {
    ...sockets,
    max: options.max ?? 4,
    connect_timeout: CONNECT_TIMEOUT_S,
    idle_timeout: 60,
    // Statements are prepared per connection; pgbouncer in transaction mode would need this off,
    // a direct connection (the documented set-up) is faster with it on.
    prepare: true,
    // No statement of the store reads or binds an array, so the package's catalog query for array
    // types is not needed; and it is harmful: it runs first on every new connection, and the
    // package drops its promise, so a reset in that moment (PostgreSQL restarting while replicas
    // reconnect) surfaced as an unhandled rejection, which ends the process (porsager/postgres
    // #1192, open).
    fetch_types: false,
    connection: { application_name: options.applicationName ?? "mcpproxy" },
    onnotice: (notice) => options.logger?.debug(`store: ${notice.message ?? String(notice)}`),
    transform: { undefined: null },
  });
}

/** Codes the client gives a connection it lost or could not make (its own, and the socket's). */
const LOST_CONNECTION = new Set([
  "CONNECTION_CLOSED",
  "CONNECTION_DESTROYED",
  "CONNECTION_ENDED",
  "CONNECT_TIMEOUT",
  "ECONNRESET",
  "ECONNREFUSED",
  "EPIPE",
  "ETIMEDOUT",
]);

/**
 * Whether `error` says the store could not be reached (a connection lost or refused, or PostgreSQL
 * shutting down or starting: SQLSTATE class 08, 57P01-57P03), rather than that a statement was
 * wrong: work that failed for it is worth doing again once the store answers.
 */
export function isStoreUnreachable(error: unknown): boolean {
  const code = (error as { code?: unknown } | undefined)?.code;
  if (typeof code !== "string") return false;
  return LOST_CONNECTION.has(code) || code.startsWith("08") || /^57P0[123]$/.test(code);
}
