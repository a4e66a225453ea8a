import type { FetchLike } from "@modelcontextprotocol/client";
import { answerInPlaceOf, tooLargeError } from "./json-lines.ts";

/**
 * The fetch of the HTTP client transports (streamable HTTP and legacy SSE), with every message a
 * server sends bounded by `maxBytes` before the SDK reads it, as the stdio transport bounds its
 * lines (json-lines.ts):
 *  - a JSON body (the answer to one POST) over the limit is not read further: the request fails
 *    with a JSON-RPC error naming the limit (-32010, as on stdio);
 *  - an SSE event (a POST's response stream, the GET stream, the legacy SSE stream) over the limit
 *    is cut off and hidden from the SDK (its type is changed, and the SDK parses only `message`
 *    events), and when it answered a request, an error event for that request takes its place;
 *    the stream and the server go on;
 *  - any other body (an error page) is cut off at the limit.
 * The SDK would otherwise hold and parse whatever arrives: a 300 MB result took the proxy to 1.9 GiB.
 */
export function boundedFetch(baseFetch: FetchLike, maxBytes: number): FetchLike {
  return async (url, init) => {
    const response = await baseFetch(url, init);
    if (!response.body) return response;
    const type = response.headers.get("content-type") ?? "";
    const declared = Number(response.headers.get("content-length") ?? Number.NaN);
    const bounded = type.includes("text/event-stream")
      ? response.body.pipeThrough(boundEvents(maxBytes))
      : response.body.pipeThrough(boundBody(maxBytes, Number.isFinite(declared) ? declared : undefined));
    return new Response(bounded, {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
  };
}

/** A body that fails, unread past the limit, once it is longer than `maxBytes`. */
function boundBody(maxBytes: number, declared: number | undefined): TransformStream<Uint8Array, Uint8Array> {
  let size = 0;
  const tooLarge = (bytes: string) => tooLargeError(bytes, maxBytes);
  return new TransformStream({
    start(controller) {
      if (declared !== undefined && declared > maxBytes) controller.error(tooLarge(String(declared)));
    },
    transform(chunk, controller) {
      size += chunk.length;
      if (size > maxBytes) controller.error(tooLarge(`more than ${maxBytes}`));
      else controller.enqueue(chunk);
    },
  });
}

const LF = 0x0a;
const CR = 0x0d;
/** How much of an over-long event is kept at each end: enough to read its JSON-RPC id. */
export const EDGE_BYTES = 512;

/** Where the next line of `bytes` from `at` ends (its CR or LF), or -1 if it does not end in them. */
export function nextLineEnd(bytes: Uint8Array, at: number): number {
  const lf = bytes.indexOf(LF, at);
  const cr = bytes.indexOf(CR, at);
  return lf < 0 ? cr : cr < 0 ? lf : Math.min(lf, cr);
}
const encoder = new TextEncoder();

/**
 * Passes SSE events through until one grows past `maxBytes`; that one is ended at once with an
 * `event:` line the SDK ignores, the rest of it is skipped to the blank line that ends it, and an
 * error event for its request id (read from its first and last bytes) follows. Memory stays
 * bounded by the edges kept; only line ends are looked for (native indexOf), never parsed.
 */
export function boundEvents(maxBytes: number): TransformStream<Uint8Array, Uint8Array> {
  let eventBytes = 0;
  let isAtLineStart = true;
  let isAfterCr = false;
  let isSkipping = false;
  let head: Uint8Array = new Uint8Array(0);
  let tail: Uint8Array = new Uint8Array(0);

  const keepEdges = (piece: Uint8Array) => {
    if (head.length < EDGE_BYTES) head = concat(head, piece.subarray(0, EDGE_BYTES - head.length));
    tail = concat(tail, piece.subarray(Math.max(0, piece.length - EDGE_BYTES))).slice(-EDGE_BYTES);
  };
  const endSkipped = (controller: TransformStreamDefaultController<Uint8Array>) => {
    isSkipping = false;
    const decoder = new TextDecoder();
    const error = answerInPlaceOf(dataOf(decoder.decode(head)), decoder.decode(tail), eventBytes, maxBytes);
    if (error) controller.enqueue(encoder.encode(`event: message\ndata: ${JSON.stringify(error)}\n\n`));
    head = new Uint8Array(0);
    tail = new Uint8Array(0);
  };

  return new TransformStream({
    transform(chunk, controller) {
      let at = 0;
      while (at < chunk.length) {
        const newline = nextLineEnd(chunk, at);
        const end = newline < 0 ? chunk.length : newline;
        if (end > at) {
          // Content of a line.
          const piece = chunk.subarray(at, end);
          isAtLineStart = false;
          isAfterCr = false;
          eventBytes += piece.length;
          keepEdges(piece);
          if (!isSkipping && eventBytes > maxBytes) {
            const fits = piece.length - (eventBytes - maxBytes);
            if (fits > 0) controller.enqueue(piece.subarray(0, fits));
            // The event so far is dispatched as one the SDK does not read; nothing more of it passes.
            controller.enqueue(encoder.encode("\nevent: mcpproxy-dropped\n\n"));
            isSkipping = true;
          } else if (!isSkipping) {
            controller.enqueue(piece);
          }
        }
        if (newline < 0) break;
        const byte = chunk[newline]!;
        const isPairedLf = byte === LF && isAfterCr;
        if (!isSkipping) controller.enqueue(chunk.subarray(newline, newline + 1));
        if (!isPairedLf) {
          if (isAtLineStart) {
            // A blank line: the event ends.
            if (isSkipping) endSkipped(controller);
            eventBytes = 0;
            head = new Uint8Array(0);
            tail = new Uint8Array(0);
          } else {
            keepEdges(chunk.subarray(newline, newline + 1));
          }
          isAtLineStart = true;
        }
        isAfterCr = byte === CR;
        at = newline + 1;
      }
    },
  });
}

/** The content of the first `data:` line of an event's head. */
function dataOf(head: string): string {
  const match = /(?:^|[\r\n])data: ?([^\r\n]*)/.exec(head);
  return match?.[1] ?? "";
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}
