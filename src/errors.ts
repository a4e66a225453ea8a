/**
 * The one local error type of mcpproxy. Every message says what to do next; `code` picks the
 * exit status at the CLI edge and the wording at the MCP edge. Wire errors (JSON-RPC) are the
 * SDK's own `McpError` and never this class.
 */
const ERROR_CODES = {
  CONFIG_INVALID: { exit: 2, summary: "the configuration is invalid" },
  CONFIG_NOT_FOUND: { exit: 2, summary: "the configuration file was not found" },
  CONFIG_WRITE_FAILED: { exit: 1, summary: "the config file could not be changed" },
  USAGE: { exit: 2, summary: "the command line is invalid" },
  PROXY_LOOP: { exit: 2, summary: "this proxy would be its own upstream" },
  EMBEDDER_UNAVAILABLE: { exit: 2, summary: "the configured embedding model cannot be used" },
  EMBEDDING_FAILED: { exit: 1, summary: "embedding tools failed" },
  INDEX_UNREADABLE: { exit: 1, summary: "the persisted index cannot be read" },
  INDEX_BUSY: { exit: 1, summary: "another mcpproxy is writing the index" },
  DATA_DIR_UNWRITABLE: { exit: 1, summary: "the data dir cannot be written (a full disk, a read-only one)" },
  UPSTREAM_CONNECT_FAILED: { exit: 1, summary: "an upstream server could not be reached" },
  UPSTREAM_UNAVAILABLE: { exit: 1, summary: "an upstream server is not connected" },
  UPSTREAM_TIMEOUT: { exit: 1, summary: "an upstream server did not answer in time" },
  AWAITING_APPROVAL: { exit: 1, summary: "a server waits for a person's approval" },
  TOOL_NOT_FOUND: { exit: 1, summary: "no such tool" },
  LISTEN_FAILED: { exit: 1, summary: "the HTTP listener could not start" },
  AUTH_FAILED: { exit: 1, summary: "an OAuth login did not complete" },
  PLUGIN_FAILED: { exit: 1, summary: "a plugin failed" },
  PLUGIN_UNAVAILABLE: { exit: 2, summary: "a plugin named in the config could not be loaded" },
  CALL_LIMITED: { exit: 1, summary: "a server's call limit (rate or concurrency) refused a call" },
  SERVICE_FAILED: { exit: 1, summary: "the background service could not be started" },
  STORE_UNAVAILABLE: { exit: 1, summary: "the shared store (PostgreSQL) cannot be reached" },
  INTERNAL: { exit: 1, summary: "an internal error" },
} as const;

export type ErrorCode = keyof typeof ERROR_CODES;

export class ProxyError extends Error {
  override readonly name = "ProxyError";
  readonly code: ErrorCode;
  /** Extra lines (for example every config problem) printed under the message. */
  readonly details: readonly string[];

  constructor(
    code: ErrorCode,
    message: string,
    options: { cause?: unknown; details?: readonly string[] } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.details = options.details ?? [];
  }

  get exitCode(): number {
    return ERROR_CODES[this.code].exit;
  }
}

export function isProxyError(error: unknown): error is ProxyError {
  return error instanceof ProxyError;
}

/**
 * One line for a log or a user: the message of any thrown value with its cause chain, except
 * that a ProxyError's message is already complete and ends the chain.
 */
export function describeError(error: unknown): string {
  const parts: string[] = [];
  let current: unknown = error;
  for (let depth = 0; current !== undefined && current !== null && depth < 4; depth++) {
    const message = current instanceof Error ? current.message : String(current);
    if (message && !parts.some((part) => part.includes(message))) parts.push(message);
    current = current instanceof Error && !(current instanceof ProxyError) ? current.cause : undefined;
  }
  return parts.join(": ") || "unknown error";
}
