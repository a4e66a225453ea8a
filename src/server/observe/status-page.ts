import type { RetrieveToolsResult } from "../../index/retrieve-tools.ts";
import type { GateStatus } from "../../limits/call-gate.ts";
import { errorLine, escapeHtml } from "../../security/html-text.ts";
import type { ToolStats } from "../../stats/call-record.ts";
import { statsReport } from "../../stats/stats-report.ts";
import type { ServerStatus } from "../../upstream/pool-types.ts";
import { PRODUCT, VERSION } from "../../version.ts";

/**
 * The status page at `/` of the HTTP transport: the servers with their state, tool count and last
 * error; the most used tools and the failing ones; and a search box that runs the real index and
 * shows the scores. Plain HTML rendered on the server (no script, no build step), behind the same
 * host guard and token as /mcp. Everything shown is escaped.
 */
export interface StatusSources {
  servers(): readonly ServerStatus[];
  indexedTools(): number;
  stats?: (() => readonly ToolStats[]) | undefined;
  search(query: string): Promise<RetrieveToolsResult>;
}

const html = escapeHtml;
const shownError = errorLine;

const STYLE = `body{font:15px/1.45 system-ui,sans-serif;margin:2rem auto;max-width:70rem;padding:0 1rem;color:#1b1f24;background:#fbfbfc}
h1{font-size:1.5rem}h2{font-size:1.15rem;margin-top:2rem}table{border-collapse:collapse;width:100%}
th,td{text-align:left;padding:.35rem .6rem;border-bottom:1px solid #dde1e6;vertical-align:top}
th{background:#eef1f4}.state-connected{color:#17803d;font-weight:600}.state-failed,.state-needs-login{color:#b42318;font-weight:600}
.error{color:#b42318;font-size:.9em}form{display:flex;gap:.5rem}input[type=search]{flex:1;font-size:1rem;padding:.45rem}
button{font-size:1rem;padding:.45rem 1rem}.score{font-variant-numeric:tabular-nums}small{color:#5b6470}`;

/** `profile` names the profile the sources are scoped to (its page is /p/<name>/); unset, the whole proxy. */
export async function renderStatusPage(
  sources: StatusSources,
  query: string | undefined,
  profile?: string,
): Promise<string> {
  const servers = sources.servers();
  const connected = servers.filter((server) => server.state === "connected").length;
  const rows = servers
    .map(
      (server) =>
        `<tr><td>${html(server.name)}</td><td class="state-${html(server.state)}">${html(server.state)}</td>` +
        `<td>${html(server.transport)}</td><td>${html(server.protocolVersion ?? "")}</td><td>${server.toolCount}</td>` +
        `<td>${server.limits ? html(limitsText(server.limits)) : ""}</td>` +
        `<td class="error">${server.error ? html(shownError(server.error)) : ""}</td></tr>`,
    )
    .join("");
  const parts = [
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${PRODUCT} status</title>`,
    `<meta name="viewport" content="width=device-width, initial-scale=1"><style>${STYLE}</style></head><body>`,
    `<h1>${PRODUCT} ${html(VERSION)}${profile ? `: profile ${html(profile)}` : ""}</h1>`,
    `<p>${connected} of ${servers.length} servers connected; ${sources.indexedTools()} tools indexed.</p>`,
    `<h2>Search</h2><form method="get" action="${profile ? `/p/${html(profile)}/` : "/"}"><input type="search" name="q" value="${html(query ?? "")}" placeholder="what do you want to do?" aria-label="search tools"><button type="submit">Search</button></form>`,
  ];
  if (query?.trim()) {
    const result = await sources.search(query);
    parts.push(
      result.tools.length === 0
        ? `<p id="results">No tool matched. ${html(result.hint ?? "")}</p>`
        : `<table id="results"><tr><th>tool</th><th>score</th><th>description</th></tr>${result.tools
            .map(
              (tool) =>
                `<tr><td>${html(tool.name)}</td><td class="score">${tool.score.toFixed(2)}</td><td>${html(tool.description.split("\n")[0])}</td></tr>`,
            )
            .join("")}</table>`,
    );
  }
  parts.push(
    `<h2>Servers</h2><table id="servers"><tr><th>server</th><th>state</th><th>transport</th><th>protocol</th><th>tools</th><th>limits</th><th>last error</th></tr>${rows}</table>`,
  );
  if (sources.stats) {
    const report = statsReport(sources.stats(), {
      indexedTools: sources.indexedTools(),
      servers: servers.length,
      top: 10,
    });
    const line = (t: (typeof report.top)[number]) =>
      `<tr><td>${html(t.server)}__${html(t.tool)}</td><td>${t.calls}</td><td>${Math.round(t.successRate * 100)}%</td>` +
      `<td>${t.meanMs} ms</td><td class="error">${t.lastError ? html(shownError(t.lastError)) : ""}</td></tr>`;
    const head = "<tr><th>tool</th><th>calls</th><th>ok</th><th>mean</th><th>last error</th></tr>";
    parts.push(
      `<h2>Most used tools</h2><p><small>${report.totals.calls} calls, ${report.totals.failures} failed</small></p>`,
      report.top.length
        ? `<table id="top">${head}${report.top.map(line).join("")}</table>`
        : "<p>No calls yet.</p>",
      "<h2>Failing tools</h2>",
      report.failing.length
        ? `<table id="failing">${head}${report.failing.map(line).join("")}</table>`
        : "<p>None.</p>",
    );
  }
  parts.push("</body></html>");
  return parts.join("\n");
}

/** A server's call limits in a few words: the limits, then what is in flight, waiting and refused. */
function limitsText(limits: GateStatus): string {
  const set = [
    limits.rateLimit ? `${limits.rateLimit.perMinute}/min (burst ${limits.rateLimit.burst})` : "",
    limits.maxConcurrent !== undefined ? `${limits.maxConcurrent} at once` : "",
  ].filter(Boolean);
  const refused = limits.rejected.rate + limits.rejected.concurrency + limits.rejected.queue;
  return `${set.join(", ")}: ${limits.inFlight} in flight, ${limits.queued} queued, ${refused} refused`;
}
