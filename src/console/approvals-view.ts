import type { Waiting } from "../approvals/approval-choice.ts";
import { describeLaunch } from "../approvals/launch-review.ts";
import { definitionDiff } from "../security/definition-diff.ts";
import { escapeUnshown } from "../security/hidden-characters.ts";
import { html, postForm } from "./console-html.ts";

/**
 * The Approvals view: everything that waits for a person, in one list, newest first: the servers an
 * agent wrote or changed (their launch spec as `mcpproxy approve` shows it: what runs, and which of
 * the person's variables it would receive), the servers held whole as new, and the tools, prompts
 * and templates that are new or changed (their diff and what the poisoning scan found). Each has
 * Approve and, where the proxy can hold it off for good, Deny; each server has Approve all, which
 * leaves flagged items for a decision of their own, as the command does.
 */
export function approvalsView(waiting: Waiting, csrf: string, canEdit: boolean): string {
  const cards: string[] = [];
  // Newest first: launch specs carry when the agent wrote them; the rest are as the catalog lists them.
  const launches = [...waiting.launches].sort((a, b) => String(b.at ?? "").localeCompare(String(a.at ?? "")));
  for (const launch of launches) {
    const [headline, ...details] = describeLaunch(launch);
    cards.push(
      card(
        `${launch.server}`,
        "server written by an agent",
        `<p>${html(headline)}</p><pre>${html(details.join("\n"))}</pre>`,
        decisions(csrf, canEdit, launch.server, { deny: launch.change === "added" ? "remove" : undefined }),
      ),
    );
  }
  for (const server of waiting.servers)
    cards.push(
      card(
        server,
        "new server, held whole",
        "<p>It offers nothing (tools, prompts, resources, requests) until approved.</p>",
        decisions(csrf, canEdit, server, { deny: "disable-server" }),
      ),
    );
  for (const tool of waiting.tools) {
    const target = `${tool.server}/${tool.tool}`;
    cards.push(
      card(
        target,
        tool.reason === "new" ? "new tool" : "changed tool",
        findings(tool.findings) + diff(definitionDiff(tool.approved, tool.definition)),
        decisions(csrf, canEdit, target, { deny: "disable-tool", flagged: tool.findings.length > 0 }),
      ),
    );
  }
  for (const item of waiting.capabilities) {
    const target = `${item.server}/${item.name}`;
    cards.push(
      card(
        target,
        `${item.reason === "new" ? "new" : "changed"} ${item.kind}`,
        findings(item.findings) + diff(definitionDiff(item.approved, item.definition)),
        decisions(csrf, canEdit, target, { flagged: item.findings.length > 0 }),
      ),
    );
  }
  if (cards.length === 0)
    return '<p id="nothing-waits">Nothing waits for approval: no server an agent wrote, no new or changed tool, prompt or template.</p>';
  const servers = [
    ...new Set([
      ...waiting.servers,
      ...waiting.tools.map((tool) => tool.server),
      ...waiting.capabilities.map((item) => item.server),
    ]),
  ];
  const all =
    canEdit && servers.length > 0
      ? `<div class="card"><h3>Approve all of a server</h3><p class="meta">Flagged items stay for a decision of their own.</p><div class="actions">${servers
          .map((server) =>
            postForm(
              csrf,
              "/console/approve",
              { target: server, whole: "1" },
              `<button type="submit" aria-label="${html(`Approve all of ${server}`)}">${html(server)}: approve all</button>`,
            ),
          )
          .join("")}</div></div>`
      : "";
  return `<p>${cards.length} waiting, newest first.</p>${all}<div id="waiting">${cards.join("")}</div>`;
}

function card(title: string, kind: string, body: string, buttons: string): string {
  return `<section class="card" data-item="${html(title)}"><h3>${html(escapeUnshown(title))} <span class="meta">· ${html(kind)}</span></h3>${body}${buttons}</section>`;
}

function findings(found: readonly string[]): string {
  return found.length === 0
    ? ""
    : `<ul>${found.map((finding) => `<li class="finding">may be poisoned: ${html(escapeUnshown(finding))}</li>`).join("")}</ul>`;
}

function diff(lines: readonly string[]): string {
  if (lines.length === 0) return "";
  const shown = lines.map((line) => {
    const text = html(escapeUnshown(line));
    const mark = line.trimStart();
    return mark.startsWith("+")
      ? `<span class="diff-add">${text}</span>`
      : mark.startsWith("-")
        ? `<span class="diff-del">${text}</span>`
        : text;
  });
  return `<pre class="diff">${shown.join("\n")}</pre>`;
}

function decisions(
  csrf: string,
  canEdit: boolean,
  target: string,
  options: { deny?: "remove" | "disable-tool" | "disable-server" | undefined; flagged?: boolean },
): string {
  if (!canEdit) return '<p class="hint">Read-only proxy: approve with <code>mcpproxy approve</code>.</p>';
  const approve = postForm(
    csrf,
    "/console/approve",
    { target },
    `<button type="submit" class="primary" aria-label="${html(`Approve ${target}`)}">Approve${options.flagged ? " anyway" : ""}</button>`,
  );
  const deny = options.deny
    ? postForm(
        csrf,
        "/console/deny",
        { target, as: options.deny },
        `<button type="submit" class="danger" aria-label="${html(`Deny ${target}`)}">Deny</button>`,
        {
          confirm:
            options.deny === "remove"
              ? `Remove ${target} from the config file?`
              : options.deny === "disable-server"
                ? `Disable ${target}?`
                : `Disable ${target} for good (disabledTools)?`,
        },
      )
    : "";
  return `<div class="actions">${approve}${deny}</div>`;
}
