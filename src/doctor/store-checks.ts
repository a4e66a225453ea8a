import { existsSync, readFileSync } from "node:fs";
import { loadConfig, type ResolvedConfig, type SettingOverrides } from "../config/load-config.ts";
import { configTextWithServers } from "../config/registry-text.ts";
import { describeError } from "../errors.ts";
import { inspectStore, type StoreInspection } from "../store/store-admin.ts";
import type { Finding } from "./finding.ts";

/**
 * `doctor` with a shared store (`--store`, MCPPROXY_STORE, mcpproxy.store): the store checked as a
 * replica would meet it (reachable, schema up to date, MCPPROXY_STORE_KEY the store's, replicas alive
 * and who holds the lease, the catalog), and the servers to check are its registry's, not the file's.
 * Every problem is a finding, never a crash: a doctor that cannot reach the store says so.
 */
export interface StoreCheckOptions {
  config: ResolvedConfig;
  url: string;
  shown: string;
  env: Readonly<Record<string, string | undefined>>;
  /** How the config was loaded, to load it again with the registry's servers. */
  load: { configFlag?: string | undefined; cwd: string; overrides: SettingOverrides };
}

export interface StoreCheckResult {
  findings: Finding[];
  /** The config with the registry's servers; undefined when the registry could not be read. */
  config?: ResolvedConfig;
}

const finding = (subject: string, status: Finding["status"], detail: string, fix?: string): Finding => ({
  area: "store",
  subject,
  status,
  detail,
  ...(fix ? { fix } : {}),
});

export async function checkStore(options: StoreCheckOptions): Promise<StoreCheckResult> {
  let inspection: StoreInspection;
  try {
    inspection = await inspectStore({ url: options.url, shown: options.shown }, options.env);
  } catch (error) {
    return {
      findings: [
        finding(
          "connection",
          "fail",
          describeError(error),
          "start PostgreSQL or fix the URL (--store, MCPPROXY_STORE, mcpproxy.store); the servers are not checked",
        ),
      ],
    };
  }
  const { report, key } = inspection;
  const { schema } = report;
  const findings: Finding[] = [finding("connection", "ok", `${options.shown} answers`)];
  findings.push(
    schema.current > schema.latest
      ? finding(
          "schema",
          "fail",
          `version ${schema.current}, newer than this mcpproxy knows (${schema.latest})`,
          "upgrade mcpproxy on this machine",
        )
      : schema.pending.length > 0
        ? finding(
            "schema",
            "fail",
            `version ${schema.current} of ${schema.latest}: ${schema.pending.length} migration(s) pending ` +
              `(${schema.pending.map((step) => `${step.version} ${step.name}`).join(", ")})`,
            "run `mcpproxy store migrate` (or `mcpproxy store init` for a new store)",
          )
        : finding("schema", "ok", `version ${schema.current} (up to date)`),
  );
  findings.push(keyFinding(key));
  findings.push(replicasFinding(report));
  if (!inspection.entries) return { findings };
  const catalog = inspection.toolsByServer ?? {};
  const tools = Object.values(catalog).reduce((sum, count) => sum + count, 0);
  let config: ResolvedConfig;
  try {
    const fileText = existsSync(options.config.configPath)
      ? readFileSync(options.config.configPath, "utf8")
      : undefined;
    config = loadConfig({
      ...options.load,
      env: options.env,
      text: configTextWithServers(fileText, inspection.entries),
    });
  } catch (error) {
    findings.push(
      finding(
        "registry",
        "fail",
        `its servers do not load: ${describeError(error)}`,
        "fix them with `mcpproxy servers update NAME --entry JSON --store URL`",
      ),
    );
    return { findings };
  }
  const enabled = config.servers.filter((server) => server.enabled);
  const missing = enabled.filter((server) => !catalog[server.name]).map((server) => server.name);
  findings.push(
    finding(
      "registry",
      enabled.length === 0 ? "warn" : "ok",
      `${config.servers.length} server(s), ${enabled.length} enabled; the servers checked below are these, not the file's`,
      enabled.length === 0 ? "add servers with `mcpproxy servers add --store URL`" : undefined,
    ),
    finding(
      "catalog",
      missing.length > 0 ? "warn" : "ok",
      `${tools} tool(s) from ${Object.keys(catalog).length} server(s)` +
        (missing.length > 0 ? `; not indexed yet: ${missing.join(", ")}` : ""),
      missing.length > 0 ? "run `mcpproxy index --store URL` (the lease holder indexes them)" : undefined,
    ),
  );
  return { findings, config };
}

function keyFinding(key: StoreInspection["key"]): Finding {
  switch (key.state) {
    case "matches":
      return key.isLegacyPassphrase
        ? finding(
            "key",
            "warn",
            "MCPPROXY_STORE_KEY is the key the store was set up with, a passphrase stretched with HKDF alone " +
              "(by an mcpproxy before scrypt): whoever can read the store can test guesses of it fast",
            "with every replica stopped, run `mcpproxy store rekey` (or move to a random key: " +
              "MCPPROXY_STORE_NEW_KEY=$(openssl rand -hex 32) mcpproxy store rekey)",
          )
        : finding("key", "ok", "MCPPROXY_STORE_KEY is the key the store was set up with");
    case "differs":
      return finding(
        "key",
        "fail",
        "MCPPROXY_STORE_KEY is not the key the store was set up with: a replica with it refuses to start",
        "give this machine the key every replica has",
      );
    case "unrecorded":
      return finding(
        "key",
        "warn",
        "the store records no key yet: the first replica (or `store init`) makes this machine's its key",
        "run `mcpproxy store init` with the team's MCPPROXY_STORE_KEY",
      );
    case "unusable":
      return finding("key", "fail", key.problem, "set MCPPROXY_STORE_KEY to the key every replica has");
  }
}

function replicasFinding(report: StoreInspection["report"]): Finding {
  const alive = report.replicas.filter((replica) => replica.isAlive);
  const lease = report.locks.find((lock) => lock.name === "lease");
  const held = lease ? `the lease is held by ${lease.holder}` : "no replica holds the lease";
  if (alive.length === 0)
    return finding(
      "replicas",
      "warn",
      `none alive (${report.replicas.length} registered); ${held}`,
      "start one with `mcpproxy serve --store URL`",
    );
  return lease
    ? finding("replicas", "ok", `${alive.length} alive; ${held}`)
    : finding(
        "replicas",
        "warn",
        `${alive.length} alive, but ${held}: nothing indexes servers or runs the periodic work`,
        "look at the replicas' logs; each needs a data dir of its own",
      );
}
