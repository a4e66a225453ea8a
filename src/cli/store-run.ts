import { storeLocationOf } from "../config/store-setting.ts";
import { ProxyError } from "../errors.ts";
import { readConfigServers } from "../store/config-writer.ts";
import type { StoreReport } from "../store/postgres/store-status.ts";
import { initStore, migrateStore, readStoreStatus, type StoreTarget } from "../store/store-admin.ts";
import { NEW_STORE_KEY_ENV } from "../store/store-key-derivation.ts";
import { type RekeyOutcome, rekeyStore } from "../store/store-rekey.ts";
import type { CommandValues } from "./command.ts";
import { commandLogger, loadCommandConfig } from "./command-config.ts";
import { storeOverrides } from "./command-store.ts";

/** The actions of store-command.ts's SUBCOMMANDS (its help), not imported from it: it imports this module. */
const ACTIONS = ["init", "migrate", "rekey", "status"] as const;

/** `mcpproxy store`: what it does once its flags are parsed (its flags and help: store-command.ts). */
export async function runStoreCommand(values: CommandValues, positionals: string[]): Promise<number> {
  const [name, ...extra] = positionals;
  if (!ACTIONS.some((action) => action === name) || extra.length > 0) {
    throw new ProxyError(
      "USAGE",
      `${name === undefined ? "Name what to do" : `Unknown store command "${[name, ...extra].join(" ")}"`}: ` +
        "mcpproxy store init|migrate|rekey|status. Run `mcpproxy store --help`.",
    );
  }
  const config = loadCommandConfig(values, storeOverrides(values));
  const location = storeLocationOf(config.store);
  if (location.kind === "local") {
    throw new ProxyError(
      "USAGE",
      `mcpproxy store ${name} needs the shared store's URL: pass --store postgres://user@host:port/db, ` +
        "set MCPPROXY_STORE, or write mcpproxy.store in the config file (with the password as ${VAR}).",
    );
  }
  const target: StoreTarget = { url: location.url, shown: location.shown };
  const logger = commandLogger(config);
  const print = (text: string, json: unknown) =>
    process.stdout.write(values.json ? `${JSON.stringify(json, null, 2)}\n` : `${text}\n`);
  if (name === "migrate") {
    const outcome = await migrateStore(target, logger);
    print(
      outcome.applied.length === 0
        ? `The shared store ${target.shown} is already at version ${outcome.to}.`
        : `Migrated the shared store ${target.shown} from version ${outcome.from} to ${outcome.to}: ` +
            `applied ${outcome.applied.map((step) => `${step.version} (${step.name})`).join(", ")}.`,
      { store: target.shown, ...outcome },
    );
    return 0;
  }
  if (name === "rekey") {
    const outcome = await rekeyStore(target, process.env, logger);
    const moved = process.env[NEW_STORE_KEY_ENV]?.trim() ? NEW_STORE_KEY_ENV : "MCPPROXY_STORE_KEY";
    print(
      `Sealed the shared store ${target.shown} under ${moved} (${DERIVATIONS[outcome.to]}; it was ` +
        `${DERIVATIONS[outcome.from]}): ${outcome.secrets} shared secret(s), ${outcome.logins} OAuth login(s)` +
        (outcome.droppedResults > 0 ? `; ${outcome.droppedResults} kept large result(s) dropped` : "") +
        `. Start the replicas with MCPPROXY_STORE_KEY set to ${moved === "MCPPROXY_STORE_KEY" ? "the same key" : `what ${NEW_STORE_KEY_ENV} was`}.`,
      { store: target.shown, key: moved, ...outcome },
    );
    return 0;
  }
  if (name === "init") {
    const entries = readConfigServers(config.configPath).servers;
    const outcome = await initStore(target, { env: process.env, logger, entries });
    print(
      `The shared store ${target.shown} is ready at schema version ${outcome.version}` +
        (outcome.migrated.length > 0 ? ` (applied ${outcome.migrated.join(", ")})` : "") +
        (outcome.seeded > 0 ? `; ${outcome.seeded} server(s) of ${config.configPath} are its registry` : "") +
        "; MCPPROXY_STORE_KEY is its key; the shared secrets are in place. " +
        "Start replicas with `mcpproxy serve --store URL` and the same MCPPROXY_STORE_KEY.",
      { store: target.shown, ...outcome, isReady: true },
    );
    return 0;
  }
  const report = await readStoreStatus(target, logger);
  const isUpToDate = report.schema.current === report.schema.latest;
  print(statusText(target.shown, report), { store: target.shown, isUpToDate, ...report });
  return isUpToDate ? 0 : 1;
}

const DERIVATIONS: Record<RekeyOutcome["to"], string> = {
  random: "a random key",
  scrypt: "a passphrase stretched with scrypt",
  "legacy-hkdf": "a passphrase stretched with HKDF alone",
};

function statusText(shown: string, report: StoreReport): string {
  const { schema } = report;
  const lines = [`Shared store ${shown}`];
  if (schema.current > schema.latest) {
    lines.push(
      `Schema: version ${schema.current}, newer than this mcpproxy knows (${schema.latest}): upgrade mcpproxy here.`,
    );
  } else if (schema.pending.length > 0) {
    lines.push(
      `Schema: version ${schema.current} of ${schema.latest}, ${schema.pending.length} step(s) pending ` +
        `(${schema.pending.map((step) => `${step.version} ${step.name}`).join(", ")}): run \`mcpproxy store migrate\`.`,
    );
  } else {
    lines.push(`Schema: version ${schema.current} of ${schema.latest} (up to date)`);
  }
  const alive = report.replicas.filter((replica) => replica.isAlive).length;
  lines.push(`Replicas: ${report.replicas.length} registered, ${alive} alive`);
  for (const replica of report.replicas) {
    lines.push(
      `  ${replica.id}  ${replica.host} pid ${replica.pid}, ${replica.version}, started ${replica.startedAt}, ` +
        `seen ${replica.seenSecondsAgo} s ago${replica.isAlive ? "" : " (not alive: stopped or cut off)"}`,
    );
  }
  const lease = report.locks.find((lock) => lock.name === "lease");
  lines.push(`Lease: ${lease ? `held by ${lease.holder}` : "not held (no replica runs the once-only work)"}`);
  for (const lock of report.locks.filter((l) => l.name !== "lease"))
    lines.push(`Lock ${lock.name}: held by ${lock.holder}`);
  if (report.counts) {
    const { servers, tools, approvals, changes } = report.counts;
    lines.push(`Kept: ${servers} servers, ${tools} tools, ${approvals} approvals, ${changes} changes`);
  }
  const largest = Object.entries(report.size.tables)
    .slice(0, 4)
    .map(([table, bytes]) => `${table} ${sizeOf(bytes)}`);
  lines.push(
    `Size: database ${sizeOf(report.size.databaseBytes)}, mcpproxy tables ${sizeOf(report.size.schemaBytes)}` +
      (largest.length > 0 ? ` (largest: ${largest.join(", ")})` : ""),
  );
  const last = report.lastChange;
  lines.push(
    last ? `Last change: #${last.id} ${last.kind}, ${last.ageSeconds} s ago` : "Last change: none yet",
  );
  return lines.join("\n");
}

function sizeOf(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 ** 2) return `${(bytes / 1024).toFixed(0)} KiB`;
  if (bytes < 1024 ** 3) return `${(bytes / 1024 ** 2).toFixed(1)} MiB`;
  return `${(bytes / 1024 ** 3).toFixed(2)} GiB`;
}
