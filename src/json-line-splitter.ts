/**
 * Splits a byte stream into newline-delimited JSON-RPC messages (the stdio transport's framing)
 * without ever holding more than `maxLineBytes` of one line. A longer line is skipped to its end
 * instead of being buffered or closing the stream; its first and last bytes are kept, so the
 * caller can still read the JSON-RPC id and answer that one request with an error.
 *
 * The SDK's ReadBuffer throws on a line over 10 MiB and its transports then close the stream:
 * one large tool result killed the upstream, and one large request shut the proxy down. It also
 * concatenates the whole buffer on every chunk, which is quadratic for multi-megabyte lines.
 */
export interface OversizedLine {
  /** How long the line was, in bytes, without its newline. */
  bytes: number;
  head: string;
  tail: string;
}

export interface JsonLineSplitter {
  push(chunk: Uint8Array): void;
  /** Bytes held for the line in progress (bounded by `maxLineBytes`). */
  pendingBytes(): number;
}

const NEWLINE = 0x0a;
const OPEN_BRACE = 0x7b;
/** How much of an over-long line is kept at each end: enough for `{"jsonrpc":"2.0","id":…`. */
const EDGE_BYTES = 512;

export function createJsonLineSplitter(
  maxLineBytes: number,
  onLine: (line: string) => void,
  onOversized: (line: OversizedLine) => void,
): JsonLineSplitter {
  const decoder = new TextDecoder();
  let parts: Uint8Array[] = [];
  let size = 0;
  // While skipping an over-long line: its length so far, its first bytes and its last bytes.
  let skipped = -1;
  let head = new Uint8Array(0);
  let tail = new Uint8Array(0);

  const startSkipping = (piece: Uint8Array) => {
    const all = concat([...parts, piece]);
    skipped = all.length;
    head = all.slice(0, EDGE_BYTES);
    tail = all.slice(-EDGE_BYTES);
    parts = [];
    size = 0;
  };

  /** A line read whole: without a carriage return at its end, and only if it holds more than blanks. */
  const emit = (text: string) => {
    const line = text.endsWith("\r") ? text.slice(0, -1) : text;
    if (line.charCodeAt(0) === OPEN_BRACE || line.trim() !== "") onLine(line);
  };

  const finishLine = () => {
    if (skipped >= 0) {
      onOversized({ bytes: skipped, head: decoder.decode(head), tail: decoder.decode(tail) });
      skipped = -1;
      return;
    }
    const text = decoder.decode(concat(parts));
    parts = [];
    size = 0;
    emit(text);
  };

  return {
    push(chunk) {
      let start = 0;
      for (;;) {
        const newline = chunk.indexOf(NEWLINE, start);
        const end = newline === -1 ? chunk.length : newline;
        if (newline !== -1 && skipped < 0 && parts.length === 0 && end - start <= maxLineBytes) {
          // A whole line within the chunk, as nearly every message is: decoded where it lies.
          emit(decoder.decode(chunk.subarray(start, end)));
        } else {
          const piece = chunk.subarray(start, end);
          if (skipped >= 0) {
            skipped += piece.length;
            tail = concat([tail, piece]).slice(-EDGE_BYTES);
          } else if (size + piece.length > maxLineBytes) {
            startSkipping(piece);
          } else if (piece.length > 0) {
            // Copied: the caller may reuse the chunk's memory.
            parts.push(piece.slice());
            size += piece.length;
          }
          if (newline === -1) return;
          finishLine();
        }
        start = newline + 1;
        if (start === chunk.length) return;
      }
    },
    pendingBytes: () => size,
  };
}

function concat(pieces: readonly Uint8Array[]): Uint8Array {
  if (pieces.length === 1) return pieces[0]!;
  const out = new Uint8Array(pieces.reduce((sum, piece) => sum + piece.length, 0));
  let at = 0;
  for (const piece of pieces) {
    out.set(piece, at);
    at += piece.length;
  }
  return out;
}

/**
 * The JSON-RPC id of a message known only by its first and last bytes. SDKs write the id either
 * right after `"jsonrpc"` at the start (Python, Go) or as the last member (the TypeScript SDK
 * writes `{result, jsonrpc, id}`), so only those two places are trusted: an `"id"` anywhere else
 * may belong to the payload.
 */
export function idOfTruncatedMessage(head: string, tail: string): string | number | undefined {
  const value = String.raw`(-?\d+|"(?:[^"\\]|\\.)*")`;
  const atStart = new RegExp(String.raw`^\s*\{\s*"jsonrpc"\s*:\s*"2\.0"\s*,\s*"id"\s*:\s*${value}`).exec(
    head,
  );
  const atEnd = new RegExp(String.raw`"id"\s*:\s*${value}\s*\}\s*$`).exec(tail);
  const raw = atStart?.[1] ?? atEnd?.[1];
  if (raw === undefined) return undefined;
  try {
    return JSON.parse(raw) as string | number;
  } catch {
    return undefined;
  }
}
