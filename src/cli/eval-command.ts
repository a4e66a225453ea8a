import { COMMON_OPTIONS, type Command } from "./command.ts";

export const evalCommand: Command = {
  name: "eval",
  summary:
    "Measure search on your own servers before trusting it: give requests with the tools that should answer " +
    "them, and get recall@1/5/10 and MRR@10 from the saved index, each miss with what ranked above it, and " +
    '(--compare) the same with other settings. QUERIES is JSON ({"queries": [{"query": ..., "expected": ' +
    '["server/tool"]}]}) or text lines `request => server/tool | server/other`.',
  usage: "mcpproxy eval QUERIES [--compare] [--mode M] [--json] [--config FILE] [--data-dir DIR]",
  allowPositionals: true,
  options: {
    compare: {
      type: "boolean",
      help:
        "--compare          also run without the min score; with an embedder, without it and at vector weight 0.5;\n" +
        "                   in llm mode, without the chat model (the search it re-ranks)",
    },
    mode: {
      type: "string",
      help: "--mode M           auto, lexical, hybrid or llm (default: mcpproxy.search.mode, or MCPPROXY_SEARCH_MODE, else auto)",
    },
    json: { type: "boolean", help: "--json             print every query's ranking and the figures as JSON" },
    ...COMMON_OPTIONS,
  },
  async load() {
    return (await import("./eval-run.ts")).runEvalCommand;
  },
};
