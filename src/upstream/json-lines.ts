import { ProtocolError } from "@modelcontextprotocol/client";
import { idOfTruncatedMessage } from "../json-line-splitter.ts";

/**
 * A server error code (JSON-RPC reserves -32000 to -32099 for them) for a response too large to
 * pass on; MCP and the SDK use -32000, -32001 and -32002 for other things.
 */
const MESSAGE_TOO_LARGE = -32010;

/** What a request whose answer was too large gets instead, on every transport. */
export function tooLargeText(bytes: string, limit: number): string {
  return (
    `the server sent a message of ${bytes} bytes, over the limit of ${limit} bytes ` +
    "(maxResultBytes, MCPPROXY_MAX_RESULT_BYTES); it was dropped"
  );
}

/** What a request gets in place of its answer that was too large (`tooLargeText`), as a ProtocolError. */
export function tooLargeError(bytes: string, limit: number): ProtocolError {
  return new ProtocolError(MESSAGE_TOO_LARGE, tooLargeText(bytes, limit));
}

/**
 * The error response that takes the place of a message of `bytes` dropped for being over `limit`,
 * known by its first and last bytes: undefined when it was no response (a request or notification
 * from the server cannot be answered in its place) or its id cannot be read.
 */
export function answerInPlaceOf(head: string, tail: string, bytes: number, limit: number) {
  const id = idOfTruncatedMessage(head, tail);
  if (id === undefined || isRequestHead(head)) return undefined;
  return {
    jsonrpc: "2.0" as const,
    id,
    error: { code: MESSAGE_TOO_LARGE, message: tooLargeText(String(bytes), limit) },
  };
}

/** Whether the first bytes of a message show a request or notification (a method before any result). */
function isRequestHead(head: string): boolean {
  return /^\s*\{\s*("jsonrpc"\s*:\s*"2\.0"\s*,\s*("id"\s*:[^,]*,\s*)?)?"method"\s*:/.test(head);
}

/**
 * Whether a parsed line has the shape of a JSON-RPC 2.0 message: a request or notification (a
 * method, params an object if any), or a response (an id, and a result or an error with a code).
 * A structural check in place of the SDK's schema: on the call path every message was otherwise
 * validated twice more (the protocol layer and the handlers check what they use); here it is
 * only the framing that must be right.
 */
export function isJsonRpcMessage(value: unknown): boolean {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return false;
  const message = value as Record<string, unknown>;
  if (message.jsonrpc !== "2.0") return false;
  const { id, method, params } = message;
  const hasId = typeof id === "string" || (typeof id === "number" && Number.isFinite(id));
  if (typeof method === "string") {
    if (id !== undefined && !hasId) return false;
    return params === undefined || (params !== null && typeof params === "object" && !Array.isArray(params));
  }
  if (!hasId && id !== null) return false;
  if ("result" in message) return message.result !== null && typeof message.result === "object";
  const error = message.error as { code?: unknown } | null | undefined;
  return error !== null && typeof error === "object" && typeof error.code === "number";
}
