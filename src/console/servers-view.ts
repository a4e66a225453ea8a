import { errorLine } from "../security/html-text.ts";
import type { ToolStats } from "../stats/call-record.ts";
import type { ServerStatus } from "../upstream/pool-types.ts";
import { html, postForm } from "./console-html.ts";

/**
 * The Servers view: each server with its state, era, transport, tool count, call figures and last
 * error (with the hint `mcpproxy doctor` would give), and what a person can do with it: enable or
 * disable, restart, remove. The changes go through the same server editor as `mcpproxy servers`.
 */
export interface ServerRow {
  status: ServerStatus;
  /** What doctor would say to do about its error. */
  hint?: string | undefined;
}

const MODERN = "2026-07-28";

export function serversView(
  rows: readonly ServerRow[],
  stats: readonly ToolStats[],
  options: { csrf: string; canEdit: boolean; indexedTools: number },
): string {
  const byServer = new Map<string, { calls: number; failed: number; p50: number; p95: number }>();
  for (const tool of stats) {
    const figures = byServer.get(tool.server) ?? { calls: 0, failed: 0, p50: 0, p95: 0 };
    figures.calls += tool.calls;
    figures.failed += tool.isErrors + tool.errors + tool.timeouts;
    // A server's latency as its busiest tools have it: the highest percentile of its tools.
    figures.p50 = Math.max(figures.p50, tool.p50Ms);
    figures.p95 = Math.max(figures.p95, tool.p95Ms);
    byServer.set(tool.server, figures);
  }
  const connected = rows.filter((row) => row.status.state === "connected").length;
  const body = rows.map(({ status, hint }) => {
    const figures = byServer.get(status.name);
    const era = status.protocolVersion
      ? `<abbr title="${html(status.protocolVersion)}">${status.protocolVersion === MODERN ? "2026" : "2025"}</abbr>`
      : "";
    const error =
      status.state === "awaiting-approval"
        ? '<div class="hint">Written by an agent: <a href="/console/approvals">review it in Approvals</a>.</div>'
        : status.error
          ? `<div class="error">${html(errorLine(status.error))}</div>${hint ? `<div class="hint">${html(hint)}</div>` : ""}`
          : status.state === "needs-login"
            ? '<div class="hint">It waits for you to log in (OAuth): Log in opens its sign-in page here.</div>'
            : "";
    return [
      `<tr data-server="${html(status.name)}"><th scope="row">${html(status.name)}</th>`,
      `<td class="state state-${html(status.state)}">${html(status.state)}</td><td>${era}</td>`,
      `<td>${html(status.transport)}</td><td class="num">${status.toolCount}</td>`,
      `<td class="num">${figures?.calls ?? 0}</td><td class="num">${figures?.failed ?? 0}</td>`,
      `<td class="num">${figures ? `${Math.round(figures.p50)} / ${Math.round(figures.p95)} ms` : ""}</td>`,
      `<td>${error}</td>`,
      options.canEdit ? `<td><div class="actions">${actions(status, options.csrf)}</div></td>` : "",
      "</tr>",
    ].join("");
  });
  return [
    `<p>${connected} of ${rows.length} servers connected; ${options.indexedTools} tools indexed.</p>`,
    '<div class="table-wrap"><table id="servers"><thead><tr><th>server</th><th>state</th><th>era</th><th>transport</th>',
    '<th class="num">tools</th><th class="num">calls</th><th class="num">failed</th><th class="num">p50 / p95</th><th>last error</th>',
    options.canEdit ? "<th>actions</th>" : "",
    `</tr></thead><tbody>${body.join("")}</tbody></table></div>`,
    options.canEdit
      ? addServerForm(options.csrf)
      : '<p class="hint">This proxy is read-only (mcpproxy.readOnly): its servers are changed in the config file.</p>',
  ].join("");
}

function actions(status: ServerStatus, csrf: string): string {
  const name = status.name;
  const button = (operation: string, label: string, className = "", confirm?: string) =>
    postForm(
      csrf,
      "/console/servers",
      { operation, name },
      `<button type="submit"${className ? ` class="${className}"` : ""} aria-label="${html(`${label} ${name}`)}">${label}</button>`,
      confirm ? { confirm } : {},
    );
  const toggle = status.state === "disabled" ? button("enable", "Enable") : button("disable", "Disable");
  const restart =
    status.state === "disabled" || status.state === "awaiting-approval" ? "" : button("restart", "Restart");
  const remove = button("remove", "Remove", "danger", `Remove ${name} from the config file?`);
  const login =
    status.state === "needs-login"
      ? postForm(
          csrf,
          "/console/servers",
          { operation: "login", name },
          `<button type="submit" class="primary" aria-label="${html(`Log in to ${name}`)}">Log in</button>`,
        )
      : "";
  return login + toggle + restart + remove;
}

/** Add a server: by its fields, or a client's JSON entry pasted as it is (server-form.ts). */
function addServerForm(csrf: string): string {
  const field = (name: string, label: string, input: string) =>
    `<label class="field"><span>${label}</span>${input.replace("<input ", `<input name="${name}" `).replace("<textarea ", `<textarea name="${name}" `)}</label>`;
  return [
    '<h2 id="add">Add a server</h2><div class="card">',
    postForm(
      csrf,
      "/console/servers/add",
      {},
      [
        '<div class="grid">',
        field("name", "Name", '<input type="text" required pattern="[A-Za-z0-9_.-]+" autocomplete="off">'),
        field(
          "command",
          "Command (a local server)",
          '<input type="text" placeholder="npx" autocomplete="off">',
        ),
        field(
          "args",
          "Arguments, one a line",
          '<textarea rows="3" placeholder="-y\n@modelcontextprotocol/server-everything"></textarea>',
        ),
        field(
          "url",
          "Or a URL (a remote server)",
          '<input type="text" placeholder="https://example.com/mcp" autocomplete="off">',
        ),
        field(
          "env",
          "Variables it gets from your environment (names)",
          '<input type="text" placeholder="GITHUB_TOKEN" autocomplete="off">',
        ),
        field(
          "headers",
          "HTTP headers, Name: value a line",
          '<textarea rows="2" placeholder="Authorization: Bearer ${API_TOKEN}"></textarea>',
        ),
        "</div>",
        "<details><summary>Or paste a client's JSON entry</summary>",
        field("json", "JSON (mcpServers, or one entry)", '<textarea rows="5" spellcheck="false"></textarea>'),
        "</details>",
        '<p><button type="submit" class="primary">Add</button> <span class="meta">Checked as the config file is, then saved to it with its comments kept.</span></p>',
      ].join(""),
      { className: "add-server" },
    ),
    "</div>",
  ].join("");
}
