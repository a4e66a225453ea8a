import { openCatalog } from "../app/open-catalog.ts";
import { ProxyError } from "../errors.ts";
import type { QuarantinedTool } from "../index/tool-approvals.ts";
import type { CatalogTool } from "../index/tool-catalog.ts";
import { definitionDiff } from "../security/definition-diff.ts";
import { COMMON_OPTIONS, type Command, commandLogger, loadCommandConfig } from "./command.ts";

export const approveCommand: Command = {
  name: "approve",
  summary:
    "Review and approve quarantined tools: tools that are new on a known server or changed since they were " +
    "approved are left out of search and refused when called until approved. With no argument, lists them " +
    "with what changed; with SERVER or SERVER/TOOL (or --all), shows what changed and approves them. " +
    "A running proxy picks the approval up within a second.",
  usage: "mcpproxy approve [SERVER[/TOOL] ...] [--all] [--json] [--config FILE] [--data-dir DIR]",
  allowPositionals: true,
  options: {
    all: { type: "boolean", help: "--all              approve every quarantined tool" },
    json: {
      type: "boolean",
      help: "--json             print the quarantined tools (and what was approved) as JSON",
    },
    ...COMMON_OPTIONS,
  },
  async run(values, positionals) {
    const config = loadCommandConfig(values);
    // Read-only but for approvals: a proxy may be running and writing the index meanwhile.
    const catalog = await openCatalog(config, commandLogger(config), {
      readOnly: true,
      approvalsWritable: true,
    });
    try {
      const quarantined = catalog.quarantined();
      const chosen = values.all ? quarantined : quarantined.filter((tool) => matches(tool, positionals));
      if (positionals.length > 0 && chosen.length === 0) {
        throw new ProxyError(
          "USAGE",
          `Nothing quarantined matches ${positionals.join(", ")}.${quarantined.length > 0 ? ` Quarantined: ${quarantined.map(label).join(", ")}.` : " No tool is quarantined."}`,
        );
      }
      const approving = values.all || positionals.length > 0;
      if (values.json) {
        if (approving) catalog.approve(chosen);
        process.stdout.write(
          `${JSON.stringify({ quarantined: quarantined.map(summary), approved: approving ? chosen.map(label) : [] }, null, 2)}\n`,
        );
        return 0;
      }
      if (quarantined.length === 0) {
        process.stdout.write("No tool is quarantined.\n");
        return 0;
      }
      const shown = approving ? chosen : quarantined;
      const lines: string[] = [];
      for (const tool of shown) {
        lines.push(
          `${label(tool)}: ${tool.reason === "new" ? "new on its server" : "changed since it was approved"}`,
        );
        for (const finding of tool.findings) lines.push(`  may be poisoned: ${finding}`);
        for (const line of definitionDiff(tool.approved, tool.definition)) lines.push(`  ${line}`);
      }
      if (approving) {
        const count = catalog.approve(chosen);
        lines.push(`Approved ${count} tool${count === 1 ? "" : "s"}.`);
      } else {
        lines.push("", "Approve with `mcpproxy approve SERVER/TOOL` (or SERVER, or --all).");
      }
      process.stdout.write(`${lines.join("\n")}\n`);
      return 0;
    } finally {
      await catalog.close();
    }
  },
};

const label = (tool: { server: string; tool: string }) => `${tool.server}/${tool.tool}`;

function matches(tool: CatalogTool, targets: readonly string[]): boolean {
  return targets.some((target) => target === tool.server || target === label(tool) || target === tool.name);
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
