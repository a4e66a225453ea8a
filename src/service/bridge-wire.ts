/**
 * What the stdio bridge needs to speak MCP's streamable HTTP as a client would, without the SDK:
 * the headers a 2026-07-28 request must carry (derived from its body, as the SDK's client derives
 * them, so the service's header/body cross-checks pass), and the messages of an SSE stream.
 */

export type JsonRpcMessage = Record<string, unknown>;

/** The `_meta` key a 2026-07-28 request names its protocol revision with. */
const PROTOCOL_VERSION_META_KEY = "io.modelcontextprotocol/protocolVersion";

/** The body field each method's `Mcp-Name` header mirrors. */
const NAME_HEADER_SOURCE: Readonly<Record<string, string>> = {
  "tools/call": "name",
  "prompts/get": "name",
  "resources/read": "uri",
  "tasks/get": "taskId",
  "tasks/update": "taskId",
  "tasks/cancel": "taskId",
};

export const isRequest = (message: JsonRpcMessage) =>
  typeof message.method === "string" && message.id !== undefined && message.id !== null;
export const isNotification = (message: JsonRpcMessage) =>
  typeof message.method === "string" && message.id === undefined;
export const isResponse = (message: JsonRpcMessage) =>
  message.method === undefined && ("result" in message || "error" in message);

/** The revision a request claims in its `_meta` envelope (2026-07-28 and later), or undefined. */
export function envelopeVersion(message: JsonRpcMessage): string | undefined {
  const params = message.params as { _meta?: Record<string, unknown> } | undefined;
  const version = params?._meta?.[PROTOCOL_VERSION_META_KEY];
  return typeof version === "string" ? version : undefined;
}

/** The per-request headers of a 2026-07-28 request: its revision, method and (for some) name. */
export function modernHeaders(message: JsonRpcMessage, version: string): Record<string, string> {
  const method = String(message.method);
  const headers: Record<string, string> = { "mcp-protocol-version": version, "mcp-method": method };
  const field = Object.hasOwn(NAME_HEADER_SOURCE, method) ? NAME_HEADER_SOURCE[method] : undefined;
  const params = message.params as Record<string, unknown> | undefined;
  const value = field && params && typeof params === "object" ? params[field] : undefined;
  if (typeof value === "string") headers["mcp-name"] = headerValue(value);
  return headers;
}

/** A value as an HTTP field: plain printable ASCII as it is, anything else base64 between sentinels. */
function headerValue(value: string): string {
  const isPlain =
    value.length > 0 &&
    value === value.trim() &&
    !(value.startsWith("=?base64?") && value.endsWith("?=")) &&
    [...value].every((char) => char === "\t" || (char >= " " && char <= "~"));
  if (isPlain) return value;
  const bytes = new TextEncoder().encode(value);
  return `=?base64?${Buffer.from(bytes).toString("base64")}?=`;
}

/** A JSON-RPC error answer to `id`, for what the service could not be asked or did not answer. */
export function errorAnswer(id: unknown, message: string, code = -32603): JsonRpcMessage {
  return { jsonrpc: "2.0", id: id ?? null, error: { code, message } };
}

/**
 * The JSON-RPC messages of an SSE body, as they arrive (the `data` of each event; comments, `id`,
 * `retry` and keep-alives skipped). Ends when the stream does; throws when it breaks.
 */
export async function* sseMessages(body: ReadableStream<Uint8Array>): AsyncGenerator<JsonRpcMessage> {
  const decoder = new TextDecoder();
  let buffer = "";
  let data: string[] = [];
  for await (const chunk of body) {
    buffer += decoder.decode(chunk, { stream: true });
    let newline = buffer.indexOf("\n");
    while (newline >= 0) {
      const line = buffer.slice(0, newline).replace(/\r$/, "");
      buffer = buffer.slice(newline + 1);
      newline = buffer.indexOf("\n");
      if (line === "") {
        const text = data.join("\n");
        data = [];
        if (text) {
          const message = parseMessage(text);
          if (message) yield* message;
        }
      } else if (line.startsWith("data:")) data.push(line.slice(line[5] === " " ? 6 : 5));
    }
  }
}

/** One JSON-RPC message or a batch of them, from text; undefined when it is not JSON. */
export function parseMessage(text: string): JsonRpcMessage[] | undefined {
  try {
    const value = JSON.parse(text) as unknown;
    if (Array.isArray(value)) return value.filter(isObject);
    return isObject(value) ? [value] : undefined;
  } catch {
    return undefined;
  }
}

const isObject = (value: unknown): value is JsonRpcMessage =>
  value !== null && typeof value === "object" && !Array.isArray(value);

/**
 * Whether the service was never reached (nothing listens, or no service runs): the message did not
 * arrive, and may be sent again once the service is back. A connection that broke after the
 * message went out is not this: what it asked may have run.
 */
export function isUnreachable(error: unknown, url: string | undefined): boolean {
  if (!url) return true;
  const code = (error as { code?: string }).code ?? "";
  return /ECONNREFUSED|ConnectionRefused|FailedToOpenSocket/i.test(
    `${code} ${(error as Error)?.message ?? ""}`,
  );
}

/** The answer to a request the service did not answer: never reached, or lost on the way. */
export function unreachableMessage(error: unknown): string {
  if (error !== undefined && !isUnreachable(error, "-")) return WENT_AWAY;
  const why = error instanceof Error ? ` (${error.message})` : "";
  return (
    `The mcpproxy service is not running${why}: start it with \`mcpproxy start\`, or run ` +
    "`mcpproxy serve --standalone` to serve without it."
  );
}

export const WENT_AWAY =
  "The mcpproxy service went away before it answered (a restart or a crash): the request may or may " +
  "not have run. Call it again once `mcpproxy status` says the service runs.";
