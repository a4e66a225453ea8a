import { existsSync, readFileSync } from "node:fs";
import type { EvalQuery } from "../src/eval/eval-queries.ts";

export type { EvalQuery };

/**
 * The retrieval-eval file format: the tools of many servers and the queries asked of them, each
 * query with `expected_groups` (every group one tool the query needs, found when any of its
 * alternatives is retrieved). The public etom-msc-bench set (docs/benchmarks.md) is in this format.
 */
export interface EvalTool {
  server: string;
  name: string;
  description?: string;
  inputSchema?: Record<string, unknown>;
}

export interface EvalCatalog {
  name?: string;
  servers?: Record<string, { description?: string }>;
  tools: EvalTool[];
  queries: EvalQuery[];
}

/** The variable that names the eval set when no path is given (docs/benchmarks.md). */
export const EVAL_SET_ENV = "MCPPROXY_EVAL_SET";

/** The eval set: the path given, else MCPPROXY_EVAL_SET's; undefined when neither is there. */
export function evalSetPath(given?: string): string | undefined {
  const path = given || process.env[EVAL_SET_ENV];
  return path && existsSync(path) ? path : undefined;
}

/** Why there is no eval set, in one line that says what to do. */
export function missingEvalSet(given?: string): string {
  const path = given || process.env[EVAL_SET_ENV];
  return path
    ? `the eval set ${path} does not exist`
    : `no eval set: pass the path of an eval catalog (such as etom-msc-bench.json) or set ${EVAL_SET_ENV} to it`;
}

/** The eval set's path; a bench that cannot run without it exits 2 with the reason. */
export function requireEvalSet(given?: string): string {
  const path = evalSetPath(given);
  if (path) return path;
  process.stderr.write(`${missingEvalSet(given)}\n`);
  process.exit(2);
}

export function loadEvalCatalog(path: string): EvalCatalog {
  const raw = JSON.parse(readFileSync(path, "utf8")) as Partial<EvalCatalog>;
  if (!Array.isArray(raw.tools) || !Array.isArray(raw.queries)) {
    throw new Error(`${path} is not an eval catalog: it needs "tools" and "queries" arrays`);
  }
  return raw as EvalCatalog;
}

/** A tool's id as the eval file writes it. Server names may contain "/", so ids are never split. */
export const toolId = (server: string, name: string) => `${server}/${name}`;

/** The URL path at which the catalog server serves one server. */
export const serverPath = (server: string) => `/s/${encodeURIComponent(server)}/mcp`;

function fnv1a(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193) >>> 0;
  return h;
}

/**
 * The split by server: every server hashed into one of two disjoint halves, and each query into
 * the half that holds all its expected tools ("cross" when they are in both). A change tuned on
 * one half is checked on the other.
 */
export function splitGroupOf(expectedGroups: readonly (readonly string[])[]): "half A" | "half B" | "cross" {
  const halves = new Set(
    expectedGroups.flat().map((id) => (fnv1a(id.slice(0, id.lastIndexOf("/"))) & 1 ? "half A" : "half B")),
  );
  return halves.size === 1 ? ([...halves][0] as "half A" | "half B") : "cross";
}
