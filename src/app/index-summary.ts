import type { ToolCatalog } from "../index/tool-catalog.ts";
import { type RefreshReport, summarizeRefresh } from "./refresh-catalog.ts";

/**
 * What `mcpproxy index` prints after an indexing pass, and its exit code (1 when a server could
 * not be indexed). Shared by the command and by a `serve` that re-indexes at its request.
 */
export interface IndexSummary {
  text: string;
  code: number;
  /** The config of the serve that re-indexed, when a serve did. */
  configPath?: string | undefined;
}

export function summarizeIndexing(report: RefreshReport, catalog: ToolCatalog): IndexSummary {
  const lines = [summarizeRefresh(report)];
  for (const server of report.servers) {
    lines.push(
      server.awaitingApproval
        ? `  HELD    ${server.name}: written by an agent; not started until you approve it (mcpproxy approve ${server.name})`
        : server.error
          ? `  FAILED  ${server.name}: ${server.error.split("\n").join("\n          ")}`
          : `  ok      ${server.name}: ${server.toolCount} tools${skippedNote(server.skipped)}`,
    );
  }
  const poisoned = catalog.findings();
  if (poisoned.length > 0) {
    lines.push(
      `${poisoned.length} tool${poisoned.length === 1 ? "" : "s"} may be poisoned (instructions aimed at the model, hidden text):`,
    );
    for (const tool of poisoned) lines.push(`  ${tool.server}/${tool.tool}: ${tool.findings.join("; ")}`);
  }
  const quarantined = catalog.quarantined();
  if (quarantined.length > 0) {
    lines.push(
      `${quarantined.length} tool${quarantined.length === 1 ? " is" : "s are"} quarantined (left out of search, refused when called) until approved:`,
    );
    for (const tool of quarantined) {
      lines.push(
        `  ${tool.server}/${tool.tool}: ${tool.reason === "new" ? "new" : "changed since approved"}`,
      );
      for (const finding of tool.findings) lines.push(`      may be poisoned: ${finding}`);
    }
    lines.push("Review and approve them with `mcpproxy approve` (it shows what changed).");
  }
  return {
    text: `${lines.join("\n")}\n`,
    code: report.servers.some((server) => server.error) ? 1 : 0,
  };
}

function skippedNote(skipped: readonly string[] | undefined): string {
  return skipped && skipped.length > 0
    ? ` (left out ${skipped.length} malformed: ${skipped.join(", ")})`
    : "";
}
