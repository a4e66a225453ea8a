import { JSONRPCMessageSchema } from "@modelcontextprotocol/core";
import type { AuthInfo, JSONRPCMessage, MessageExtraInfo, Transport } from "@modelcontextprotocol/server";
import { type HttpLimits, readBodyText } from "./http-limits.ts";

/**
 * The legacy HTTP+SSE transport (protocol 2024-11-05) on web-standard Request/Response, for old
 * clients. The SDK's own SSEServerTransport is written against Node's ServerResponse, which
 * Bun.serve and Hono do not give us. A GET opens the event stream and first receives the
 * `endpoint` event naming where to POST; each POST carries one JSON-RPC message and gets 202.
 */
const KEEPALIVE_MS = 25_000;

export class WebSseServerTransport implements Transport {
  readonly sessionId = crypto.randomUUID();
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage, extra?: MessageExtraInfo) => void;

  private controller: ReadableStreamDefaultController<Uint8Array> | undefined;
  private keepalive: ReturnType<typeof setInterval> | undefined;
  private isClosed = false;
  private readonly encoder = new TextEncoder();

  /**
   * `endpoint` is the path clients POST to; the session id is added as a query parameter. A POST
   * body is read within `limits`, counting the bytes that arrive, whatever Content-Length says.
   * `authInfo`: who opened the session (the only one who may post to it), told to its handlers.
   */
  constructor(
    private readonly endpoint: string,
    private readonly limits: HttpLimits,
    private readonly authInfo?: AuthInfo,
  ) {}

  /** The event-stream response for the GET that opened this session. */
  response(): Response {
    const stream = new ReadableStream<Uint8Array>({
      start: (controller) => {
        this.controller = controller;
        this.write(`event: endpoint\ndata: ${this.endpoint}?sessionId=${this.sessionId}\n\n`);
        this.keepalive = setInterval(() => this.write(": keepalive\n\n"), KEEPALIVE_MS);
      },
      cancel: () => void this.close(),
    });
    return new Response(stream, {
      headers: {
        "content-type": "text/event-stream",
        "cache-control": "no-cache, no-transform",
        connection: "keep-alive",
      },
    });
  }

  async start(): Promise<void> {}

  async send(message: JSONRPCMessage): Promise<void> {
    if (this.isClosed) throw new Error("the SSE stream is closed");
    this.write(`event: message\ndata: ${JSON.stringify(message)}\n\n`);
  }

  /** One POSTed JSON-RPC message for this session. */
  async handlePost(request: Request): Promise<Response> {
    if (this.isClosed) return new Response("Session closed", { status: 404 });
    const body = await readBodyText(request, this.limits);
    if (!body.ok) return new Response(`Request refused: ${body.message}`, { status: body.status });
    let message: JSONRPCMessage;
    try {
      message = JSONRPCMessageSchema.parse(JSON.parse(body.text));
    } catch (error) {
      this.onerror?.(error as Error);
      return new Response("Invalid JSON-RPC message", { status: 400 });
    }
    this.onmessage?.(message, this.authInfo ? { authInfo: this.authInfo } : undefined);
    return new Response("Accepted", { status: 202 });
  }

  async close(): Promise<void> {
    if (this.isClosed) return;
    this.isClosed = true;
    clearInterval(this.keepalive);
    try {
      this.controller?.close();
    } catch {
      // Already closed by the client going away.
    }
    this.onclose?.();
  }

  private write(text: string): void {
    try {
      this.controller?.enqueue(this.encoder.encode(text));
    } catch (error) {
      this.onerror?.(error as Error);
      void this.close();
    }
  }
}
