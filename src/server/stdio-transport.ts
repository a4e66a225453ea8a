import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import {
  ErrorCode,
  type JSONRPCMessage,
  JSONRPCMessageSchema,
  type RequestId,
} from "@modelcontextprotocol/sdk/types.js";
import { createJsonLineSplitter, idOfTruncatedMessage } from "../upstream/json-lines.ts";

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
  stdin?: NodeJS.ReadableStream;
  stdout?: NodeJS.WritableStream;
}

export class LineStdioServerTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  private readonly stdin: NodeJS.ReadableStream;
  private readonly stdout: NodeJS.WritableStream;
  private readonly onData: (chunk: Uint8Array) => void;
  private isClosed = false;

  constructor(options: StdioServerTransportOptions) {
    this.stdin = options.stdin ?? process.stdin;
    this.stdout = options.stdout ?? process.stdout;
    const splitter = createJsonLineSplitter(
      options.maxRequestBytes,
      (line) => this.receive(line),
      (line) => {
        const id = idOfTruncatedMessage(line.head, line.tail) ?? null;
        this.reply(
          id,
          ErrorCode.InvalidRequest,
          `The message of ${line.bytes} bytes is over the limit of ${options.maxRequestBytes} bytes ` +
            "(maxRequestBytes, MCPPROXY_MAX_REQUEST_BYTES); it was not read.",
        );
      },
    );
    this.onData = (chunk) => splitter.push(chunk);
  }

  async start(): Promise<void> {
    this.stdin.on("data", this.onData);
    this.stdin.on("error", (error: Error) => this.onerror?.(error));
  }

  send(message: JSONRPCMessage): Promise<void> {
    return new Promise((resolve) => {
      if (this.stdout.write(`${JSON.stringify(message)}\n`)) resolve();
      else this.stdout.once("drain", () => resolve());
    });
  }

  async close(): Promise<void> {
    if (this.isClosed) return;
    this.isClosed = true;
    this.stdin.off("data", this.onData);
    if (this.stdin.listenerCount("data") === 0) this.stdin.pause();
    this.onclose?.();
  }

  private receive(line: string): void {
    let parsed: unknown;
    try {
      parsed = JSON.parse(line);
    } catch (error) {
      this.reply(
        null,
        ErrorCode.ParseError,
        `Parse error: the line is not JSON (${(error as Error).message}).`,
      );
      return;
    }
    if (Array.isArray(parsed)) {
      this.reply(
        null,
        ErrorCode.InvalidRequest,
        "Invalid Request: JSON-RPC batches are not supported (MCP removed them); send one message per line.",
      );
      return;
    }
    const message = JSONRPCMessageSchema.safeParse(parsed);
    if (message.success) {
      this.onmessage?.(message.data);
      return;
    }
    const id = (parsed as { id?: unknown } | null)?.id;
    const hasId = typeof id === "string" || (typeof id === "number" && Number.isFinite(id));
    // A notification cannot be answered; a request with a readable id, or none at all, is.
    if (hasId || (parsed as { method?: unknown } | null)?.method === undefined) {
      this.reply(
        hasId ? (id as RequestId) : null,
        ErrorCode.InvalidRequest,
        'Invalid Request: not a JSON-RPC 2.0 message (it needs "jsonrpc": "2.0", a "method" or a "result"/"error", and an id that is a string or number).',
      );
    }
  }

  private reply(id: RequestId | null, code: number, message: string): void {
    this.onerror?.(new Error(message));
    void this.send({ jsonrpc: "2.0", id, error: { code, message } } as unknown as JSONRPCMessage);
  }
}
