import * as v from "valibot";
import { maskUrl } from "../security/mask-url.ts";

/**
 * Where the proxy keeps what its replicas share (`--store`, MCPPROXY_STORE, `mcpproxy.store`).
 * Empty (the default): the data dir alone, SQLite, one machine; nothing about that setup changes.
 * A `postgres://` (or `postgresql://`) URL: the shared store in PostgreSQL (src/store/postgres/).
 */
export type StoreLocation = { kind: "local" } | { kind: "postgres"; url: string; shown: string };

const POSTGRES_SCHEMES = new Set(["postgres:", "postgresql:"]);

export const StoreSchema = v.pipe(
  v.string("must be a postgres:// URL"),
  v.transform((input) => input.trim()),
  v.check(
    (input) => input === "" || isPostgresUrl(input),
    "must be a postgres://user@host:port/database URL",
  ),
);

function isPostgresUrl(text: string): boolean {
  try {
    const url = new URL(text);
    return POSTGRES_SCHEMES.has(url.protocol) && url.hostname !== "";
  } catch {
    return false;
  }
}

export function storeLocationOf(store: string): StoreLocation {
  return store === "" ? { kind: "local" } : { kind: "postgres", url: store, shown: maskUrl(store) };
}

/**
 * A password written into the config file as it is (not `${VAR}`): the file is read by people and
 * tools that should not learn it. Returns the problem, or undefined.
 */
export function literalPasswordProblem(raw: unknown): string | undefined {
  if (typeof raw !== "string" || raw.includes("${")) return undefined;
  try {
    if (new URL(raw.trim()).password === "") return undefined;
  } catch {
    return undefined;
  }
  return "holds a password written as it is: put the URL in MCPPROXY_STORE, or write the password as ${VAR}";
}
