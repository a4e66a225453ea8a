import type { ClientCapabilities, InputRequest, Progress, Result } from "@modelcontextprotocol/server";
import { ProtocolError, ProtocolErrorCode } from "@modelcontextprotocol/server";
import type { Logger } from "../../log.ts";
import type { ClientBoundRequest } from "../../upstream/relayed-messages.ts";
import { missingCapability, resultSchemaOf } from "../federation/upstream-messages.ts";

/**
 * A 2026-07-28 client calls a 2025 server, and the server asks "the client" something during the
 * call (elicitation, sampling, roots). The client has no session to receive a request, so the
 * proxy answers its call with `input_required`, the question inside, and parks the server's
 * request until the client retries with the answer; then it answers the server and waits again
 * for the result or the next question (several rounds, several questions at once).
 *
 * Bounds: at most `maxParked` calls wait at once (one more that asks has its question refused,
 * the call goes on without it), at most MAX_ASKS open questions a call, and each waits `waitMs`
 * for the retry (`inputWaitMs`): then the server's requests are refused, the call is cancelled
 * on the server, and the entry is freed. A retry is accepted once per round: a state already
 * answered, or one being answered, is refused. Which client may retry is the sealed state's
 * business (input-rounds.ts binds it to the principal, the request and its arguments).
 */
export interface ParkedCallsOptions {
  waitMs: number;
  maxParked: number;
  logger: Logger;
}

/** What one round of a call needs from the client's request. */
interface Round {
  /** The client's request: aborted, it cancels the whole call. */
  signal: AbortSignal;
  /** What the client said it can answer (this request's envelope). */
  capabilities: ClientCapabilities | undefined;
  inputResponses?: Record<string, unknown> | undefined;
  onprogress?: ((progress: Progress) => void) | undefined;
}

/** The call's hooks, for forwarding it: its own signal (it outlives a round) and its way to ask. */
interface CallHooks {
  signal: AbortSignal;
  askClient: (request: ClientBoundRequest, signal: AbortSignal) => Promise<Result>;
  onprogress: (progress: Progress) => void;
}

type RoundOutcome =
  | { result: Result }
  | { inputRequests: Record<string, InputRequest>; park: { id: string; round: number } };

export interface ParkedCalls {
  /** Starts a call (`run` forwards it with the hooks) and serves its first round. */
  start(run: (hooks: CallHooks) => Promise<Result>, round: Round): Promise<RoundOutcome>;
  /** The next round of a parked call, from the retry's (verified) state. */
  resume(park: { id: string; round: number }, round: Round): Promise<RoundOutcome>;
  /** Calls parked now. */
  size(): number;
  /** Refuses every parked request and cancels every call (the proxy stops). */
  close(): void;
}

/** Open questions one call may have; a server asking more has the rest refused. */
const MAX_ASKS = 16;
export const DEFAULT_MAX_PARKED = 256;

interface Ask {
  request: ClientBoundRequest;
  resolve(result: Result): void;
  reject(error: unknown): void;
}

interface Call {
  id: string;
  /** The round the client's next state must name. */
  round: number;
  controller: AbortController;
  outcome?: { result: Result } | { error: unknown };
  asks: Map<string, Ask>;
  keys: number;
  /** Wakes the round waiting on this call (a question or the outcome came). */
  wake?: (() => void) | undefined;
  timer?: ReturnType<typeof setTimeout> | undefined;
  isBusy: boolean;
  capabilities: ClientCapabilities | undefined;
  progress?: ((progress: Progress) => void) | undefined;
}

const invalid = (message: string) => new ProtocolError(ProtocolErrorCode.InvalidParams, message);
const refused = (message: string) => new ProtocolError(ProtocolErrorCode.InvalidRequest, message);

export function createParkedCalls(options: ParkedCallsOptions): ParkedCalls {
  const parked = new Map<string, Call>();

  /** Ends a call for good: its open questions refused, the server's call cancelled unless it ended. */
  const end = (call: Call, why: string) => {
    clearTimeout(call.timer);
    parked.delete(call.id);
    for (const ask of call.asks.values()) ask.reject(refused(why));
    call.asks.clear();
    if (!call.outcome) call.controller.abort(new Error(why));
  };

  const expire = (call: Call) => {
    options.logger.info("a call waiting for its client's input was cancelled", {
      parked: call.id.slice(0, 8),
      waitedMs: options.waitMs,
    });
    end(
      call,
      `the client did not come back with the input within ${options.waitMs} ms (inputWaitMs); the call was cancelled`,
    );
  };

  const serve = async (call: Call, round: Round): Promise<RoundOutcome> => {
    call.isBusy = true;
    clearTimeout(call.timer);
    call.capabilities = round.capabilities;
    call.progress = round.onprogress;
    const onAbort = () => {
      call.wake?.();
      end(call, "the client cancelled the call");
    };
    if (round.signal.aborted) onAbort();
    else round.signal.addEventListener("abort", onAbort, { once: true });
    try {
      for (;;) {
        if (round.signal.aborted) throw round.signal.reason ?? new Error("cancelled");
        if (call.outcome) {
          end(call, "the call ended");
          if ("error" in call.outcome) throw call.outcome.error;
          return { result: call.outcome.result };
        }
        if (call.asks.size > 0) {
          // Questions asked together arrive one after the other: let them (or a quick result) come.
          await new Promise((resolve) => setTimeout(resolve, 10));
          if (call.outcome || round.signal.aborted) continue;
          if (!parked.has(call.id) && parked.size >= options.maxParked) {
            // Full: this call's questions are refused, and it goes on without them.
            for (const ask of call.asks.values())
              ask.reject(
                refused(
                  `too many calls are waiting for their clients' input (${options.maxParked}); try again later`,
                ),
              );
            call.asks.clear();
            continue;
          }
          parked.set(call.id, call);
          call.round++;
          call.timer = setTimeout(() => expire(call), options.waitMs);
          call.timer.unref?.();
          const inputRequests: Record<string, InputRequest> = {};
          for (const [key, ask] of call.asks) inputRequests[key] = inputRequestOf(ask.request);
          return { inputRequests, park: { id: call.id, round: call.round } };
        }
        await new Promise<void>((resolve) => {
          call.wake = resolve;
        });
        call.wake = undefined;
      }
    } finally {
      round.signal.removeEventListener("abort", onAbort);
      call.isBusy = false;
      call.progress = undefined;
    }
  };

  return {
    start(run, round) {
      const call: Call = {
        id: crypto.randomUUID(),
        round: 0,
        controller: new AbortController(),
        asks: new Map(),
        keys: 0,
        isBusy: false,
        capabilities: round.capabilities,
      };
      const hooks: CallHooks = {
        signal: call.controller.signal,
        onprogress: (progress) => call.progress?.(progress),
        askClient(request, signal) {
          if (call.outcome || call.controller.signal.aborted) {
            return Promise.reject(refused(`${request.method} came after its call ended`));
          }
          const missing = missingCapability(call.capabilities, request);
          if (missing) {
            return Promise.reject(
              refused(
                `the client that made this call does not support ${missing}, so ${request.method} cannot be asked`,
              ),
            );
          }
          if (call.asks.size >= MAX_ASKS) {
            return Promise.reject(
              refused(`more than ${MAX_ASKS} requests to the client are open in this call`),
            );
          }
          return new Promise<Result>((resolve, reject) => {
            const key = `${request.method.split("/")[0]}_${++call.keys}`;
            const forget = () => {
              call.asks.delete(key);
              reject(signal.reason ?? refused(`${request.method} was cancelled by the server`));
            };
            call.asks.set(key, {
              request,
              resolve: (result) => {
                signal.removeEventListener("abort", forget);
                resolve(result);
              },
              reject: (error) => {
                signal.removeEventListener("abort", forget);
                reject(error);
              },
            });
            signal.addEventListener("abort", forget, { once: true });
            call.wake?.();
          });
        },
      };
      void run(hooks).then(
        (result) => {
          call.outcome = { result };
          call.wake?.();
          // Parked with nobody to take the result: it waits for the retry (or the timer frees it).
        },
        (error: unknown) => {
          call.outcome = { error };
          call.wake?.();
        },
      );
      return serve(call, round);
    },

    async resume(park, round) {
      const call = parked.get(park.id);
      if (!call) {
        throw invalid(
          "requestState names a call that has ended (it waited longer than inputWaitMs, or the proxy restarted): call again",
        );
      }
      if (call.isBusy || call.round !== park.round) {
        throw invalid(
          "requestState was answered already: send the requestState of the latest input_required answer",
        );
      }
      // Every answer is checked before any reaches the server: a bad one loses nothing.
      const answers: [Ask, Result][] = [];
      for (const [key, value] of Object.entries(round.inputResponses ?? {})) {
        const ask = call.asks.get(key);
        if (!ask) continue;
        const parsed = resultSchemaOf(ask.request).safeParse(value);
        if (!parsed.success) {
          throw invalid(
            `inputResponses.${key} is not a valid answer to ${ask.request.method}: ${parsed.error.message}`,
          );
        }
        answers.push([ask, parsed.data as Result]);
      }
      for (const [ask, result] of answers) {
        for (const [key, open] of call.asks) if (open === ask) call.asks.delete(key);
        ask.resolve(result);
      }
      return serve(call, round);
    },

    size: () => parked.size,

    close() {
      for (const call of [...parked.values()]) end(call, "the proxy is shutting down");
    },
  };
}

/** A server's request as the input request of an `input_required` answer (its `_meta` is the server's own). */
function inputRequestOf(request: ClientBoundRequest): InputRequest {
  const { _meta: _, ...params } = (request.params ?? {}) as Record<string, unknown>;
  return (
    request.method === "roots/list" && Object.keys(params).length === 0
      ? { method: request.method }
      : { method: request.method, params }
  ) as InputRequest;
}
