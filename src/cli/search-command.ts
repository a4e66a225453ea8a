import { openCatalog } from "../app/open-catalog.ts";
import { startPlugins } from "../app/start-plugins.ts";
import { ProxyError } from "../errors.ts";
import { rerankerFor } from "../index/llm-rerank.ts";
import { retrieveRanked } from "../server/ranked-retrieve.ts";
import { COMMON_OPTIONS, type Command, commandLogger, loadCommandConfig } from "./command.ts";

export const searchCommand: Command = {
  name: "search",
  summary:
    "Search the persisted tool index, as retrieve_tools does. Needs no upstream server running and never\n" +
    "writes to the data dir; run `mcpproxy index` (or `serve`) first to fill the index.",
  usage:
    "mcpproxy search QUERY [--top-k N] [--min-score S] [--mode M] [--json] [--config FILE] [--data-dir DIR]",
  allowPositionals: true,
  options: {
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
        "--mode M           lexical, hybrid or llm (default: mcpproxy.search.mode, or MCPPROXY_SEARCH_MODE; llm\n" +
        "                   sends the request and the best candidates to the configured chat model)",
    },
    json: { type: "boolean", help: "--json             print the retrieve_tools JSON result" },
    ...COMMON_OPTIONS,
  },
  async run(values, positionals) {
    const query = positionals.join(" ").trim();
    if (!query)
      throw new ProxyError("USAGE", 'search needs a QUERY, e.g. `mcpproxy search "create an issue"`.');
    const config = loadCommandConfig(values, {
      ...(typeof values["top-k"] === "string" ? { topK: { value: values["top-k"], flag: "--top-k" } } : {}),
      ...(typeof values["min-score"] === "string"
        ? { minScore: { value: values["min-score"], flag: "--min-score" } }
        : {}),
      ...(typeof values.mode === "string" ? { searchMode: { value: values.mode, flag: "--mode" } } : {}),
    });
    const logger = commandLogger(config);
    // Read-only whatever the settings say: MCPPROXY_RESET_DATA in a client's environment once made
    // every search wipe the index.
    const catalog = await openCatalog(config, logger, { readOnly: true, waitForVectors: true });
    // The same rankers as retrieve_tools, so `search --json` prints what an agent would get.
    const plugins = await startPlugins(config, logger);
    try {
      // Not counted in stats.db: search never writes to the data dir.
      const rerank = rerankerFor(config.search, logger);
      const result = await retrieveRanked(catalog, plugins, query, config.topK, config.minScore, { rerank });
      if (values.json) {
        process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
        return 0;
      }
      const notes = (result.notes ?? []).map((note) => `note: ${note}`);
      if (result.tools.length === 0) {
        process.stdout.write(`${[...notes, result.hint].join("\n")}\n`);
        return 0;
      }
      const lines = result.tools.map((tool, i) => {
        const description = (tool.description.split("\n")[0] ?? "").trim();
        const short = description.length > 110 ? `${description.slice(0, 107)}...` : description;
        return `${i + 1}. ${tool.name}  (score ${tool.score.toFixed(2)})\n   ${short}`;
      });
      const held = result.awaitingApproval;
      if (held) {
        lines.push(
          `(${held.tools} more matching tool(s) of ${held.servers.join(", ")} wait for approval: ` +
            `review them with \`mcpproxy approve\`, approve them with \`${held.command}\`)`,
        );
      }
      process.stdout.write(`${[...notes, ...lines].join("\n")}\n`);
      return 0;
    } finally {
      await plugins.dispose();
      await catalog.close();
    }
  },
};
