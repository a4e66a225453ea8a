import type { Logger } from "../../log.ts";
import { watchResponse } from "./http-limits.ts";

/**
 * The open MCP sessions of the HTTP listener, with their costs bounded: at most `maxSessions`
 * at once (a new one beyond is refused with 503 and Retry-After), a session with no request in
 * flight for `idleMs` is closed (abandoned sessions held ~40 KB each, forever), and a session
 * whose client stops reading its stream is closed once `maxBufferedBytes` wait for it.
 * A request is in flight until its response body is done, so a client holding a stream open
 * (a long tool call, the GET stream for notifications) is not idle.
 */
export interface SessionTransport {
  close(): Promise<void>;
}

export interface HttpSessionsOptions {
  maxSessions: number;
  idleMs: number;
  maxBufferedBytes: number;
  logger: Logger;
  now?: () => number;
}

interface Entry<T> {
  transport: T;
  lastActive: number;
  inFlight: number;
}

export interface HttpSessions<T extends SessionTransport> {
  readonly size: number;
  isFull(): boolean;
  get(id: string): T | undefined;
  add(id: string, transport: T): void;
  delete(id: string): void;
  /** Runs one request of a session (its id may be known only once it ran) and watches its response. */
  respond(sessionId: () => string | undefined, produce: () => Promise<Response>): Promise<Response>;
  /** Closes the sessions idle for longer than `idleMs`; the sweeper runs it on a timer. */
  sweep(): Promise<number>;
  closeAll(): Promise<void>;
}

export function createHttpSessions<T extends SessionTransport>(
  options: HttpSessionsOptions,
): HttpSessions<T> {
  const now = options.now ?? Date.now;
  const entries = new Map<string, Entry<T>>();
  const close = (id: string, why: string) => {
    const entry = entries.get(id);
    if (!entry) return Promise.resolve();
    entries.delete(id);
    options.logger.info(`closing session ${id.slice(0, 8)}: ${why}`);
    return entry.transport.close().catch(() => undefined);
  };
  const sessions: HttpSessions<T> = {
    get size() {
      return entries.size;
    },
    isFull: () => entries.size >= options.maxSessions,
    get: (id) => entries.get(id)?.transport,
    add(id, transport) {
      entries.set(id, { transport, lastActive: now(), inFlight: 0 });
    },
    delete(id) {
      entries.delete(id);
    },
    async respond(sessionId, produce) {
      const before = sessionId();
      const start = before ? entries.get(before) : undefined;
      if (start) start.inFlight++;
      let response: Response;
      try {
        response = await produce();
      } catch (error) {
        if (start) start.inFlight--;
        throw error;
      }
      const id = sessionId();
      const entry = id ? entries.get(id) : undefined;
      if (entry && !start) entry.inFlight++;
      return watchResponse(response, options.maxBufferedBytes, {
        onDone() {
          if (!entry) return;
          entry.inFlight--;
          entry.lastActive = now();
        },
        onStall() {
          if (id)
            void close(id, `its client stopped reading (over ${options.maxBufferedBytes} bytes waiting)`);
        },
      });
    },
    async sweep() {
      const idle = [...entries].filter(
        ([, entry]) => entry.inFlight <= 0 && now() - entry.lastActive > options.idleMs,
      );
      await Promise.all(idle.map(([id]) => close(id, `idle for more than ${options.idleMs} ms`)));
      return idle.length;
    },
    async closeAll() {
      const all = [...entries.values()];
      entries.clear();
      await Promise.allSettled(all.map((entry) => entry.transport.close()));
    },
  };
  return sessions;
}
