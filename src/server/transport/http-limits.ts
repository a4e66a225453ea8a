/**
 * Bounds on what one HTTP client can make the proxy hold: a request body is read up to a size and
 * within a time (a body too large is refused with 413 before the rest is read, a body that trickles
 * in is refused with 408), and a response stream that its client stops reading is cut off once
 * too much waits for it, instead of buffering without end.
 */
export interface HttpLimits {
  /** The largest request body accepted, in bytes. */
  maxRequestBytes: number;
  /** How long a request body may take to arrive. */
  bodyTimeoutMs: number;
  /** How many bytes may wait for one client that does not read its stream. */
  maxBufferedBytes: number;
}

export type BodyOutcome = { ok: true; text: string } | { ok: false; status: 408 | 413; message: string };

/** The request body as text, read with the size and time limits; never more than `maxBytes` held. */
export async function readBodyText(request: Request, limits: HttpLimits): Promise<BodyOutcome> {
  const tooLarge = (): BodyOutcome => ({
    ok: false,
    status: 413,
    message: `the request body is larger than ${limits.maxRequestBytes} bytes (maxRequestBytes, MCPPROXY_MAX_REQUEST_BYTES)`,
  });
  const declared = Number(request.headers.get("content-length") ?? Number.NaN);
  if (declared > limits.maxRequestBytes) return tooLarge();
  if (!request.body) return { ok: true, text: "" };
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<"timeout">((resolve) => {
    timer = setTimeout(() => resolve("timeout"), limits.bodyTimeoutMs);
  });
  try {
    for (;;) {
      const next = await Promise.race([reader.read(), deadline]);
      if (next === "timeout") {
        void reader.cancel().catch(() => undefined);
        return {
          ok: false,
          status: 408,
          message: `the request body did not arrive within ${limits.bodyTimeoutMs} ms (bodyTimeoutMs, MCPPROXY_BODY_TIMEOUT_MS)`,
        };
      }
      if (next.done) break;
      size += next.value.length;
      if (size > limits.maxRequestBytes) {
        void reader.cancel().catch(() => undefined);
        return tooLarge();
      }
      chunks.push(next.value);
    }
  } finally {
    clearTimeout(timer);
  }
  return { ok: true, text: Buffer.concat(chunks).toString("utf8") };
}

/** Responses made whole in memory (`wholeResponse`): none of their body can pile up unread. */
const wholeResponses = new WeakSet<Response>();

/** A response whose body is the text given, not a stream: `watchResponse` lets it pass as it is. */
export function wholeResponse(body: string, init: ResponseInit): Response {
  const response = new Response(body, init);
  wholeResponses.add(response);
  return response;
}

export interface WatchedResponse {
  /** Called once when the body is done: sent whole, cancelled by the client, or cut off. */
  onDone(): void;
  /** Called when more than `maxBufferedBytes` waited for the client: it stopped reading. */
  onStall(): void;
}

/**
 * The response with its body passed through a bounded queue. Bun sends a stream only as fast as
 * the socket takes it, so what waits in the queue is what the client has not read yet.
 */
export function watchResponse(
  response: Response,
  maxBufferedBytes: number,
  watch: WatchedResponse,
): Response {
  // A whole body is held once, whatever the client reads: there is nothing to watch.
  if (wholeResponses.has(response) || !response.body) {
    watch.onDone();
    return response;
  }
  const source = response.body.getReader();
  let isDone = false;
  const done = () => {
    if (isDone) return;
    isDone = true;
    watch.onDone();
  };
  const body = new ReadableStream<Uint8Array>(
    {
      start(controller) {
        void (async () => {
          try {
            for (;;) {
              const { done: ended, value } = await source.read();
              if (ended) {
                controller.close();
                return;
              }
              controller.enqueue(value);
              if (-(controller.desiredSize ?? 0) > maxBufferedBytes) {
                watch.onStall();
                controller.error(new Error("the client stopped reading"));
                await source.cancel().catch(() => undefined);
                return;
              }
            }
          } catch (error) {
            try {
              controller.error(error);
            } catch {
              // Already closed or errored.
            }
          } finally {
            done();
          }
        })();
      },
      cancel(reason) {
        done();
        return source.cancel(reason);
      },
    },
    new ByteLengthQueuingStrategy({ highWaterMark: 0 }),
  );
  return new Response(body, {
    status: response.status,
    statusText: response.statusText,
    headers: response.headers,
  });
}
