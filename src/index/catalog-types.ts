import type { ToolRow } from "../store/sqlite/catalog-store.ts";
import type { UpstreamTool } from "../upstream-tool.ts";

/**
 * What the catalog's search answers with, apart from the catalog itself (tool-catalog.ts), so that
 * the search (catalog-search.ts) can name them without importing the catalog that uses it.
 */

/** A tool the catalog knows: its stored row and its key. */
export interface CatalogTool extends ToolRow {
  key: string;
}

export interface RankedTool {
  tool: CatalogTool;
  definition: UpstreamTool;
  score: number;
}

/** A search's approved hits, and the quarantined tools it left out. */
export interface SearchFound {
  hits: RankedTool[];
  held: CatalogTool[];
}
