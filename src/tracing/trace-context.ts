/**
 * W3C Trace Context (https://www.w3.org/TR/trace-context/): the `traceparent` and `tracestate` a
 * client sends (HTTP headers, or the request's `_meta` keys of SEP-414) and the ones the proxy sends
 * upstream. Everything here reads untrusted input: a value that does not parse is ignored whole,
 * never reflected and never an error, and a tracestate is cut to the spec's bounds.
 */
export interface SpanContext {
  /** 32 lowercase hex digits, not all zero. */
  traceId: string;
  /** 16 lowercase hex digits, not all zero. */
  spanId: string;
  /** The sampled flag: the trace is being recorded. */
  isSampled: boolean;
  /** The vendors' state, carried along unchanged (bounded by `boundTraceState`). */
  traceState?: string | undefined;
}

/** The longest traceparent read: version 00 is 55 characters; later versions may add fields. */
const MAX_TRACEPARENT_CHARS = 256;
/** What a tracestate is cut to (the spec asks to pass on at least 512 characters). */
export const MAX_TRACESTATE_CHARS = 512;
/** At most this many list members (the spec's limit). */
const MAX_TRACESTATE_MEMBERS = 32;
/** A header longer than this is not even split: a client cannot make the proxy work for nothing. */
const MAX_TRACESTATE_INPUT = 8 * 1024;
/** Members longer than this go first when a tracestate must be cut (the spec's advice). */
const LONG_MEMBER_CHARS = 128;

const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-[\s\S]*)?$/;
const ZERO_TRACE = "0".repeat(32);
const ZERO_SPAN = "0".repeat(16);

/** A traceparent as the spec reads it, or undefined for anything else (any type, any length). */
export function parseTraceparent(value: unknown): Omit<SpanContext, "traceState"> | undefined {
  if (typeof value !== "string" || value.length < 55 || value.length > MAX_TRACEPARENT_CHARS)
    return undefined;
  const match = TRACEPARENT.exec(value);
  if (!match) return undefined;
  const [, version, traceId, spanId, flags, rest] = match as unknown as [
    string,
    string,
    string,
    string,
    string,
    string?,
  ];
  // Version ff is invalid; version 00 has nothing after the flags; a later one may, after a dash.
  if (version === "ff" || (version === "00" && rest !== undefined)) return undefined;
  if (traceId === ZERO_TRACE || spanId === ZERO_SPAN) return undefined;
  return { traceId, spanId, isSampled: (Number.parseInt(flags, 16) & 1) === 1 };
}

export function formatTraceparent(context: SpanContext): string {
  return `00-${context.traceId}-${context.spanId}-${context.isSampled ? "01" : "00"}`;
}

const SIMPLE_KEY = /^[a-z][a-z0-9_\-*/]{0,255}$/;
const TENANT_KEY = /^[a-z0-9][a-z0-9_\-*/]{0,240}@[a-z][a-z0-9_\-*/]{0,13}$/;
/** Printable ASCII but `,` and `=`, up to 256 characters, not ending in a space. */
const VALUE = /^[\x20-\x2b\x2d-\x3c\x3e-\x7e]{0,255}[\x21-\x2b\x2d-\x3c\x3e-\x7e]$/;

/**
 * A tracestate within the spec's bounds, or undefined. One that breaks the grammar (a bad key or
 * value, a key twice, more than 32 members) is dropped whole; one over 512 characters loses its
 * members over 128 characters first, then members from the end, as the spec allows.
 */
export function boundTraceState(value: unknown): string | undefined {
  if (typeof value !== "string" || value.length > MAX_TRACESTATE_INPUT) return undefined;
  const members: string[] = [];
  const keys = new Set<string>();
  for (const raw of value.split(",")) {
    const member = raw.trim();
    if (member === "") continue;
    const equals = member.indexOf("=");
    const key = member.slice(0, equals);
    if (equals <= 0 || keys.has(key) || !(SIMPLE_KEY.test(key) || TENANT_KEY.test(key))) return undefined;
    if (!VALUE.test(member.slice(equals + 1))) return undefined;
    keys.add(key);
    members.push(member);
    if (members.length > MAX_TRACESTATE_MEMBERS) return undefined;
  }
  let kept = members;
  const length = (list: string[]) => list.reduce((sum, member) => sum + member.length, 0) + list.length - 1;
  if (length(kept) > MAX_TRACESTATE_CHARS) kept = kept.filter((member) => member.length <= LONG_MEMBER_CHARS);
  while (kept.length > 0 && length(kept) > MAX_TRACESTATE_CHARS) kept = kept.slice(0, -1);
  return kept.length > 0 ? kept.join(",") : undefined;
}

/** Where a client may have put its trace context: the request's `_meta`, an HTTP request's headers. */
export interface TraceCarrier {
  traceparent?: unknown;
  tracestate?: unknown;
}

/**
 * The client's span the proxy's becomes a child of: the first carrier with a valid traceparent (the
 * request's `_meta` is given first: it belongs to this message, where headers belong to the whole
 * HTTP request), with that carrier's tracestate. Undefined when none has one.
 */
export function remoteParent(carriers: readonly (TraceCarrier | undefined)[]): SpanContext | undefined {
  for (const carrier of carriers) {
    const parent = parseTraceparent(carrier?.traceparent);
    if (!parent) continue;
    const traceState = boundTraceState(carrier?.tracestate);
    return traceState ? { ...parent, traceState } : parent;
  }
  return undefined;
}

/** What a call carries upstream: `_meta` keys (SEP-414) and, over streamable HTTP, the same as headers. */
export interface TraceHeaders {
  traceparent: string;
  tracestate?: string | undefined;
}

export function traceHeaders(context: SpanContext): TraceHeaders {
  const traceparent = formatTraceparent(context);
  return context.traceState ? { traceparent, tracestate: context.traceState } : { traceparent };
}

const HEX = Array.from({ length: 256 }, (_, byte) => byte.toString(16).padStart(2, "0"));

function randomHex(bytes: number): string {
  const buffer = crypto.getRandomValues(new Uint8Array(bytes));
  let text = "";
  for (const byte of buffer) text += HEX[byte];
  return text;
}

/** A new trace id (random, never all zero). */
export function newTraceId(): string {
  const id = randomHex(16);
  return id === ZERO_TRACE ? newTraceId() : id;
}

/** A new span id (random, never all zero). */
export function newSpanId(): string {
  const id = randomHex(8);
  return id === ZERO_SPAN ? newSpanId() : id;
}
