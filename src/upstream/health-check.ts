import { type Client, ProtocolError, SdkError, SdkErrorCode } from "@modelcontextprotocol/client";
import { upstreamErrorText } from "./upstream-errors.ts";

/**
 * Whether a remote server is still there. A remote server's death shows in nothing the client
 * reads until it sends something: it is asked whether it is there (periodically, and at once when
 * its event stream breaks): ping in the 2025 era, server/discover in 2026-07-28, which has no ping.
 * An answer of any kind, an error included, is a live server; a failed request (refused, reset,
 * session gone) ends the connection, so it reads failed with its retry time instead of connected.
 */
export interface HealthCheck {
  /** Asks the server now; one check at a time, none while the connection is not open. */
  check(): Promise<void>;
  /** Asks it every `everyMs` from now on, until `stop`. */
  startEvery(everyMs: number): void;
  stop(): void;
}

export interface HealthCheckTarget {
  /** The connection's client (the attempt under way until it connects). */
  client(): Client | undefined;
  isOpen(): boolean;
  /** The server did not answer: the connection is ended with this reason. */
  onGone(reason: string): void;
}

/** How long a health check (ping, or server/discover) may take before the server counts as gone. */
const HEALTH_CHECK_TIMEOUT_MS = 10_000;

export function createHealthCheck(target: HealthCheckTarget): HealthCheck {
  let isChecking = false;
  let timer: ReturnType<typeof setInterval> | undefined;
  const check = async () => {
    const client = target.client();
    if (isChecking || !target.isOpen() || !client) return;
    isChecking = true;
    try {
      if (client.getProtocolEra() === "modern") await client.discover({ timeout: HEALTH_CHECK_TIMEOUT_MS });
      else await client.ping({ timeout: HEALTH_CHECK_TIMEOUT_MS });
    } catch (error) {
      if (!isAnswer(error)) {
        target.onGone(
          `the server stopped answering (${upstreamErrorText(error)}); it went away or restarted`,
        );
      }
    } finally {
      isChecking = false;
    }
  };
  return {
    check,
    startEvery(everyMs) {
      timer = setInterval(() => void check(), everyMs);
      timer.unref?.();
    },
    stop: () => clearInterval(timer),
  };
}

/** An error that is the server's answer (it is there), not a failure to reach it. */
function isAnswer(error: unknown): boolean {
  return (
    error instanceof ProtocolError ||
    (error instanceof SdkError &&
      (error.code === SdkErrorCode.InvalidResult || error.code === SdkErrorCode.UnsupportedResultType))
  );
}
