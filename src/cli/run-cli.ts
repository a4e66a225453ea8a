import { ProxyError } from "../errors.ts";
import { PRODUCT, VERSION, versionLine } from "../version.ts";
import { approveCommand } from "./approve-command.ts";
import { authCommand } from "./auth-command.ts";
import {
  type Command,
  type CommandValues,
  commandHelp,
  helpWidth,
  parseCommandArgs,
  wrapText,
} from "./command.ts";
import { consoleCommand } from "./console-command.ts";
import { doctorCommand } from "./doctor-command.ts";
import { evalCommand } from "./eval-command.ts";
import { importCommand } from "./import-command.ts";
import { indexCommand } from "./index-command.ts";
import { searchCommand } from "./search-command.ts";
import { serveCommand } from "./serve-command.ts";
import { serversCommand } from "./servers-command.ts";
import { serviceCommand } from "./service-command.ts";
import { startCommand } from "./start-command.ts";
import { statsCommand } from "./stats-command.ts";
import { statusCommand } from "./status-command.ts";
import { stopCommand } from "./stop-command.ts";
import { storeCommand } from "./store-command.ts";
import { toolsCommand } from "./tools-command.ts";
import { trayCommand } from "./tray-command.ts";

const COMMANDS: readonly Command[] = [
  serveCommand,
  startCommand,
  stopCommand,
  statusCommand,
  consoleCommand,
  trayCommand,
  serviceCommand,
  indexCommand,
  searchCommand,
  toolsCommand,
  serversCommand,
  statsCommand,
  approveCommand,
  authCommand,
  importCommand,
  doctorCommand,
  evalCommand,
  storeCommand,
];

function mainHelp(): string {
  const lines = [
    `${PRODUCT} ${VERSION}: one MCP server in front of many. Agents search every upstream tool with`,
    "retrieve_tools and run them with call_tool, instead of loading thousands of tool schemas.",
    "",
    "Usage: mcpproxy <command> [options]",
    "",
    "Commands:",
    ...COMMANDS.map((command) => `  ${command.name.padEnd(8)} ${wrapText(command.summary, helpWidth(), 11)}`),
    "",
    "Options:",
    "  -h, --help       show help (also `mcpproxy <command> --help`)",
    "  -v, --version    print the version",
    "",
    "Config: --config FILE, MCPPROXY_CONFIG_PATH, ./mcp_config.json, ~/.mcpproxy/mcp_config.json (in that order).",
    "Search: MCPPROXY_SEARCH_MODE=auto (default: BM25, and the built-in sentence encoder for the requests whose",
    "words it finds too little of) | lexical (BM25 alone) | hybrid (BM25 and vectors in every search) | llm (a chat",
    "model re-ranks: MCPPROXY_LLM_BASE_URL, MCPPROXY_LLM_MODEL, MCPPROXY_LLM_API_KEY_ENV names the key's variable;",
    "the request and tool descriptions go to that endpoint). MCPPROXY_EMBEDDER=USE (the built-in encoder: no",
    "download, no network) | HF (MCPPROXY_HF_MODEL: a local model directory or a Hugging Face id) | OPENAI",
    "(OPENAI_API_KEY, MCPPROXY_OPENAI_BASE_URL, MCPPROXY_OPENAI_MODEL) | BM25; MCPPROXY_VECTOR_WEIGHT; MCPPROXY_MIN_SCORE.",
    "Traces: MCPPROXY_TRACES=1 (or mcpproxy.traces.enabled) exports OpenTelemetry spans over OTLP/HTTP to",
    "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT (default http://localhost:4318/v1/traces); names and outcomes only.",
  ];
  return `${lines.join("\n")}\n`;
}

/** Runs one command line and resolves to the exit code; throws ProxyError for user mistakes. */
export async function runCli(argv: string[]): Promise<number> {
  const [first, ...rest] = argv;
  if (first === undefined && process.stdout.isTTY) {
    // It reads the config file: loaded only here, as each command's implementation is when it runs.
    const { gettingStarted } = await import("./getting-started.ts");
    process.stdout.write(gettingStarted(process.env, process.cwd()));
    return 0;
  }
  if (first === undefined || first === "-h" || first === "--help" || first === "help") {
    process.stdout.write(mainHelp());
    return first === undefined ? 2 : 0;
  }
  if (first === "-v" || first === "--version" || first === "version") {
    process.stdout.write(`${versionLine()}\n`);
    return 0;
  }
  const command = COMMANDS.find((c) => c.name === first);
  if (!command) {
    throw new ProxyError(
      "USAGE",
      `Unknown command "${first}". Commands: ${COMMANDS.map((c) => c.name).join(", ")}. Run \`mcpproxy --help\`.`,
    );
  }
  const { values, positionals } = parseCommandArgs(command, rest);
  if (values.help) {
    process.stdout.write(command.helpOf?.(positionals) ?? commandHelp(command));
    return 0;
  }
  const run = await command.load();
  return run(values as CommandValues, positionals);
}
