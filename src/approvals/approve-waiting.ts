import { existsSync, readFileSync } from "node:fs";
import { loadConfig, type ResolvedConfig } from "../config/load-config.ts";
import { configTextWithServers } from "../config/registry-text.ts";
import type { ToolCatalog } from "../index/tool-catalog.ts";
import type { Logger } from "../log.ts";
import { personApproved } from "../security/agent-edits.ts";
import type { PendingLaunch } from "../security/launch-spec.ts";
import { updateConfigServers } from "../store/config-writer.ts";
import type { ServerEntries, ServerRegistry } from "../store/server-registry.ts";
import { namesOf, type Waiting } from "./approval-choice.ts";

/**
 * Approving what a person chose of what waits (approval-choice.ts): the one implementation
 * `mcpproxy approve` and the console both call. Launch specs are approved in the config file (or
 * the shared store's registry); servers held whole, tools, prompts and templates in the catalog.
 * Every decision is logged, with who made it.
 */
export interface ApproveOptions {
  /** Where a launch spec's approval is written with a shared store: its registry (else the config file). */
  registry?: ServerRegistry | undefined;
  /** Who decided, as the log and the registry's history say it ("mcpproxy approve by ann@host", "the console"). */
  by: string;
  logger?: Logger | undefined;
}

export async function approveChosen(
  config: ResolvedConfig,
  catalog: ToolCatalog,
  chosen: Waiting,
  /** What the person named (SERVER or SERVER/NAME): a server named whole is approved whole. */
  targets: readonly string[],
  options: ApproveOptions,
): Promise<void> {
  await approveLaunches(config, chosen.launches, options);
  // A server named whole is approved whole (one held as new then offers what it approves), but not
  // one whose launch spec was just approved: what it offers has not been seen yet.
  const whole = new Set([...chosen.servers, ...targets.filter((target) => !target.includes("/"))]);
  for (const server of whole) {
    const isConfigured = config.servers.some((s) => s.name === server && !s.awaitingApproval);
    if (isConfigured) catalog.capabilities?.approveServer(server);
  }
  catalog.capabilities?.approve(chosen.capabilities);
  catalog.approve(chosen.tools);
  const names = namesOf(chosen);
  if (names.length > 0) options.logger?.info(`approved by ${options.by}: ${names.join(", ")}`);
}

/**
 * Records the hash of each launch spec in its entry (`approved`); a running proxy sees the file
 * change (with a store: every replica hears of the registry's) and starts the server. A change that
 * would not load is not written.
 */
async function approveLaunches(
  config: ResolvedConfig,
  chosen: readonly PendingLaunch[],
  options: ApproveOptions,
): Promise<void> {
  if (chosen.length === 0) return;
  // The hash recorded is the one shown: an entry changed since stays unapproved, one removed is left.
  const plan = (entries: ServerEntries) =>
    chosen.flatMap((launch) => {
      const entry = entries[launch.server];
      return entry ? [{ name: launch.server, entry: personApproved(entry, launch.hash) }] : [];
    });
  const validate = (text: string) => loadConfig({ configFlag: config.configPath, text });
  if (options.registry) {
    const fileText = existsSync(config.configPath) ? readFileSync(config.configPath, "utf8") : undefined;
    await options.registry.edit(plan, {
      by: options.by,
      validate: (servers) => validate(configTextWithServers(fileText, servers)),
    });
    return;
  }
  await updateConfigServers(config.configPath, ({ servers: entries }) => plan(entries), {
    backupAs: "rolling",
    validate,
  });
}
