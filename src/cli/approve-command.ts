import { readFileSync } from "node:fs";
import { openCatalog } from "../app/open-catalog.ts";
import { editConfigServers, readConfigServers } from "../config/config-writer.ts";
import { loadConfig, type ResolvedConfig } from "../config/load-config.ts";
import { ProxyError } from "../errors.ts";
import { writeFileAtomic } from "../index/atomic-file.ts";
import type { QuarantinedTool } from "../index/tool-approvals.ts";
import type { CatalogTool } from "../index/tool-catalog.ts";
import { personApproved } from "../security/agent-edits.ts";
import { definitionDiff } from "../security/definition-diff.ts";
import { type PendingLaunch, pendingLaunches } from "../security/launch-spec.ts";
import { COMMON_OPTIONS, type Command, commandLogger, loadCommandConfig } from "./command.ts";
import { describeLaunch } from "./launch-review.ts";

export const approveCommand: Command = {
  name: "approve",
  summary:
    "Review and approve what waits for you: servers an agent added, changed or enabled (nothing of them runs " +
    "until approved), and quarantined tools (new on a known server or changed since approved: left out of " +
    "search and refused when called). With no argument, lists them with what they would run and what " +
    "changed; with SERVER or SERVER/TOOL (or --all), shows them and approves them. A running proxy picks " +
    "the approval up within a second.",
  usage: "mcpproxy approve [SERVER[/TOOL] ...] [--all] [--json] [--config FILE] [--data-dir DIR]",
  allowPositionals: true,
  options: {
    all: { type: "boolean", help: "--all              approve everything that waits" },
    json: {
      type: "boolean",
      help: "--json             print what waits (and what was approved) as JSON",
    },
    ...COMMON_OPTIONS,
  },
  async run(values, positionals) {
    const config = loadCommandConfig(values);
    const { section, servers: entries } = readConfigServers(config.configPath);
    const launches = pendingLaunches(entries);
    // Read-only but for approvals: a proxy may be running and writing the index meanwhile.
    const catalog = await openCatalog(config, commandLogger(config), {
      readOnly: true,
      approvalsWritable: true,
    });
    try {
      const quarantined = catalog.quarantined();
      const approving = Boolean(values.all) || positionals.length > 0;
      const chosenLaunches = values.all
        ? launches
        : launches.filter((launch) => positionals.includes(launch.server));
      const chosenTools = values.all ? quarantined : quarantined.filter((tool) => matches(tool, positionals));
      if (positionals.length > 0 && chosenLaunches.length === 0 && chosenTools.length === 0) {
        const waiting = [...launches.map((launch) => launch.server), ...quarantined.map(label)];
        throw new ProxyError(
          "USAGE",
          `Nothing that waits for approval matches ${positionals.join(", ")}.${waiting.length > 0 ? ` Waiting: ${waiting.join(", ")}.` : " Nothing waits."}`,
        );
      }
      const approve = async () => {
        await approveLaunches(config, section, entries, chosenLaunches);
        return catalog.approve(chosenTools);
      };
      if (values.json) {
        if (approving) await approve();
        process.stdout.write(
          `${JSON.stringify(
            {
              awaitingApproval: launches.map(launchSummary),
              quarantined: quarantined.map(summary),
              approved: approving
                ? [...chosenLaunches.map((launch) => launch.server), ...chosenTools.map(label)]
                : [],
            },
            null,
            2,
          )}\n`,
        );
        return 0;
      }
      if (launches.length === 0 && quarantined.length === 0) {
        process.stdout.write("Nothing waits for approval: no server an agent wrote, no quarantined tool.\n");
        return 0;
      }
      const lines: string[] = [];
      for (const launch of approving ? chosenLaunches : launches) lines.push(...describeLaunch(launch));
      for (const tool of approving ? chosenTools : quarantined) {
        lines.push(
          `${label(tool)}: ${tool.reason === "new" ? "new on its server" : "changed since it was approved"}`,
        );
        for (const finding of tool.findings) lines.push(`  may be poisoned: ${finding}`);
        for (const line of definitionDiff(tool.approved, tool.definition)) lines.push(`  ${line}`);
      }
      if (approving) {
        const count = await approve();
        if (chosenLaunches.length > 0) {
          const names = chosenLaunches.map((launch) => launch.server).join(", ");
          lines.push(
            `Approved what ${names} runs; a running mcpproxy starts ${chosenLaunches.length === 1 ? "it" : "them"} now. ` +
              "Its tools wait for your review once it has listed them: run `mcpproxy approve` again then.",
          );
        }
        if (chosenTools.length > 0) lines.push(`Approved ${count} tool${count === 1 ? "" : "s"}.`);
      } else {
        lines.push("", "Approve with `mcpproxy approve SERVER` (or SERVER/TOOL, or --all).");
      }
      process.stdout.write(`${lines.join("\n")}\n`);
      return 0;
    } finally {
      await catalog.close();
    }
  },
};

/**
 * Records the hash of each launch spec in its entry (`approved`); a running proxy sees the file
 * change and starts the server. The file is put back if the change would not load.
 */
async function approveLaunches(
  config: ResolvedConfig,
  section: "mcpServers" | "servers",
  entries: Record<string, Record<string, unknown>>,
  chosen: readonly PendingLaunch[],
): Promise<void> {
  if (chosen.length === 0) return;
  const edits = chosen.map((launch) => ({
    name: launch.server,
    entry: personApproved(entries[launch.server]!, launch.hash),
  }));
  const before = readFileSync(config.configPath, "utf8");
  await editConfigServers(config.configPath, section, edits, "rolling");
  try {
    loadConfig({ configFlag: config.configPath });
  } catch (error) {
    // Approved, the entries expand the person's variables: one that is not set makes the file invalid.
    await writeFileAtomic(config.configPath, before);
    throw error;
  }
}

const label = (tool: { server: string; tool: string }) => `${tool.server}/${tool.tool}`;

function matches(tool: CatalogTool, targets: readonly string[]): boolean {
  return targets.some((target) => target === tool.server || target === label(tool) || target === tool.name);
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
