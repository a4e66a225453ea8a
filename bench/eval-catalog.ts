import { readFileSync } from "node:fs";

/** The retrieval-eval file format of `../shared/eval` (see its README). */
export interface EvalTool {
  server: string;
  name: string;
  description?: string;
  inputSchema?: Record<string, unknown>;
}

export interface EvalQuery {
  id: string;
  query: string;
  /** Each group is one needed tool; it counts as found when any of its alternatives is retrieved. */
  expected_groups: string[][];
  subset?: string;
}

export interface EvalCatalog {
  name?: string;
  servers?: Record<string, { description?: string }>;
  tools: EvalTool[];
  queries: EvalQuery[];
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
