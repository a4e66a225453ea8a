import type {
  AuthInfo,
  JSONRPCMessage,
  Server,
  WebStandardStreamableHTTPServerTransport,
} from "@modelcontextprotocol/server";
import { plainLaneOf, requestKeyOf } from "../calls/plain-lane.ts";
import { wholeResponse } from "./http-limits.ts";
import { holderOf } from "./resource-guard.ts";

/**
 * The plain lane (calls/plain-lane.ts) for a 2025 client's streamable HTTP session: a POST that
 * the SDK's transport would take, holding one plain tools/call the lane serves whole, is answered
 * past the transport's message checks and per-request stream and the Server's dispatch. The lane
 * steps aside, and the SDK answers as before, for anything else: a batch, a header the transport
 * would refuse or look at twice (its Accept, Content-Type, Mcp-Session-Id and
 * MCP-Protocol-Version checks), an id the session has in flight, a principal named by an access
 * token (its quotas are the SDK's way's).
 * The answer is what the transport sends: one `message` event of text/event-stream with the
 * transport's headers. A call that ends before the transport's first keep-alive would be due and
 * causes nothing on the way is answered with the event whole, the cheapest body for Bun to send
 * and the client to read (Bun sends the transport's stream no sooner: it waits for its first
 * bytes). A call whose server sends something for the client during it (a relayed request, a log
 * message), or that reaches the keep-alive, gets its stream then, kept alive as the transport keeps
 * its own, and what the call causes goes there: the session's Server sends it related to the
 * call's id, and the transport's `send` is routed here for the ids the lane holds. A
 * notifications/cancelled of a lane call is the lane's (202, as the transport answers a
 * notification), and that call's answer ends empty.
 */
export interface HttpLane {
  /** The answer to the POST if the lane takes it, else undefined (the SDK's transport serves it). */
  serve(request: Request, parsedBody: unknown, auth: AuthInfo | undefined): Promise<Response> | undefined;
}

/** The transport's keep-alive when it has none of its own (the SDK's default). */
const DEFAULT_KEEP_ALIVE_MS = 15_000;

/** The transport's state the lane reads to decide as it would (the SDK is pinned exactly). */
interface TransportInternals {
  _closed: boolean;
  _initialized: boolean;
  _supportedProtocolVersions: readonly string[];
  _requestToStreamMapping: Map<unknown, unknown>;
  _keepAliveMs?: number;
}

/** One lane call's answer: whole if it can be, a stream once it must. */
interface Answer {
  response: Promise<Response>;
  /** Something the call caused, for the client: the answer becomes a stream. */
  write(message: JSONRPCMessage): void;
  /** The call's answer: the body's last event; none for a call the client cancelled. */
  end(message?: JSONRPCMessage): void;
}

const eventOf = (message: JSONRPCMessage) => `event: message\ndata: ${JSON.stringify(message)}\n\n`;
const encoder = new TextEncoder();

/** Whether the transport reads the Content-Type as JSON (what it accepts beyond this, the SDK decides). */
const isPlainJsonType = (type: string | null) =>
  type === "application/json" || type?.toLowerCase().replace(/\s+/g, "") === "application/json;charset=utf-8";

export function createHttpLane(
  transport: WebStandardStreamableHTTPServerTransport,
  server: Server,
): HttpLane {
  const internals = transport as unknown as TransportInternals;
  const inFlight = new Map<string, Answer>();
  const keepAliveMs = internals._keepAliveMs ?? DEFAULT_KEEP_ALIVE_MS;
  const headersOf = (): Record<string, string> => ({
    "Content-Type": "text/event-stream",
    "Cache-Control": "no-cache, no-transform",
    Connection: "keep-alive",
    "X-Accel-Buffering": "no",
    ...(transport.sessionId !== undefined ? { "mcp-session-id": transport.sessionId } : {}),
  });

  // What the Server sends related to a lane call's id goes to that call's answer.
  const send = transport.send.bind(transport);
  transport.send = (message, options) => {
    const related = options?.relatedRequestId;
    if (related !== undefined && inFlight.size > 0 && "method" in message) {
      const answer = inFlight.get(requestKeyOf(related));
      if (answer) {
        answer.write(message);
        return Promise.resolve();
      }
    }
    return send(message, options);
  };

  const answerFor = (key: string): Answer => {
    let resolve!: (response: Response) => void;
    const response = new Promise<Response>((done) => {
      resolve = done;
    });
    let controller: ReadableStreamDefaultController<Uint8Array> | undefined;
    let keepAlive: ReturnType<typeof setInterval> | undefined;
    let isEnded = false;
    const enqueue = (text: string) => {
      try {
        controller?.enqueue(encoder.encode(text));
      } catch {
        // The client went: what is left of the call has no one to reach.
      }
    };
    const stream = () => {
      if (controller || isEnded) return;
      clearTimeout(timer);
      resolve(
        new Response(
          new ReadableStream<Uint8Array>({
            start(opened) {
              controller = opened;
            },
            cancel() {
              clearInterval(keepAlive);
            },
          }),
          { status: 200, headers: headersOf() },
        ),
      );
      keepAlive = setInterval(() => enqueue(": keepalive\n\n"), keepAliveMs);
      keepAlive.unref?.();
    };
    // The transport's stream sends its first bytes at its first keep-alive: so does this one.
    const timer = setTimeout(() => {
      stream();
      enqueue(": keepalive\n\n");
    }, keepAliveMs);
    return {
      response,
      write(message) {
        stream();
        enqueue(eventOf(message));
      },
      end(message) {
        if (isEnded) return;
        isEnded = true;
        inFlight.delete(key);
        clearTimeout(timer);
        const last = message ? eventOf(message) : "";
        if (!controller) {
          resolve(wholeResponse(last, { status: 200, headers: headersOf() }));
          return;
        }
        clearInterval(keepAlive);
        if (last) enqueue(last);
        try {
          controller.close();
        } catch {
          // Cancelled by the client already.
        }
      },
    };
  };

  return {
    serve(request, parsedBody, auth) {
      if (request.method !== "POST" || parsedBody === null || typeof parsedBody !== "object")
        return undefined;
      if (Array.isArray(parsedBody) || holderOf(auth)) return undefined;
      const lane = plainLaneOf(server);
      if (!lane) return undefined;
      const accept = request.headers.get("accept");
      if (!accept?.includes("application/json") || !accept.includes("text/event-stream")) return undefined;
      if (!isPlainJsonType(request.headers.get("content-type"))) return undefined;
      const version = request.headers.get("mcp-protocol-version");
      if (version !== null && !internals._supportedProtocolVersions.includes(version)) return undefined;
      if (
        internals._closed ||
        !internals._initialized ||
        transport.sessionId === undefined ||
        request.headers.get("mcp-session-id") !== transport.sessionId
      )
        return undefined;
      const message = parsedBody as { id?: unknown; method?: unknown };
      if (message.id === undefined) {
        if (message.method !== "notifications/cancelled") return undefined;
        if (!lane.claim(parsedBody as JSONRPCMessage, () => Promise.resolve())) return undefined;
        // The call is not answered: its answer ends empty, as the client no longer waits for it.
        const cancelled = (message as { params?: { requestId?: unknown } }).params?.requestId;
        inFlight.get(requestKeyOf(cancelled))?.end();
        return Promise.resolve(new Response(null, { status: 202 }));
      }
      const key = requestKeyOf(message.id);
      if (inFlight.has(key) || internals._requestToStreamMapping.has(message.id)) return undefined;
      // The answer is made once the lane takes the call: what it sends comes later, never within claim.
      let answer: Answer | undefined;
      let early: JSONRPCMessage | undefined;
      const isTaken = lane.claim(
        parsedBody as JSONRPCMessage,
        (reply) => {
          if (answer) answer.end(reply);
          else early = reply;
          return Promise.resolve();
        },
        true,
      );
      if (!isTaken) return undefined;
      answer = answerFor(key);
      inFlight.set(key, answer);
      if (early) answer.end(early);
      return answer.response;
    },
  };
}
