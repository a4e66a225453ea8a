import type { JSONRPCMessage, RequestId, Transport } from "@modelcontextprotocol/server";
import { ProtocolErrorCode } from "@modelcontextprotocol/server";
import { createJsonLineSplitter, idOfTruncatedMessage } from "../../json-line-splitter.ts";
import { createProgressGap } from "../../progress-gap.ts";
import { isJsonRpcMessage } from "../../upstream/json-lines.ts";

/**
 * The MCP stdio transport to the client, on this process's stdin and stdout. Unlike the SDK's
 * StdioServerTransport, a bad line never ends the session and never goes unanswered:
 *  - a line that is not JSON gets -32700 (Parse error);
 *  - a batch, or JSON that is not a JSON-RPC 2.0 message, gets -32600 (Invalid Request), with the
 *    request's id when one can be read;
 *  - a line longer than `maxRequestBytes` is skipped without being held in memory and gets -32600
 *    naming the limit (the SDK's transport closed the session on one line of 10 MiB).
 */
export interface StdioServerTransportOptions {
  maxRequestBytes: number;
  /** Where messages come from (default: this process's stdin). */
  input?: ReadableStream<Uint8Array>;
  /** Where messages go (default: this process's stdout). */
  output?: { write(text: string): unknown; flush(): unknown };
  /** Told the method of each well-formed request before it is dispatched. */
  onRequest?: ((method: string) => void) | undefined;
  /** Sees each well-formed message before it is dispatched, and hands back what is dispatched in its place. */
  onMessage?: ((message: JSONRPCMessage) => JSONRPCMessage) | undefined;
  /** Sees each message sent to the client. */
  onSend?: ((message: JSONRPCMessage) => void) | undefined;
  /**
   * Takes a message past whoever serves on this transport, if it will (pinned-delivery.ts); a
   * request it throws on is answered -32603 (Internal error), as serveStdio answers one.
   */
  claim?: ((message: JSONRPCMessage) => boolean) | undefined;
}

export class LineStdioServerTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  private readonly input: ReadableStream<Uint8Array>;
  private readonly output: { write(text: string): unknown; flush(): unknown };
  private readonly splitter: ReturnType<typeof createJsonLineSplitter>;
  private reader: ReadableStreamDefaultReader<Uint8Array> | undefined;
  private isClosed = false;
  private readonly onRequest: ((method: string) => void) | undefined;
  private readonly onMessage: ((message: JSONRPCMessage) => JSONRPCMessage) | undefined;
  private readonly onSend: ((message: JSONRPCMessage) => void) | undefined;
  private readonly claim: ((message: JSONRPCMessage) => boolean) | undefined;
  private markClosed: () => void = () => {};
  /** When the last progress notice was written (performance.now()). */
  /** A response is held a moment after a progress notice, so that the client reads the notice (progress-gap.ts). */
  private readonly progressGap = createProgressGap();
  /**
   * Settles when the session ends (the client closed stdin, or `close()`). Kept apart from `onclose`,
   * which belongs to whoever serves on this transport.
   */
  readonly closed = new Promise<void>((resolve) => {
    this.markClosed = resolve;
  });

  /**
   * Bun's own stdin stream and stdout writer, not process.stdin/stdout: on the call path Node's
   * stream machinery cost more than the messages it carried (bench/call-overhead.ts).
   */
  constructor(options: StdioServerTransportOptions) {
    this.input = options.input ?? Bun.stdin.stream();
    this.output = options.output ?? Bun.stdout.writer();
    this.onRequest = options.onRequest;
    this.onMessage = options.onMessage;
    this.onSend = options.onSend;
    this.claim = options.claim;
    this.splitter = createJsonLineSplitter(
      options.maxRequestBytes,
      (line) => this.receive(line),
      (line) => {
        const id = idOfTruncatedMessage(line.head, line.tail) ?? null;
        this.reply(
          id,
          ProtocolErrorCode.InvalidRequest,
          `The message of ${line.bytes} bytes is over the limit of ${options.maxRequestBytes} bytes ` +
            "(maxRequestBytes, MCPPROXY_MAX_REQUEST_BYTES); it was not read.",
        );
      },
    );
  }

  async start(): Promise<void> {
    const reader = this.input.getReader();
    this.reader = reader;
    void (async () => {
      try {
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          this.splitter.push(value);
        }
      } catch (error) {
        if (!this.isClosed) this.onerror?.(error as Error);
      }
      // The client closed its end: that is how stdio clients say goodbye.
      await this.close();
    })();
  }

  async send(message: JSONRPCMessage): Promise<void> {
    this.onSend?.(message);
    const wait = this.progressGap.waitBefore(message);
    if (wait > 0) await Bun.sleep(wait);
    this.output.write(`${JSON.stringify(message)}\n`);
    await this.output.flush();
  }

  async close(): Promise<void> {
    if (this.isClosed) return;
    this.isClosed = true;
    await this.reader?.cancel().catch(() => undefined);
    this.onclose?.();
    this.markClosed();
  }

  private receive(line: string): void {
    let parsed: unknown;
    try {
      parsed = JSON.parse(line);
    } catch (error) {
      this.reply(
        null,
        ProtocolErrorCode.ParseError,
        `Parse error: the line is not JSON (${(error as Error).message}).`,
      );
      return;
    }
    if (Array.isArray(parsed)) {
      this.reply(
        null,
        ProtocolErrorCode.InvalidRequest,
        "Invalid Request: JSON-RPC batches are not supported (MCP removed them); send one message per line.",
      );
      return;
    }
    if (isJsonRpcMessage(parsed)) {
      const { method, id } = parsed as { method?: unknown; id?: unknown };
      if (typeof method === "string" && id !== undefined) this.onRequest?.(method);
      const message = this.onMessage ? this.onMessage(parsed as JSONRPCMessage) : (parsed as JSONRPCMessage);
      if (this.claim) {
        try {
          if (this.claim(message)) return;
        } catch (error) {
          // As serveStdio's entry answers a request whose handling threw: the session goes on.
          this.onerror?.(error instanceof Error ? error : new Error(String(error)));
          const id = (message as { id: RequestId }).id;
          const answer = { code: ProtocolErrorCode.InternalError, message: "Internal server error" };
          void this.send({ jsonrpc: "2.0", id, error: answer } as JSONRPCMessage);
          return;
        }
      }
      this.onmessage?.(message);
      return;
    }
    const id = (parsed as { id?: unknown } | null)?.id;
    const hasId = typeof id === "string" || (typeof id === "number" && Number.isFinite(id));
    // A notification cannot be answered; a request with a readable id, or none at all, is.
    if (hasId || (parsed as { method?: unknown } | null)?.method === undefined) {
      this.reply(
        hasId ? (id as RequestId) : null,
        ProtocolErrorCode.InvalidRequest,
        'Invalid Request: not a JSON-RPC 2.0 message (it needs "jsonrpc": "2.0", a "method" or a "result"/"error", and an id that is a string or number).',
      );
    }
  }

  private reply(id: RequestId | null, code: number, message: string): void {
    this.onerror?.(new Error(message));
    void this.send({ jsonrpc: "2.0", id, error: { code, message } } as unknown as JSONRPCMessage);
  }
}
