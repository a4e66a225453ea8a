import type { ResolvedConfig } from "../config/load-config.ts";
import type { ServerConfig } from "../config/parse-server.ts";
import { createEmbedder } from "../index/embedders/create-embedder.ts";
import { openToolCatalog, type ToolCatalog } from "../index/tool-catalog.ts";
import type { ToolOverrides } from "../index/tool-overrides.ts";
import type { Logger } from "../log.ts";
import { RESERVED_TOOL_NAMES } from "../server/tools/builtin-tools.ts";
import { approvalPolicyOf } from "./approval-policy.ts";

export interface CatalogOpenOptions {
  /** Drop the saved index first (`index --force`, MCPPROXY_RESET_DATA); never with `readOnly`. */
  reset?: boolean;
  /** Open it for reading only (`search`): nothing in the data dir is written or deleted. */
  readOnly?: boolean;
  /** Read-only but for approvals (`approve`, which may run beside a proxy that writes the index). */
  approvalsWritable?: boolean;
  /** The servers as they are now, when they change at run time (serve); else the config's. */
  servers?: () => readonly ServerConfig[];
  /**
   * Wait until every tool has its vector (tool-vectors.ts embeds in the background): the commands
   * that answer once and exit (`search`, `eval`) answer as a serve does once its vectors are in.
   * In `auto` search nothing is embedded until a request needs it, and that request then waits
   * for all of them.
   */
  waitForVectors?: boolean;
  /** Embedding progress; the commands draw it on a TTY. */
  onEmbedProgress?: ((done: number, total: number) => void) | undefined;
  /** Read the search index when first needed or asked (`loadIndex`), not now (serve). */
  deferIndex?: boolean;
}

/** The catalog in the config's data dir, with the built-in tool names kept off-limits and the configured embedder. */
export async function openCatalog(
  config: ResolvedConfig,
  logger: Logger,
  options: CatalogOpenOptions = {},
): Promise<ToolCatalog> {
  // `auto` fuses only the requests BM25 answers weakly: its encoder loads when one comes.
  const isAuto = config.search.mode === "auto";
  const embedder = await createEmbedder(config, process.env, isAuto);
  const catalog = await openToolCatalog({
    dataDir: config.dataDir,
    toolNameLimit: config.toolNameLimit,
    reservedNames: RESERVED_TOOL_NAMES,
    logger,
    reset: options.reset ?? false,
    readOnly: options.readOnly ?? false,
    approvalsWritable: options.approvalsWritable ?? false,
    embedder,
    vectorUse: isAuto ? "fallback" : "always",
    ...(options.waitForVectors ? { fallbackWait: Number.POSITIVE_INFINITY } : {}),
    vectorWeight: config.vectorWeight,
    approvalPolicy: approvalPolicyOf(config, options.servers),
    toolOverrides: toolOverridesOf(options.servers?.() ?? config.servers),
    deferIndex: options.deferIndex ?? false,
    ...(options.onEmbedProgress ? { onEmbedProgress: options.onEmbedProgress } : {}),
  });
  if (options.waitForVectors) {
    try {
      await catalog.whenEmbedded();
    } catch (error) {
      await catalog.close();
      throw error;
    }
  }
  return catalog;
}

/** The person's tool overrides of every server (`tools`, `disabledTools`), for the catalog. */
export function toolOverridesOf(servers: readonly ServerConfig[]): ToolOverrides {
  return new Map(
    servers.flatMap((server) => (server.toolOverrides ? [[server.name, server.toolOverrides]] : [])),
  );
}

/**
 * Embedding progress as one redrawn stderr line, on a terminal only (SPEC: quiet otherwise). The
 * next progress line or the command's summary draws over it.
 */
export function ttyEmbedProgress(): ((done: number, total: number) => void) | undefined {
  if (!process.stderr.isTTY) return undefined;
  return (done, total) => process.stderr.write(`\r\x1b[2KEmbedding tools: ${done}/${total}`);
}
