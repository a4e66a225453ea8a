import type { Server } from "@modelcontextprotocol/server";

/**
 * A 2026-07-28 request's `_meta` envelope (protocol version, client capabilities, client info, log
 * level) is checked by the SDK's Server with its schema before each handler runs, though a client
 * sends the same envelope with every request. Here the last few small envelopes the era's check
 * passed are remembered, for every server (over HTTP a server may serve one request), and an
 * envelope equal to one of them, value for value, passes without the schema (the check depends on
 * nothing but the envelope's JSON value); any other envelope, and every refusal, is the SDK's own. src/server/checked-envelopes.test.ts holds this to the SDK's answers. The Server's
 * internals named here are the SDK's seams for its role classes (the SDK is pinned exactly).
 */

interface Material {
  envelope?: unknown;
}

interface Codec {
  checkInboundEnvelope(material: Material): string | undefined;
}

interface ServerInternals {
  _negotiatedWireCodec(): Codec;
}

/** Whether two JSON values (as JSON.parse makes them) are equal, key for key, in any key order. */
export function isSameJson(a: unknown, b: unknown, depth = 0): boolean {
  if (a === b) return true;
  if (a === null || b === null || typeof a !== "object" || typeof b !== "object" || depth > 32) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const other = b as unknown[];
    if (a.length !== other.length) return false;
    for (let i = 0; i < a.length; i++) if (!isSameJson(a[i], other[i], depth + 1)) return false;
    return true;
  }
  if (Object.getPrototypeOf(a) !== Object.getPrototypeOf(b)) return false;
  const keys = Object.keys(a);
  if (keys.length !== Object.keys(b).length) return false;
  for (const key of keys) {
    if (!Object.hasOwn(b, key)) return false;
    if (!isSameJson((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key], depth + 1))
      return false;
  }
  return true;
}

/** Envelopes remembered (the ones clients send): a few, whichever servers checked them. */
const MAX_REMEMBERED = 8;
/** An envelope larger than this (values, characters) is checked each time and never kept. */
const MAX_VALUES = 256;
const MAX_CHARS = 8192;

/**
 * A copy of a small JSON value (plain objects, arrays, strings, numbers, booleans, null), or
 * undefined if it is anything else or larger than the bounds: an agent's envelope is kept only if
 * it is small.
 */
export function smallCopy(value: unknown): unknown {
  let values = 0;
  let chars = 0;
  const copy = (item: unknown, depth: number): unknown => {
    if (++values > MAX_VALUES || depth > 16) throw RangeError("large");
    if (item === null || typeof item === "number" || typeof item === "boolean") return item;
    if (typeof item === "string") {
      chars += item.length;
      if (chars > MAX_CHARS) throw RangeError("large");
      return item;
    }
    if (Array.isArray(item)) return item.map((entry) => copy(entry, depth + 1));
    if (typeof item !== "object" || Object.getPrototypeOf(item) !== Object.prototype) throw RangeError("odd");
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(item)) {
      if (key === "__proto__") throw RangeError("odd");
      chars += key.length;
      out[key] = copy((item as Record<string, unknown>)[key], depth + 1);
    }
    return out;
  };
  try {
    return copy(value, 0);
  } catch {
    return undefined;
  }
}

/** Each era's codec as `checkEnvelopesOnce` hands it out, made once. */
const remembering = new WeakMap<Codec, Codec>();

function rememberingCodec(codec: Codec): Codec {
  let memo = remembering.get(codec);
  if (memo) return memo;
  const passed: unknown[] = [];
  memo = Object.create(codec) as Codec;
  memo.checkInboundEnvelope = (material) => {
    const envelope = material.envelope;
    if (envelope !== undefined) for (const known of passed) if (isSameJson(envelope, known)) return undefined;
    const refusal = codec.checkInboundEnvelope(material);
    if (refusal === undefined && envelope !== undefined) {
      // A copy: the envelope itself goes on to the handler.
      const kept = smallCopy(envelope);
      if (kept !== undefined) {
        if (passed.length >= MAX_REMEMBERED) passed.shift();
        passed.push(kept);
      }
    }
    return refusal;
  };
  remembering.set(codec, memo);
  return memo;
}

/** `server` checks an envelope it has seen pass (or another server has) without the SDK's schema. */
export function checkEnvelopesOnce(server: Server): void {
  const internals = server as unknown as ServerInternals;
  const negotiated = internals._negotiatedWireCodec.bind(internals);
  internals._negotiatedWireCodec = () => rememberingCodec(negotiated());
}
