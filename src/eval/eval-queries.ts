import { readFileSync } from "node:fs";
import { ProxyError } from "../errors.ts";

/**
 * Queries with the tools that answer them, for `mcpproxy eval` and `npm run eval`. Two formats:
 *  - JSON: `{"queries": [{"query": "…", "expected": ["server/tool", …]}]}` (or the list alone),
 *    where any one expected tool counts; `expected_groups` (a list of such lists) for a task
 *    that needs several tools, as in the eval format;
 *  - text, one query a line: `add two numbers => everything/get-sum | other/add`, where `|`
 *    separates tools that would each be right and `&` separates tools a task needs all of;
 *    blank lines and lines starting with `#` are skipped.
 * A tool is `server/tool` (as the server names it) or its public name `server__tool`.
 */
export interface EvalQuery {
  id: string;
  query: string;
  expected_groups: string[][];
  subset?: string;
}

export function loadQueries(path: string): EvalQuery[] {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    throw new ProxyError("USAGE", `Cannot read the queries file ${path}: ${(error as Error).message}.`);
  }
  const queries = /^\s*[[{]/.test(text) ? fromJson(path, text) : fromText(path, text);
  if (queries.length === 0) throw new ProxyError("USAGE", `${path} holds no queries.`);
  return queries;
}

function fromJson(path: string, text: string): EvalQuery[] {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    throw new ProxyError("USAGE", `${path} is not valid JSON: ${(error as Error).message}.`);
  }
  const list = Array.isArray(raw) ? raw : (raw as { queries?: unknown } | null)?.queries;
  if (!Array.isArray(list))
    throw new ProxyError("USAGE", `${path}: expected {"queries": [...]} or a list of queries.`);
  return list.map((entry, i) => {
    const q = (entry ?? {}) as {
      id?: unknown;
      query?: unknown;
      expected?: unknown;
      expected_groups?: unknown;
      subset?: unknown;
    };
    if (typeof q.query !== "string" || q.query.trim() === "") {
      throw new ProxyError("USAGE", `${path}: queries[${i}].query must be a non-empty string.`);
    }
    const groups = Array.isArray(q.expected_groups)
      ? q.expected_groups
      : Array.isArray(q.expected)
        ? [q.expected]
        : undefined;
    if (!isGroups(groups)) {
      throw new ProxyError(
        "USAGE",
        `${path}: queries[${i}] needs "expected": ["server/tool", …] or "expected_groups".`,
      );
    }
    return {
      id: typeof q.id === "string" ? q.id : `q${i + 1}`,
      query: q.query,
      expected_groups: groups,
      ...(typeof q.subset === "string" ? { subset: q.subset } : {}),
    };
  });
}

function fromText(path: string, text: string): EvalQuery[] {
  const queries: EvalQuery[] = [];
  text.split("\n").forEach((raw, i) => {
    const line = raw.trim();
    if (line === "" || line.startsWith("#")) return;
    const at = line.lastIndexOf("=>");
    const groups =
      at < 0
        ? []
        : line
            .slice(at + 2)
            .split("&")
            .map((group) =>
              group
                .split("|")
                .map((tool) => tool.trim())
                .filter(Boolean),
            );
    const query = at < 0 ? "" : line.slice(0, at).trim();
    if (query === "" || !isGroups(groups)) {
      throw new ProxyError(
        "USAGE",
        `${path}, line ${i + 1}: write "the request => server/tool | server/other_tool".`,
      );
    }
    queries.push({ id: `line ${i + 1}`, query, expected_groups: groups });
  });
  return queries;
}

function isGroups(groups: unknown): groups is string[][] {
  return (
    Array.isArray(groups) &&
    groups.length > 0 &&
    groups.every(
      (g) => Array.isArray(g) && g.length > 0 && g.every((id) => typeof id === "string" && id !== ""),
    )
  );
}
