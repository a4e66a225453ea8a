import type {
  ClientCapabilities,
  InputRequiredResult,
  Progress,
  Result,
  ServerContext,
} from "@modelcontextprotocol/server";
import {
  CLIENT_CAPABILITIES_META_KEY,
  inputRequired,
  isInputRequiredResult,
  ProtocolError,
  ProtocolErrorCode,
} from "@modelcontextprotocol/server";
import {
  argumentsDigest,
  isBoundTo,
  type RequestStateSeal,
  type SealedPayload,
  type StateBinding,
} from "../../security/request-state.ts";
import type { AskClient, InputMethod } from "../../upstream/forward-call.ts";
import type { ClientEra } from "../client-era.ts";
import type { ParkedCalls } from "./parked-calls.ts";

/**
 * Multi-round-trip requests (MRTR, 2026-07-28) across the proxy, for tools/call, prompts/get and
 * resources/read, whatever era each side speaks:
 *  - a 2026 server's `input_required` goes to the client with the server's `inputRequests` as they
 *    are and the proxy's own sealed `requestState` (request-state.ts) around the server's; the
 *    retry is checked against it and forwarded with the client's `inputResponses` and the server's
 *    state. A 2025 client gets the same answer turned into real requests on its session by the
 *    SDK's legacy shim, which then retries through this same code;
 *  - a 2025 server asking the client during the call of a 2026 client (which has no session to
 *    receive requests): the call is parked and the question goes out as `input_required`
 *    (parked-calls.ts);
 *  - a 2025 server asking a 2025 client: relayed on the client's session as before.
 * The state is bound to the method, server, target, argument digest and principal: replayed for
 * another call, or by another principal, it is refused with -32602 before anything is forwarded.
 */
export interface InputRounds {
  seal: RequestStateSeal;
  parked: ParkedCalls;
}

/** The call a state is for, as the handler knows it before forwarding. */
export interface InputCall {
  method: InputMethod;
  server: string;
  /** The upstream tool, prompt or resource URI. */
  target: string;
  /** The client's arguments, as it sent them (their digest binds the state). */
  args: unknown;
}

/** What a forwarded call carries for its input rounds (upstream-pool.ts `CallOptions`). */
export interface InputHooks {
  signal: AbortSignal;
  inputResponses?: Record<string, unknown> | undefined;
  /** The upstream's own state, for its retry. */
  requestState?: string | undefined;
  askClient?: AskClient | undefined;
  /** Progress of the call, to the round in flight (a parked call outlives the request that started it). */
  onprogress?: ((progress: Progress) => void) | undefined;
}

/** The principal a state is bound to: the bearer token's digest over HTTP, else this machine's user. */
export function principalOf(ctx: ServerContext): string {
  return ctx.http?.authInfo?.clientId ?? "local";
}

/** What the request's envelope says the client can answer (2026), or the session's (2025). */
export function capabilitiesOf(ctx: ServerContext, session: ClientCapabilities | undefined) {
  const envelope = ctx.mcpReq.envelope as Record<string, unknown> | undefined;
  return (envelope?.[CLIENT_CAPABILITIES_META_KEY] as ClientCapabilities | undefined) ?? session;
}

/**
 * The SDK's `requestState.verify` hook: a state this proxy sealed, unexpired, for this method and
 * principal, or -32602 (the SDK answers every throw here with its fixed "Invalid or expired
 * requestState"). The rest of the binding is checked by `withInputRounds`, which knows the call.
 */
export function verifyRequestState(seal: RequestStateSeal) {
  return (state: string, ctx: ServerContext): SealedPayload => {
    const payload = seal.open(state);
    if (payload.method !== ctx.mcpReq.method || payload.principal !== principalOf(ctx)) {
      throw new Error("bind");
    }
    return payload;
  };
}

/**
 * Forwards a call with its input rounds. `forward` sends it upstream with the hooks; what it
 * returns is the result, or a 2026 upstream's input_required (returned sealed).
 */
export async function withInputRounds<R extends Result>(
  rounds: InputRounds,
  era: ClientEra,
  ctx: ServerContext,
  call: InputCall,
  forward: (hooks: InputHooks) => Promise<R | InputRequiredResult>,
  onprogress?: (progress: Progress) => void,
): Promise<R | InputRequiredResult> {
  // Made only when a state is checked or sealed: most calls never ask for input, and the argument
  // digest hashes the whole of the arguments.
  let binding: StateBinding | undefined;
  const bindingOf = (): StateBinding => {
    binding ??= {
      method: call.method,
      server: call.server,
      target: call.target,
      digest: argumentsDigest(call.args),
      principal: principalOf(ctx),
    };
    return binding;
  };
  const state = ctx.mcpReq.requestState<SealedPayload>();
  if (state !== undefined && (typeof state !== "object" || !isBoundTo(state, bindingOf()))) {
    throw new ProtocolError(
      ProtocolErrorCode.InvalidParams,
      "requestState belongs to another request: send it back only with the call it was given for, unchanged",
    );
  }
  const sealed = (outcome: R | InputRequiredResult): R | InputRequiredResult =>
    isInputRequiredResult(outcome)
      ? inputRequired({
          ...(outcome.inputRequests ? { inputRequests: outcome.inputRequests } : {}),
          requestState: rounds.seal.seal({ ...bindingOf(), up: outcome.requestState }),
        })
      : outcome;
  const inputResponses = ctx.mcpReq.inputResponses;
  if (era === "legacy") {
    // A 2025 client: a 2026 upstream's questions are asked on its session by the SDK's shim,
    // which comes back here with the answers; a 2025 upstream's are relayed on the session.
    return sealed(
      await forward({ signal: ctx.mcpReq.signal, inputResponses, requestState: state?.up, onprogress }),
    );
  }
  const round = {
    signal: ctx.mcpReq.signal,
    capabilities: capabilitiesOf(ctx, undefined),
    inputResponses,
    onprogress,
  };
  const outcome = state?.park
    ? await rounds.parked.resume(state.park, round)
    : await rounds.parked.start(
        (hooks) =>
          forward({
            signal: hooks.signal,
            inputResponses,
            requestState: state?.up,
            askClient: hooks.askClient,
            onprogress: hooks.onprogress,
          }),
        round,
      );
  if ("park" in outcome) {
    return inputRequired({
      inputRequests: outcome.inputRequests,
      requestState: rounds.seal.seal({ ...bindingOf(), park: outcome.park }),
    });
  }
  return sealed(outcome.result as R | InputRequiredResult);
}

/** Whether the request is a retry of an input round (its answer must never be cached). */
export function isRetry(ctx: ServerContext): boolean {
  return ctx.mcpReq.inputResponses !== undefined || ctx.mcpReq.requestState() !== undefined;
}
