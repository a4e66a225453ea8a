import { openCatalog } from "../app/open-catalog.ts";
import { choose, count, itemsOf, namesOf, type Waiting, whatWaits } from "../approvals/approval-choice.ts";
import { approveChosen } from "../approvals/approve-waiting.ts";
import { describeLaunch, reviewJson } from "../approvals/launch-review.ts";
import type { ResolvedConfig } from "../config/load-config.ts";
import { ProxyError } from "../errors.ts";
import type { CatalogTool } from "../index/catalog-types.ts";
import type { QuarantinedTool } from "../index/tool-approvals.ts";
import { definitionDiff } from "../security/definition-diff.ts";
import { escapeUnshown } from "../security/hidden-characters.ts";
import type { PendingLaunch } from "../security/launch-spec.ts";
import { readConfigServers } from "../store/config-writer.ts";
import { type ServerEntries, type ServerRegistry, serverRegistryOf } from "../store/server-registry.ts";
import { withCatalogCopy } from "../store/with-store-copy.ts";
import type { CommandValues } from "./command.ts";
import { commandLogger, loadCommandConfig } from "./command-config.ts";
import { commandEditor, registryConfig, storeOverrides, withCommandStore } from "./command-store.ts";

/** `mcpproxy approve`: what it does once its flags are parsed (its flags and help: approve-command.ts). */
export async function runApproveCommand(values: CommandValues, positionals: string[]): Promise<number> {
  const overrides = storeOverrides(values);
  const fileConfig = loadCommandConfig(values, overrides);
  return withCommandStore(fileConfig, async (store) => {
    const registry = store ? serverRegistryOf(store) : undefined;
    // With a store, what waits is in its registry: the servers every replica runs.
    const stored = registry
      ? await registryConfig(registry, fileConfig, (text) => loadCommandConfig(values, overrides, text))
      : undefined;
    // The catalog (quarantined tools, held servers) as the store has it, and the approvals given
    // here pushed to it before the command ends (with-store-copy.ts).
    return withCatalogCopy(store, fileConfig.dataDir, commandLogger(fileConfig), () =>
      review(stored?.config ?? fileConfig, values, positionals, {
        entries: stored?.entries ?? readConfigServers(fileConfig.configPath).servers,
        registry,
      }),
    );
  });
}

/** Where the servers' entries are read and their approvals written: the file, or the store's registry. */
interface Servers {
  entries: ServerEntries;
  registry: ServerRegistry | undefined;
}

async function review(
  config: ResolvedConfig,
  values: Record<string, string | boolean | undefined>,
  positionals: string[],
  servers: Servers,
): Promise<number> {
  // Read-only but for approvals: a proxy may be running and writing the index meanwhile.
  const catalog = await openCatalog(config, commandLogger(config), {
    readOnly: true,
    approvalsWritable: true,
  });
  try {
    const waiting = whatWaits(config, catalog, servers.entries);
    const all = Boolean(values.all);
    const { chosen, approved, withheld } = choose(waiting, positionals, {
      all,
      yesFlagged: Boolean(values["yes-flagged"]),
    });
    const approving = all || positionals.length > 0;
    if (positionals.length > 0 && count(chosen) === 0) {
      const names = namesOf(waiting);
      throw new ProxyError(
        "USAGE",
        `Nothing that waits for approval matches ${positionals.join(", ")}.${names.length > 0 ? ` Waiting: ${names.join(", ")}.` : " Nothing waits."}`,
      );
    }
    if (values.json) {
      if (approving)
        await approveChosen(config, catalog, approved, positionals, {
          registry: servers.registry,
          by: commandEditor("approve"),
          // The decision is said on stdout; a log file, when there is one, keeps it too.
          logger: config.logFile ? commandLogger(config) : undefined,
        });
      process.stdout.write(
        `${reviewJson({
          awaitingApproval: waiting.launches.map(launchSummary),
          heldServers: waiting.servers,
          quarantined: waiting.tools.map(summary),
          heldCapabilities: waiting.capabilities.map(({ definition: _d, approved: _a, ...item }) => item),
          approved: approving ? namesOf(approved) : [],
          ...(count(withheld) > 0 ? { flaggedNotApproved: namesOf(withheld) } : {}),
        })}
`,
      );
      return 0;
    }
    if (count(waiting) === 0) {
      process.stdout.write(
        "Nothing waits for approval: no server an agent wrote, no quarantined tool, prompt or template.\n",
      );
      return 0;
    }
    const shown = approving ? chosen : waiting;
    const lines = describe(shown);
    if (approving) {
      await approveChosen(config, catalog, approved, positionals, {
        registry: servers.registry,
        by: commandEditor("approve"),
        // The decision is said on stdout; a log file, when there is one, keeps it too.
        logger: config.logFile ? commandLogger(config) : undefined,
      });
      if (approved.launches.length > 0) {
        lines.push(
          `Approved what ${approved.launches.map((launch) => launch.server).join(", ")} runs; a running mcpproxy ` +
            "starts it now. What it offers waits for your review once it has listed it: run `mcpproxy approve` again then.",
        );
      }
      if (approved.servers.length > 0) lines.push(`Approved ${approved.servers.join(", ")}.`);
      const tools = approved.tools.length;
      if (tools > 0) lines.push(`Approved ${tools} tool${tools === 1 ? "" : "s"}.`);
      const others = approved.capabilities.length;
      if (others > 0)
        lines.push(`Approved ${others} prompt${others === 1 ? "" : "s"} or resource template(s).`);
      if (count(withheld) > 0) {
        const names = namesOf(withheld);
        lines.push(
          `Not approved, flagged as may be poisoned (see above): ${names.join(", ")}. Read what the scan ` +
            `found; to approve one anyway, name it (\`mcpproxy approve ${itemsOf(withheld)[0]}\`), or add ` +
            "--yes-flagged to approve every flagged one you chose.",
        );
      }
    } else {
      lines.push("", "Approve with `mcpproxy approve SERVER` (or SERVER/NAME, or --all).");
    }
    // Upstream text too (tool names, descriptions) is shown as it runs, never reordered or hidden.
    process.stdout.write(`${escapeUnshown(lines.join("\n"), { keepLineBreaks: true })}\n`);
    return 0;
  } finally {
    await catalog.close();
  }
}

function describe(w: Waiting): string[] {
  const lines: string[] = [];
  for (const launch of w.launches) lines.push(...describeLaunch(launch));
  for (const server of w.servers) {
    lines.push(
      `${server}: new, held whole: it offers nothing (tools, prompts, resources, requests) until approved`,
    );
  }
  const items = [
    ...w.tools.map((tool) => ({ ...tool, label: `${tool.server}/${tool.tool}` })),
    ...w.capabilities.map((item) => ({ ...item, label: `${item.server}/${item.name} (${item.kind})` })),
  ];
  for (const item of items) {
    lines.push(
      `${item.label}: ${item.reason === "new" ? "new on its server" : "changed since it was approved"}`,
    );
    for (const finding of item.findings) lines.push(`  may be poisoned: ${finding}`);
    for (const line of definitionDiff(item.approved, item.definition)) lines.push(`  ${line}`);
  }
  return lines;
}

function launchSummary(launch: PendingLaunch) {
  return {
    server: launch.server,
    change: launch.change,
    ...(launch.at ? { at: launch.at } : {}),
    launch: launch.launch,
    ...(launch.before ? { before: launch.before } : {}),
    variables: [...new Set(launch.variables.map((variable) => variable.name))],
  };
}

function summary(tool: QuarantinedTool<CatalogTool>) {
  return {
    server: tool.server,
    tool: tool.tool,
    name: tool.name,
    reason: tool.reason,
    findings: tool.findings,
  };
}
