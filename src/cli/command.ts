import { parseArgs } from "node:util";
import { ProxyError } from "../errors.ts";

/**
 * A subcommand as plain data: its help text, its flags, and where what it runs is. Only this data
 * is loaded at start-up; a command's implementation (its `-run.ts` module and everything that
 * imports) is loaded when that command runs, so `--version`, `--help` and each command load only
 * what they use (docs/architecture.md, Speed).
 */
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
  /** Imports the command's implementation; it resolves to the exit code. */
  load(): Promise<(values: CommandValues, positionals: string[]) => Promise<number>>;
}

/** The parsed flags of a command line. */
export type CommandValues = Record<string, string | boolean | undefined>;

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

/**
 * `--store URL` for the commands that act on what replicas share (`servers`, `approve`, `auth`,
 * `stats`; `search`, `tools`, `index` and `doctor`): command-store.ts opens it.
 */
export const STORE_OPTION = {
  store: {
    type: "string",
    help: "--store URL        the shared store of a team deployment (postgres://…, or MCPPROXY_STORE; needs MCPPROXY_STORE_KEY): its servers, not the file's",
  },
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
