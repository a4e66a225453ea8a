import { COMMON_OPTIONS, type Command, STORE_OPTION } from "./command.ts";

export const searchCommand: Command = {
  name: "search",
  summary:
    "Search the persisted tool index, as retrieve_tools does. Needs no upstream server running and never\n" +
    "writes to the data dir; run `mcpproxy index` (or `serve`) first to fill the index. With --store, searches\n" +
    "the shared store's catalog (what every replica serves) with its registry's servers; nothing is written to it.",
  usage:
    "mcpproxy search QUERY... [--each] [--top-k N] [--min-score S] [--mode M] [--adaptive] [--json] [--store URL] [--config FILE] [--data-dir DIR]",
  allowPositionals: true,
  options: {
    each: {
      type: "boolean",
      help:
        "--each             each QUERY argument is a request of its own, answered with its own list (as\n" +
        "                   retrieve_tools with queries); without it the arguments are one request",
    },
    "top-k": {
      type: "string",
      help: "--top-k N          how many tools to show, 1-50 (default 5, or MCPPROXY_TOP_K)",
    },
    "min-score": {
      type: "string",
      help:
        "--min-score S      leave out tools scoring below S, 0-1 (default 0.05, or MCPPROXY_MIN_SCORE; scaled\n" +
        "                   down for requests of more than 12 content words)",
    },
    mode: {
      type: "string",
      help:
        "--mode M           auto, lexical, hybrid or llm (default: mcpproxy.search.mode, or MCPPROXY_SEARCH_MODE,\n" +
        "                   else auto: BM25, and the built-in encoder for requests it finds too few words of;\n" +
        "                   llm sends the request and the best candidates to the configured chat model)",
    },
    adaptive: {
      type: "boolean",
      help:
        "--adaptive         cut each list where the scores fall off from the best (MCPPROXY_ADAPTIVE_TOP_K;\n" +
        "                   --top-k stays the most)",
    },
    json: { type: "boolean", help: "--json             print the retrieve_tools JSON result" },
    ...STORE_OPTION,
    ...COMMON_OPTIONS,
  },
  async load() {
    return (await import("./search-run.ts")).runSearchCommand;
  },
};
