import type { Server } from "@modelcontextprotocol/server";

/**
 * A 2026-07-28 request's `_meta` envelope (protocol version, client capabilities, client info, log
 * level) is checked by the SDK's Server with its schema before each handler runs, though a client
 * sends the same envelope with every request. Here a server remembers the last envelope its era's
 * check passed, and an envelope equal to it, value for value, passes without the schema (the check
 * depends on nothing but the envelope's JSON value); any other envelope, and every refusal, is the
 * SDK's own. src/server/checked-envelopes.test.ts holds this to the SDK's answers. The Server's
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

/** `server` checks each distinct envelope with the SDK's schema once in a row, not every request. */
export function checkEnvelopesOnce(server: Server): void {
  const internals = server as unknown as ServerInternals;
  const negotiated = internals._negotiatedWireCodec.bind(internals);
  const wrapped = new WeakMap<Codec, Codec>();
  internals._negotiatedWireCodec = () => {
    const codec = negotiated();
    let memo = wrapped.get(codec);
    if (!memo) {
      let passed: unknown;
      let hasPassed = false;
      memo = Object.create(codec) as Codec;
      memo.checkInboundEnvelope = (material) => {
        const envelope = material.envelope;
        if (hasPassed && envelope !== undefined && isSameJson(envelope, passed)) return undefined;
        const refusal = codec.checkInboundEnvelope(material);
        if (refusal === undefined && envelope !== undefined) {
          // Kept as a copy: the envelope object goes on to the handler.
          passed = structuredClone(envelope);
          hasPassed = true;
        }
        return refusal;
      };
      wrapped.set(codec, memo);
    }
    return memo;
  };
}
