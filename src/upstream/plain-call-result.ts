import type { CallToolResult, Client, StandardSchemaV1 } from "@modelcontextprotocol/client";

/**
 * The common tools/call result told without the SDK's schema: text blocks, and perhaps
 * structuredContent and isError. The SDK checks every result of a call against its revision's
 * CallToolResult schema, which for the common result costs more than the rest of the call's work
 * in the proxy; the answer, for these results, is the result itself (a copy with the same keys in
 * the same order). So `isPlainCallResult` says yes only where that holds, and anything else (an
 * image, a `_meta`, a key of its own, a `__proto__` key the schema drops, a wrong type) goes to
 * the SDK's own check, exactly as before. src/upstream/plain-call-result.test.ts holds the two to
 * the same answers.
 */

/** The keys of a plain result, in the order the SDK's schema writes them. */
const RESULT_KEYS = new Map([
  ["content", 0],
  ["structuredContent", 1],
  ["isError", 2],
]);

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
 * Whether the SDK's CallToolResult schema of `era` passes `value` as it is. A 2025 schema rebuilds
 * structuredContent as a record (a `__proto__` key would be dropped); a 2026 one takes it as it is.
 */
export function isPlainCallResult(value: unknown, era: "modern" | "legacy"): boolean {
  if (!isPlainObject(value)) return false;
  let last = -1;
  let hasContent = false;
  for (const key of Object.keys(value)) {
    const at = RESULT_KEYS.get(key);
    if (at === undefined || at <= last) return false;
    last = at;
    const field = value[key];
    if (key === "content") {
      if (!Array.isArray(field)) return false;
      for (const block of field) if (!isPlainTextBlock(block)) return false;
      hasContent = true;
    } else if (key === "isError") {
      if (typeof field !== "boolean") return false;
    } else if (era === "legacy" && (!isPlainObject(field) || Object.hasOwn(field, "__proto__"))) {
      return false;
    }
  }
  return hasContent;
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
        if (isPlainCallResult(value, era)) return { value: value as CallToolResult };
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
