import type { CallToolResult, Client, StandardSchemaV1 } from "@modelcontextprotocol/client";

/**
 * The common tools/call result told without the SDK's schema: text blocks, and perhaps
 * structuredContent and isError (and a 2026 server's serverInfo stamp). The SDK checks every
 * result of a call against its revision's CallToolResult schema, which for the common result costs
 * more than the rest of the call's work in the proxy; the answer, for these results, is the result
 * itself (a copy with the same keys in the schema's order). So `plainCallResult` answers only where
 * that holds, and anything else (an image, any other `_meta`, a key of its own, a `__proto__` key
 * the schema drops, a wrong type) goes to the SDK's own check, exactly as before.
 * src/upstream/plain-call-result.test.ts holds the two to the same answers.
 */

/** The keys of a plain result, in the order the SDK's schema writes them. */
const RESULT_KEYS = new Map([
  ["_meta", 0],
  ["content", 1],
  ["structuredContent", 2],
  ["isError", 3],
]);

const SERVER_INFO_META_KEY = "io.modelcontextprotocol/serverInfo";

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && Object.getPrototypeOf(value) === Object.prototype;
}

/** `{type: "text", text}`, those keys only, in that order: a content block of either revision. */
export function isPlainTextBlock(block: unknown): boolean {
  if (!isPlainObject(block) || block.type !== "text" || typeof block.text !== "string") return false;
  const keys = Object.keys(block);
  return keys.length === 2 && keys[0] === "type";
}

/**
 * A 2026 result's `_meta` as every 2026 server stamps it, and as the schema writes it back: none
 * but the server's `{name, version}` (serverInfo, which the schema rebuilds: other keys, or these
 * in another order, would come back otherwise), or empty.
 */
function isPlainResultMeta(meta: unknown): boolean {
  if (!isPlainObject(meta)) return false;
  const keys = Object.keys(meta);
  if (keys.length === 0) return true;
  if (keys.length !== 1 || keys[0] !== SERVER_INFO_META_KEY) return false;
  const info = meta[SERVER_INFO_META_KEY];
  if (!isPlainObject(info) || typeof info.name !== "string" || typeof info.version !== "string") return false;
  const infoKeys = Object.keys(info);
  return infoKeys.length === 2 && infoKeys[0] === "name";
}

/**
 * A plain result as the SDK's CallToolResult schema of `era` writes it back, or undefined where
 * the schema is to decide: `value` itself when its keys are in the schema's order, else a copy in
 * that order (a 2026 server stamps its `_meta` last; the schema writes it first). A 2025 schema
 * rebuilds structuredContent as a record (a `__proto__` key would be dropped); a 2026 one takes it
 * as it is, and a `_meta` as 2026 servers stamp it (`isPlainResultMeta`); a 2025 result with a
 * `_meta` is the schema's to check.
 */
export function plainCallResult(value: unknown, era: "modern" | "legacy"): CallToolResult | undefined {
  if (!isPlainObject(value)) return undefined;
  let last = -1;
  let isInOrder = true;
  let hasContent = false;
  for (const key of Object.keys(value)) {
    const at = RESULT_KEYS.get(key);
    if (at === undefined) return undefined;
    if (at < last) isInOrder = false;
    last = at;
    const field = value[key];
    if (key === "content") {
      if (!Array.isArray(field)) return undefined;
      for (const block of field) if (!isPlainTextBlock(block)) return undefined;
      hasContent = true;
    } else if (key === "isError") {
      if (typeof field !== "boolean") return undefined;
    } else if (key === "_meta") {
      if (era === "legacy" || !isPlainResultMeta(field)) return undefined;
    } else if (era === "legacy" && (!isPlainObject(field) || Object.hasOwn(field, "__proto__"))) {
      return undefined;
    }
  }
  if (!hasContent) return undefined;
  if (isInOrder) return value as CallToolResult;
  const ordered: Record<string, unknown> = {};
  for (const key of RESULT_KEYS.keys()) if (Object.hasOwn(value, key)) ordered[key] = value[key];
  return ordered as CallToolResult;
}

/** The SDK's per-era codec, whose `validateResult` the Client runs on each result it is given no schema for. */
interface WireCodec {
  validateResult(
    method: string,
    raw: unknown,
  ): { ok: true; value: unknown } | { ok: false; reason: "invalid" | "not-in-era"; message?: string };
}

/**
 * The result schema a forwarded tools/call is sent with (`client.request(request, schema, …)`): a
 * plain result as it is, anything else through the codec of the client's era, with the SDK's own
 * issue text. It is what the Client checks when given none, without building the check twice.
 */
export function callResultSchema(client: Client): StandardSchemaV1<unknown, CallToolResult> {
  let schema = schemas.get(client);
  if (!schema) {
    schema = schemaFor(client);
    schemas.set(client, schema);
  }
  return schema;
}

/** One a connected client: its era is settled at connect. */
const schemas = new WeakMap<Client, StandardSchemaV1<unknown, CallToolResult>>();

function schemaFor(client: Client): StandardSchemaV1<unknown, CallToolResult> {
  // The negotiated era's codec (Protocol._wireCodec, the SDK's accessor for its role classes).
  const codec = (client as unknown as { _wireCodec(): WireCodec })._wireCodec();
  const era = client.getProtocolEra() === "modern" ? "modern" : "legacy";
  return {
    "~standard": {
      version: 1,
      vendor: "mcpproxy",
      validate(value) {
        const plain = plainCallResult(value, era);
        if (plain) return { value: plain };
        const outcome = codec.validateResult("tools/call", value);
        if (outcome.ok) return { value: outcome.value as CallToolResult };
        return {
          issues: [
            { message: outcome.reason === "invalid" ? String(outcome.message) : "not-in-era: tools/call" },
          ],
        };
      },
    },
  };
}
