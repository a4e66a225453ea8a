import type { RetrievedTool, RetrieveToolsResult } from "../index/retrieve-tools.ts";
import { analyze, isStemTerm } from "../index/tokenizer.ts";
import { type ToolFields, toolFields } from "../index/tool-document.ts";
import { escapeUnshown } from "../security/hidden-characters.ts";
import { html } from "./console-html.ts";

/**
 * The Search view: the real `retrieve_tools` (the same ranking an agent gets, per profile) with each
 * hit's score and why it ranked: which words of the request its fields hold (its name, description,
 * parameters, server), each field's words as the index reads them, exact or by stem. A hit that
 * shares no word was found by meaning (the vectors).
 */
interface Explained {
  field: keyof ToolFields;
  words: string[];
}

const FIELDS: readonly (keyof ToolFields)[] = ["name", "description", "params", "server"];
const LABELS: Record<keyof ToolFields, string> = {
  name: "name",
  description: "description",
  params: "parameters",
  server: "server",
};

/** The words of `query` each field of `hit` holds: as written, or by stem (shown as "~stem"). */
export function explainHit(query: string, hit: RetrievedTool): Explained[] {
  const asked = analyze(query);
  const fields = toolFields(hit.server, {
    name: hit.tool,
    description: hit.description,
    inputSchema: hit.inputSchema as never,
    ...(hit.title ? { title: hit.title } : {}),
  });
  const explained: Explained[] = [];
  for (const field of FIELDS) {
    const held = new Set(analyze(fields[field]));
    const exact = asked.filter((term) => !isStemTerm(term) && held.has(term));
    // A stem counts where the word itself did not match.
    const stems = asked.filter(
      (term, i) => isStemTerm(term) && held.has(term) && !exact.includes(asked[i - 1] ?? ""),
    );
    const words = [...new Set([...exact, ...stems])];
    if (words.length > 0) explained.push({ field, words });
  }
  return explained;
}

export function searchView(
  query: string,
  profile: string,
  profiles: readonly string[],
  result: RetrieveToolsResult | undefined,
): string {
  const options = ["", ...profiles]
    .map(
      (name) =>
        `<option value="${html(name)}"${name === profile ? " selected" : ""}>${name === "" ? "whole proxy" : `profile ${html(name)}`}</option>`,
    )
    .join("");
  const form =
    '<form method="get" action="/console/search" class="row" role="search">' +
    `<input type="search" name="q" value="${html(query)}" placeholder="what do you want to do?" aria-label="search tools" autofocus>` +
    (profiles.length > 0 ? `<select name="profile" aria-label="profile">${options}</select>` : "") +
    '<button type="submit" class="primary">Search</button></form>';
  if (!result) return form;
  if (result.tools.length === 0)
    return `${form}<p id="results">No tool matched. ${html(result.hint ?? "")}</p>`;
  const rows = result.tools.map((hit, rank) => {
    const why = explainHit(query, hit);
    const reasons =
      why.length === 0
        ? '<span class="meta">by meaning (no word in common)</span>'
        : why
            .map(
              ({ field, words }) =>
                `${LABELS[field]}: ${words.map((word) => `<mark>${html(word)}</mark>`).join(" ")}`,
            )
            .join("; ");
    return [
      `<tr><td class="num">${rank + 1}</td><th scope="row">${html(escapeUnshown(hit.name))}</th>`,
      `<td class="num score">${hit.score.toFixed(3)}</td>`,
      `<td>${html(escapeUnshown((hit.description.split("\n")[0] ?? "").slice(0, 240)))}</td>`,
      `<td class="matched">${reasons}</td></tr>`,
    ].join("");
  });
  const held = result.awaitingApproval;
  const notes = [
    ...(result.notes ?? []),
    ...(held
      ? [
          `${held.tools} more matching tool(s) of ${held.servers.join(", ")} wait for approval (see Approvals).`,
        ]
      : []),
  ]
    .map((note) => `<p class="hint">${html(note)}</p>`)
    .join("");
  return [
    form,
    '<div class="table-wrap"><table id="results"><thead><tr><th class="num">#</th><th>tool</th><th class="num">score</th><th>description</th><th>why it ranked</th></tr></thead>',
    `<tbody>${rows.join("")}</tbody></table></div>${notes}`,
  ].join("");
}
