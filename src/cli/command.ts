import { parseArgs } from "node:util";
import { loadConfig, type ResolvedConfig, type SettingOverrides } from "../config/load-config.ts";
import { ProxyError } from "../errors.ts";
import { createLogger, type Logger } from "../log.ts";

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
  /** The help of a subcommand named in `positionals` (`store status --help`); undefined: the command's. */
  helpOf?(positionals: string[]): string | undefined;
  /** Resolves to the exit code. */
  run(values: Record<string, string | boolean | undefined>, positionals: string[]): Promise<number>;
}

export const COMMON_OPTIONS = {
  config: {
    type: "string",
    help:
      "--config FILE      config file; or MCPPROXY_CONFIG_PATH (default: ./mcp_config.json, then " +
      "~/.mcpproxy/mcp_config.json)",
  },
  "data-dir": {
    type: "string",
    help: "--data-dir DIR     where the index lives; or MCPPROXY_DATA_DIR (default ~/.mcpproxy)",
  },
  help: { type: "boolean", short: "h", help: "-h, --help         show this help" },
} as const satisfies Record<string, CommandOption>;

/** Where help text wraps: the terminal's width, within reason, or 100 columns when not on one. */
export function helpWidth(): number {
  const columns = process.stdout.isTTY ? process.stdout.columns : undefined;
  return Math.max(60, Math.min(120, columns ?? 100));
}

/**
 * Wraps text at word boundaries to `width` columns: the first line starts after `firstIndent`
 * characters already written, the rest are indented by `indent`. Words longer than a line are kept whole.
 */
export function wrapText(text: string, width: number, indent: number, firstIndent = indent): string {
  const lines: string[] = [];
  let line = "";
  let room = width - firstIndent;
  for (const word of text.split(/\s+/).filter(Boolean)) {
    if (line && line.length + 1 + word.length > room) {
      lines.push(line);
      line = word;
      room = width - indent;
    } else {
      line = line ? `${line} ${word}` : word;
    }
  }
  if (line) lines.push(line);
  return lines.join(`\n${" ".repeat(indent)}`);
}

/** Option help is "FLAG  description"; the description starts at this column and wraps back to it. */
const OPTION_COLUMN = 21;

export function commandHelp(command: Command, width = helpWidth()): string {
  const lines = [
    `Usage: ${wrapText(command.usage, width, 7 + command.name.length + 10, 7)}`,
    "",
    wrapText(command.summary, width, 0),
    "",
    "Options:",
  ];
  for (const option of Object.values(command.options)) {
    const flag = `  ${option.help.slice(0, OPTION_COLUMN - 2)}`;
    lines.push(
      `${flag}${wrapText(option.help.slice(OPTION_COLUMN - 2), width, OPTION_COLUMN, OPTION_COLUMN)}`,
    );
  }
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
  /** The config file's content to check instead of the file (an edit, before it is written). */
  text?: string,
): ResolvedConfig {
  const overrides: SettingOverrides = { ...extra };
  if (typeof values["data-dir"] === "string")
    overrides.dataDir = { value: values["data-dir"], flag: "--data-dir" };
  return loadConfig({
    configFlag: typeof values.config === "string" ? values.config : undefined,
    overrides,
    text,
  });
}

export function commandLogger(config: ResolvedConfig): Logger {
  return createLogger({ level: config.logLevel, file: config.logFile || undefined });
}
