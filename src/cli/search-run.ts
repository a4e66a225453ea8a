import { openCatalog } from "../app/open-catalog.ts";
import { startPlugins } from "../app/start-plugins.ts";
import type { ResolvedConfig } from "../config/load-config.ts";
import { ProxyError } from "../errors.ts";
import { rerankerFor } from "../index/llm-rerank.ts";
import type { RetrieveToolsResult } from "../index/retrieve-tools.ts";
import { retrieveRankedAll } from "../server/tools/ranked-retrieve.ts";
import { answerOf } from "../server/tools/search-answer.ts";
import type { CommandValues } from "./command.ts";
import { commandLogger, loadCommandConfig } from "./command-config.ts";
import { storeOverrides, withCatalogToRead } from "./command-store.ts";

/** `mcpproxy search`: what it does once its flags are parsed (its flags and help: search-command.ts). */
export async function runSearchCommand(values: CommandValues, positionals: string[]): Promise<number> {
  const queries = (values.each ? positionals : [positionals.join(" ")]).map((query) => query.trim());
  if (queries.length === 0 || queries.some((query) => !query))
    throw new ProxyError("USAGE", 'search needs a QUERY, e.g. `mcpproxy search "create an issue"`.');
  const overrides = {
    ...storeOverrides(values),
    ...(typeof values["top-k"] === "string" ? { topK: { value: values["top-k"], flag: "--top-k" } } : {}),
    ...(typeof values["min-score"] === "string"
      ? { minScore: { value: values["min-score"], flag: "--min-score" } }
      : {}),
    ...(typeof values.mode === "string" ? { searchMode: { value: values.mode, flag: "--mode" } } : {}),
    ...(values.adaptive ? { adaptiveTopK: { value: true, flag: "--adaptive" } } : {}),
  };
  return withCatalogToRead(
    loadCommandConfig(values, overrides),
    (text) => loadCommandConfig(values, overrides, text),
    (config) => search(config, queries, values),
  );
}

async function search(
  config: ResolvedConfig,
  queries: string[],
  values: Record<string, string | boolean | undefined>,
): Promise<number> {
  const logger = commandLogger(config);
  // Read-only whatever the settings say: MCPPROXY_RESET_DATA in a client's environment once made
  // every search wipe the index.
  const catalog = await openCatalog(config, logger, { readOnly: true, waitForVectors: true });
  // The same rankers as retrieve_tools, so `search --json` prints what an agent would get.
  const plugins = await startPlugins(config, logger);
  try {
    // Not counted in stats.db: search never writes to the data dir.
    const rerank = rerankerFor(config.search, logger);
    const lists = await retrieveRankedAll(catalog, plugins, queries, {
      topK: config.topK,
      minScore: config.minScore,
      rerank,
      isAdaptive: config.adaptiveTopK,
    });
    const answer = answerOf(lists, Boolean(values.each), []);
    if (values.json) {
      process.stdout.write(`${JSON.stringify(answer, null, 2)}\n`);
      return 0;
    }
    const blocks = lists.map((result) => [
      ...(values.each ? [`== ${result.query}`] : []),
      ...listLines(result),
    ]);
    process.stdout.write(`${blocks.map((lines) => lines.join("\n")).join("\n\n")}\n`);
    return 0;
  } finally {
    await plugins.dispose();
    await catalog.close();
  }
}

/** One ranked list as text: its notes, then each tool with its score and first line, or the hint. */
function listLines(result: RetrieveToolsResult): string[] {
  const notes = (result.notes ?? []).map((note) => `note: ${note}`);
  if (result.tools.length === 0) return [...notes, result.hint ?? ""];
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
  return [...notes, ...lines];
}
