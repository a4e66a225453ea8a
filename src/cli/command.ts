import { parseArgs } from "node:util";
import { loadConfig, type ResolvedConfig, type SettingOverrides } from "../config/load-config.ts";
import { ProxyError } from "../errors.ts";
import { createEmbedder } from "../index/embedders/create-embedder.ts";
import { openToolCatalog, type ToolCatalog } from "../index/tool-catalog.ts";
import { createLogger, type Logger } from "../log.ts";
import { BUILTIN_TOOL_NAMES } from "../server/builtin-tools.ts";

/** A subcommand as plain data: its help text, its flags, and what it runs. */
export interface CommandOption {
  type: "string" | "boolean";
  short?: string;
  /** One line for --help, e.g. "--port P  port for HTTP (default 8000)". */
  help: string;
}

export interface Command {
  name: string;
  summary: string;
  usage: string;
  options: Record<string, CommandOption>;
  allowPositionals?: boolean;
  /** Resolves to the exit code. */
  run(values: Record<string, string | boolean | undefined>, positionals: string[]): Promise<number>;
}

export const COMMON_OPTIONS = {
  config: {
    type: "string",
    help: "--config FILE      config file (default: ./mcp_config.json, then ~/.mcpproxy/mcp_config.json)",
  },
  "data-dir": { type: "string", help: "--data-dir DIR     where the index lives (default ~/.mcpproxy)" },
  help: { type: "boolean", short: "h", help: "-h, --help         show this help" },
} as const satisfies Record<string, CommandOption>;

export function commandHelp(command: Command): string {
  const lines = [`Usage: ${command.usage}`, "", command.summary, "", "Options:"];
  for (const option of Object.values(command.options)) lines.push(`  ${option.help}`);
  return `${lines.join("\n")}\n`;
}

export function parseCommandArgs(command: Command, argv: string[]) {
  try {
    return parseArgs({
      args: argv,
      options: Object.fromEntries(
        Object.entries(command.options).map(([name, o]) => [
          name,
          o.short ? { type: o.type, short: o.short } : { type: o.type },
        ]),
      ),
      allowPositionals: command.allowPositionals ?? false,
      strict: true,
    });
  } catch (error) {
    throw new ProxyError("USAGE", `${(error as Error).message}. Run \`mcpproxy ${command.name} --help\`.`, {
      cause: error,
    });
  }
}

/** Loads the config with the flags every command shares plus the command's own setting flags. */
export function loadCommandConfig(
  values: Record<string, string | boolean | undefined>,
  extra: SettingOverrides = {},
): ResolvedConfig {
  const overrides: SettingOverrides = { ...extra };
  if (typeof values["data-dir"] === "string")
    overrides.dataDir = { value: values["data-dir"], flag: "--data-dir" };
  return loadConfig({ configFlag: typeof values.config === "string" ? values.config : undefined, overrides });
}

export function commandLogger(config: ResolvedConfig): Logger {
  return createLogger({ level: config.logLevel, file: config.logFile || undefined });
}

export interface CommandCatalogOptions {
  /** Drop the saved index first (`index --force`, MCPPROXY_RESET_DATA); never with `readOnly`. */
  reset?: boolean;
  /** Open it for reading only (`search`): nothing in the data dir is written or deleted. */
  readOnly?: boolean;
  /** Embedding progress; the commands draw it on a TTY. */
  onEmbedProgress?: ((done: number, total: number) => void) | undefined;
}

/** The catalog in the config's data dir, with the built-in tool names kept off-limits and the configured embedder. */
export async function openCommandCatalog(
  config: ResolvedConfig,
  logger: Logger,
  options: CommandCatalogOptions = {},
): Promise<ToolCatalog> {
  const embedder = await createEmbedder(config);
  return openToolCatalog({
    dataDir: config.dataDir,
    toolNameLimit: config.toolNameLimit,
    reservedNames: BUILTIN_TOOL_NAMES,
    logger,
    reset: options.reset ?? false,
    readOnly: options.readOnly ?? false,
    embedder,
    vectorWeight: config.vectorWeight,
    ...(options.onEmbedProgress ? { onEmbedProgress: options.onEmbedProgress } : {}),
  });
}

/**
 * Embedding progress as one redrawn stderr line, on a terminal only (SPEC: quiet otherwise). The
 * next progress line or the command's summary draws over it.
 */
export function ttyEmbedProgress(): ((done: number, total: number) => void) | undefined {
  if (!process.stderr.isTTY) return undefined;
  return (done, total) => process.stderr.write(`\r\x1b[2KEmbedding tools: ${done}/${total}`);
}
