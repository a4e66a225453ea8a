import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { connectPostgres } from "../../src/store/postgres/connect.ts";
import type { TempPostgres } from "./temp-postgres.ts";

/**
 * Databases for the shared-store tests on one temp-postgres cluster: a fresh database per test
 * (so each starts at schema version 0), and a role that must give a password (the cluster trusts
 * its own role), for the "wrong password" cases.
 */
let made = 0;

/** A new, empty database on the cluster; returns its URL. */
export async function freshDatabase(pg: TempPostgres): Promise<string> {
  const name = `t${process.pid}_${++made}`;
  const admin = connectPostgres(pg.url, { max: 1 });
  try {
    await admin.unsafe(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end({ timeout: 1 });
  }
  return pg.url.replace(/\/[^/]*$/, `/${name}`);
}

/** Runs one statement (or several) on `url`. */
export async function onDatabase<T>(
  url: string,
  work: (sql: ReturnType<typeof connectPostgres>) => Promise<T>,
) {
  const sql = connectPostgres(url, { max: 2 });
  try {
    return await work(sql);
  } finally {
    await sql.end({ timeout: 1 });
  }
}

/**
 * A role `name` that PostgreSQL asks for `password` (scram-sha-256), allowed into every database:
 * its line goes before the cluster's `trust` lines, and the server reloads its rules.
 */
export async function passwordRole(pg: TempPostgres, name: string, password: string): Promise<void> {
  await onDatabase(pg.url, async (sql) => {
    await sql.unsafe(`CREATE ROLE ${name} LOGIN SUPERUSER PASSWORD '${password}'`);
    const hba = join(pg.dir, "data", "pg_hba.conf");
    writeFileSync(hba, `host all ${name} 127.0.0.1/32 scram-sha-256\n${readFileSync(hba, "utf8")}`);
    await sql`SELECT pg_reload_conf()`;
  });
  // pg_reload_conf only signals: wait until the postmaster asks this role for its password.
  const wrong = pg.url.replace("//mcpproxy@", `//${name}:not-${password}@`);
  for (let tries = 0; tries < 50; tries++) {
    const refused = await onDatabase(wrong, (sql) => sql`SELECT 1`).then(
      () => false,
      () => true,
    );
    if (refused) return;
    await Bun.sleep(100);
  }
  throw new Error(`PostgreSQL did not start asking ${name} for a password`);
}
