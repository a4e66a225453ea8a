import { constants } from "node:os";

/** How a person (Ctrl-C), a service manager or a closed terminal asks the proxy to stop. */
const STOP_SIGNALS = ["SIGINT", "SIGTERM", "SIGHUP"] as const;

export interface StopSignals {
  /** Aborted at the first stop signal; hand it to whatever must stop (the upstream pool). */
  readonly signal: AbortSignal;
  /** The signal that came, if one did. */
  readonly received: NodeJS.Signals | undefined;
  /** What a shell expects of a process a signal stopped: 128 + the signal's number. */
  exitCode(): number;
  /** Stops listening: a signal has its default effect again. */
  dispose(): void;
}

/**
 * Listens for the stop signals while a command has servers running. Left to its default, a signal
 * ends the proxy at once and its servers, each in a process group of its own, keep running (with
 * their helpers). While listening, the first signal aborts `signal` and the command stops its
 * servers and returns; signals after the first are ignored, since the stop is under way and takes
 * a second at most (child-process-transport.ts, PROMPT_KILL_MS).
 */
export function watchStopSignals(): StopSignals {
  const controller = new AbortController();
  let received: NodeJS.Signals | undefined;
  const onSignal = (signal: NodeJS.Signals) => {
    if (received) return;
    received = signal;
    controller.abort(new Error(`stopped by ${signal}`));
  };
  for (const signal of STOP_SIGNALS) process.on(signal, onSignal);
  return {
    signal: controller.signal,
    get received() {
      return received;
    },
    exitCode: () => 128 + (received ? constants.signals[received] : 0),
    dispose() {
      for (const signal of STOP_SIGNALS) process.off(signal, onSignal);
    },
  };
}
