import type {
  CallToolRequest,
  CallToolResult,
  InputRequiredResult,
  Server,
  ServerContext,
} from "@modelcontextprotocol/server";
import { isInputRequiredResult, ProtocolError, ProtocolErrorCode } from "@modelcontextprotocol/server";
import { plainCallResult } from "../../upstream/plain-call-result.ts";

/**
 * The proxy's tools/call handler, registered so that a plain call skips the SDK's schema checks
 * where they would pass it unchanged. The SDK's Server checks a tools/call request twice (its
 * tools/call wrapper, then the handler's own parse, whose copy the handler gets) and the result
 * once more, per call; for the common request (a name, arguments, perhaps a progress token) and
 * result (plain-call-result.ts) each check is a copy of what it was given. So:
 *  - a request that is not plain goes the SDK's whole way, as before;
 *  - a plain one reaches the handler as the SDK would hand it over (`handedRequest`), through
 *    the same input-required seam (the requestState check, the 2025 shim);
 *  - its result, if plain, is sent as it is; if not, it gets the SDK's own steps: a result without
 *    content gains `content: []`, then the era's schema, whose copy is sent, or whose refusal
 *    is the same -32602 (Invalid tools/call result).
 * src/server/calls/plain-tool-calls.test.ts holds the plain checks to the SDK's answers. The Server's
 * internals named here are the SDK's own seams for its role classes (the SDK is pinned exactly).
 */

type Handler = (
  request: CallToolRequest,
  ctx: ServerContext,
) => Promise<CallToolResult | InputRequiredResult>;

type Codec = {
  validateResult(
    method: string,
    raw: unknown,
  ): { ok: true; value: unknown } | { ok: false; reason: "invalid" | "not-in-era"; message?: string };
};

interface ServerInternals {
  _requestHandlers: Map<string, (request: unknown, ctx: ServerContext) => Promise<unknown>>;
  _invokeInputRequiredCapableHandler(
    method: string,
    handler: Handler,
    request: CallToolRequest,
    ctx: ServerContext,
  ): Promise<CallToolResult | InputRequiredResult>;
  _servedModernEra(): boolean;
  _wireCodec(): Codec;
}

const RELATED_TASK = "io.modelcontextprotocol/related-task";
const PARAM_KEYS: ReadonlySet<string> = new Set(["name", "arguments", "_meta"]);

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && Object.getPrototypeOf(value) === Object.prototype;
}

/** A record the schema copies key by key: plain, without a `__proto__` key it would make a prototype. */
const isPlainRecord = (value: unknown): value is Record<string, unknown> =>
  isPlainObject(value) && !Object.hasOwn(value, "__proto__");

/**
 * Whether the SDK's tools/call request schema (either era, after the 2026 envelope is lifted)
 * passes `request` and hands its params over unchanged: a name, arguments as a record, a `_meta`
 * whose progress token (if any) is a string or a safe integer; nothing else.
 */
export function isPlainCallRequest(request: unknown): request is CallToolRequest {
  if (!isPlainObject(request) || request.method !== "tools/call") return false;
  const params = request.params;
  if (!isPlainObject(params) || typeof params.name !== "string") return false;
  for (const key of Object.keys(params)) if (!PARAM_KEYS.has(key)) return false;
  if (params.arguments !== undefined && !isPlainRecord(params.arguments)) return false;
  const meta = params._meta;
  if (meta === undefined) return true;
  if (!isPlainRecord(meta) || Object.hasOwn(meta, RELATED_TASK)) return false;
  const token = meta.progressToken;
  return token === undefined || typeof token === "string" || Number.isSafeInteger(token);
}

/**
 * A plain request as the SDK's parse hands it over: `{method, params}`, the params' keys in the
 * schema's order (`_meta` with its progress token first, the name, the arguments).
 */
export function handedRequest(request: CallToolRequest): CallToolRequest {
  const { name, arguments: args, _meta: meta } = request.params;
  const ordered =
    meta && meta.progressToken !== undefined && Object.keys(meta)[0] !== "progressToken"
      ? { progressToken: meta.progressToken, ...meta }
      : meta;
  return {
    method: request.method,
    params: {
      ...(ordered ? { _meta: ordered } : {}),
      name,
      ...(args ? { arguments: args } : {}),
    },
  } as CallToolRequest;
}

/** The SDK's last steps for a result that is not plain (its tools/call wrapper's, in order). */
function checkedResult(codec: Codec, result: CallToolResult): CallToolResult {
  const normalized = withContent(result);
  const checked = codec.validateResult("tools/call", normalized);
  if (checked.ok) return checked.value as CallToolResult;
  throw checked.reason === "not-in-era"
    ? new ProtocolError(ProtocolErrorCode.InternalError, "No wire schema for tools/call in the resolved era")
    : new ProtocolError(ProtocolErrorCode.InvalidParams, `Invalid tools/call result: ${checked.message}`);
}

/** Result families that never default into a `{content: []}` success (the SDK's list). */
const FOREIGN_KEYS = ["task", "inputRequests", "requestState"];

/** A plain-object result without content gains `content: []` (the SDK's normalization). */
function withContent(value: CallToolResult): CallToolResult {
  if (
    value === null ||
    typeof value !== "object" ||
    Array.isArray(value) ||
    value.content !== undefined ||
    FOREIGN_KEYS.some((key) => key in value)
  )
    return value;
  return { ...value, content: [] };
}

/** Registers `handler` for tools/call on `server`: the SDK's way, with the plain way in front. */
export function servePlainToolCalls(server: Server, handler: Handler): void {
  server.setRequestHandler("tools/call", handler);
  const internals = server as unknown as ServerInternals;
  const sdk = internals._requestHandlers.get("tools/call")!;
  internals._requestHandlers.set("tools/call", async (request, ctx) => {
    if (!isPlainCallRequest(request)) return sdk(request, ctx);
    const result = await internals._invokeInputRequiredCapableHandler(
      "tools/call",
      handler,
      handedRequest(request),
      ctx,
    );
    if (isInputRequiredResult(result)) return result;
    return (
      plainCallResult(result, internals._servedModernEra() ? "modern" : "legacy") ??
      checkedResult(internals._wireCodec(), result)
    );
  });
}
