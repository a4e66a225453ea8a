import type {
  CallToolResult,
  InputRequiredResult,
  JSONRPCMessage,
  RequestId,
} from "@modelcontextprotocol/server";
import { SdkError, SdkErrorCode } from "@modelcontextprotocol/server";
import type { SessionRouting } from "../../routing/session-routing.ts";
import { asCallError, callTimedOut, newCallTag, tooDeep } from "../../upstream/forward-call.ts";
import { settleCallResponse } from "../../upstream/lean-call.ts";
import { callResultSchema } from "../../upstream/plain-call-result.ts";
import { isNestedDeeperThan, MAX_RESULT_DEPTH } from "../../upstream/result-depth.ts";
import type { ClientEra } from "../client-era.ts";
import { isPlainRequest } from "../plain-dispatch.ts";
import type { ProxyServerDeps } from "../proxy-deps.ts";
import { CALL_TOOL, plainCallToolArgs } from "../tools/builtin-tools.ts";
import type { KeepOut } from "../tools/read-result-tool.ts";
import type { ClientSession, ClientSessions } from "../transport/client-sessions.ts";
import { type CallReport, callAnswered, callFailure, logCall, settleCall } from "./forwarded-call.ts";
import { isPlainCallRequest } from "./plain-tool-calls.ts";

/**
 * The plain lane: a 2025 client's plain `tools/call`, from its line on stdio (or its POST to an
 * HTTP session, http-lane.ts) to the server and back in one step, past the SDK Server's dispatch,
 * the call's option objects, the pool's and forward-call's layers and the SDK Client's request
 * machinery. It serves a call whole or not at all, decided before anything is sent: a `call_tool`
 * (or a tool called by its name in dynamic, auto and all routing, or a `--passthrough` server's
 * tool by its own name) of a tool that is indexed, not quarantined, whose arguments pass their
 * check unchanged, on a server connected now with lean calls (lean-call.ts) and no call limits,
 * with no policy plugins and no traces, and with no `_meta` (so no progress token) on the request.
 * Everything else goes the SDK's way as before. Each behaviour is the code that has it on that way: the
 * argument check, the statistics, fallbacks and alternatives (`settleCall`), the errors
 * (`callFailure`, forward-call's), the result's checks (lean-call.ts's `settleCallResponse`) and
 * its spill (`keptOut`); the call is tracked on its server, so what the server asks the client
 * during it is relayed to this session (relay-routing.ts). Its two clocks are forward-call's: no
 * answer or progress for `callTimeoutMs` (stopped while the client is asked), `maxCallMs` in all;
 * either cancels the call on the server. A client's notifications/cancelled of a lane call is the
 * lane's: the server is told, and no answer goes back.
 * bench/experiments/lane-floor.ts is its floor; tests/e2e-plain-lane.test.ts and the e2e suites
 * hold it to what the SDK's way answers.
 */
export interface PlainLane {
  /**
   * Serves `message` if it is a call the lane takes whole (or a cancellation of one); false leaves
   * it. `send` takes the answer. With `onItsStream` (HTTP, where each request has its own response
   * stream) what the call causes goes to the client related to the request, as the SDK sends it;
   * without (stdio), on the session.
   */
  claim(
    message: JSONRPCMessage,
    send: (message: JSONRPCMessage) => Promise<void>,
    onItsStream?: boolean,
  ): boolean;
}

export interface PlainLaneOptions {
  deps: ProxyServerDeps;
  era: ClientEra;
  /** Dynamic routing's session, if any (a found tool is touched as the SDK's way touches it). */
  session: SessionRouting | undefined;
  client: { session: ClientSession; sessions: ClientSessions } | undefined;
  /** Whether a tool may be called by its own name here (dynamic, auto and all routing). */
  isCalledByName: boolean;
  /**
   * `serve --passthrough`: the public name of the server's tool a client calls by its own name
   * (passthrough-tools.ts), undefined for one it does not list; `call_tool` is no tool there.
   */
  passthroughName?: ((name: string) => string | undefined) | undefined;
  /** The names the session's last search showed (its statistics' `afterSearch`). */
  searched(): ReadonlySet<string>;
  keptOut: KeepOut;
  /** Whether a tool called by its own name declares an outputSchema (its structuredContent stays). */
  hasOutputSchema(name: string): boolean;
}

const lanes = new WeakMap<object, PlainLane>();

/** Gives `server` (a stdio connection's) its lane; plainLaneOf finds it. */
export function attachPlainLane(server: object, lane: PlainLane): void {
  lanes.set(server, lane);
}

export function plainLaneOf(server: object): PlainLane | undefined {
  return lanes.get(server);
}

/** A lane call in flight, by the client's id: what its cancellation needs. */
interface InFlight {
  cancel(reason: unknown): void;
}

/** A JSON-RPC id as a map key: 1 and "1" are two ids. */
export const requestKeyOf = (id: unknown) => `${typeof id}:${String(id)}`;

export function createPlainLane(options: PlainLaneOptions): PlainLane {
  const { deps, client } = options;
  const inFlight = new Map<string, InFlight>();

  /** The target and arguments of a call the lane may take, or undefined. */
  const eligible = (message: JSONRPCMessage) => {
    if (options.era !== "legacy" || !client || !client.session.server.getClientCapabilities())
      return undefined;
    if (
      deps.observe?.traces ||
      deps.plugins?.has("beforeToolCall") ||
      deps.plugins?.has("transformToolResult")
    )
      return undefined;
    if (!isPlainRequest(message) || !isPlainCallRequest(message)) return undefined;
    const { name, arguments: args, _meta: meta } = message.params;
    if (meta !== undefined) return undefined;
    let tool = name;
    let toolArgs = args;
    let byName = false;
    if (options.passthroughName) {
      const found = options.passthroughName(name);
      if (!found) return undefined;
      tool = found;
      byName = true;
    } else if (name === CALL_TOOL) {
      const asked = plainCallToolArgs(args);
      if (!asked) return undefined;
      tool = asked.name;
      toolArgs = asked.arguments;
    } else if (options.isCalledByName) byName = true;
    else return undefined;
    const target = deps.catalog.get(tool);
    if (!target || deps.catalog.isQuarantined(target)) return undefined;
    const given = toolArgs ?? {};
    const checked = deps.calls?.arguments?.check(target, given);
    if (checked && (checked.problems !== undefined || checked.args !== given)) return undefined;
    const route = deps.pool.laneTo(target.server);
    if (route?.connection.era !== "legacy" || !route.connection.lean) return undefined;
    return { id: (message as { id: RequestId }).id, name: tool, args: toolArgs, target, route, byName };
  };

  return {
    claim(message, send, onItsStream = false) {
      const asked = message as {
        method?: unknown;
        id?: unknown;
        params?: { requestId?: unknown; reason?: unknown };
      };
      if (asked.method === "notifications/cancelled" && asked.id === undefined) {
        const call = inFlight.get(requestKeyOf(asked.params?.requestId));
        if (!call) return false;
        call.cancel(asked.params?.reason ?? "cancelled by the client");
        return true;
      }
      const call = eligible(message);
      if (!call || !client) return false;
      const { id, name, args, target, route, byName } = call;
      const key = requestKeyOf(id);
      if (inFlight.has(key)) return false; // an id still in use: the SDK's way answers it
      const { connection, limits } = route;
      const lean = connection.lean!;
      const started = performance.now();
      const report: CallReport = { target, forwarded: true };
      const caller = client.sessions.beginSessionCall(client.session, onItsStream ? id : undefined);
      const context: { caller: string; session: string; signal?: AbortSignal } = {
        caller,
        session: client.session.id,
      };
      // Unique in the process: two sessions' lanes may call one server at once.
      const tag = newCallTag();
      // The two clocks on one timer: it looks when the sooner may have run out, and again if not.
      const maxAt = started + limits.maxCallMs;
      let idleAt = started + limits.callTimeoutMs;
      let waiting = 0;
      let isOver = false;
      let timer: ReturnType<typeof setTimeout> | undefined;
      const arm = () => {
        const at = waiting > 0 ? maxAt : Math.min(idleAt, maxAt);
        timer = setTimeout(look, Math.max(0, at - performance.now()));
      };
      const untrack = route.track({
        caller,
        session: client.session.id,
        tag,
        askClient: undefined,
        log: undefined,
        async waitOnClient(work) {
          waiting++;
          try {
            return await work();
          } finally {
            waiting--;
            idleAt = performance.now() + limits.callTimeoutMs;
          }
        },
      });
      /** The upstream call is over (its caller stays until the answer: a fallback may relay through it). */
      const end = () => {
        isOver = true;
        clearTimeout(timer);
        untrack();
        connection.tags.forget(tag);
        inFlight.delete(key);
      };
      /** A client gone meanwhile is not an error: serve is ending with it. */
      const reply = (message: JSONRPCMessage) => send(message).catch(() => undefined);
      const answer = async (outcome: Promise<CallToolResult | InputRequiredResult>, isCancelled = false) => {
        end();
        let result: CallToolResult | InputRequiredResult;
        try {
          const answered = (await outcome) as CallToolResult;
          if (isNestedDeeperThan(answered, MAX_RESULT_DEPTH))
            throw tooDeep(`${target.tool} on ${target.server}`);
          callAnswered(report, answered);
          result = answered;
        } catch (error) {
          result = callFailure(deps, target, name, asCallError(target, error), context, report);
        }
        // Worded as the SDK's way words it: a call that failed on the way is "error" there.
        const logged = report.outcome === "ok" || report.outcome === "isError" ? report.outcome : "error";
        logCall(deps, target, started, logged, args, context);
        try {
          const settled = await settleCall(
            deps,
            options.era,
            options.session,
            { name, args, context, searched: options.searched(), isFallback: false, started },
            report,
            result,
          );
          if (isCancelled) return; // a cancelled request is not answered
          // A 2025 session's results are scoped to the session, not to the request (read-result-tool.ts).
          const kept = await options.keptOut(
            settled,
            undefined as never,
            () => byName && options.hasOutputSchema(name),
          );
          await reply({ jsonrpc: "2.0", id, result: kept } as JSONRPCMessage);
        } catch (error) {
          deps.logger.error(`call to ${name} failed`, { error: String(error) });
          if (!isCancelled)
            await reply({
              jsonrpc: "2.0",
              id,
              error: { code: -32603, message: "Internal error" },
            } as JSONRPCMessage);
        } finally {
          client.sessions.endCall(caller);
        }
      };
      let sent: ReturnType<typeof lean.send>;
      try {
        sent = lean.send(
          { method: "tools/call", params: { name: target.tool, ...(args ? { arguments: args } : {}) } },
          {
            onId: (upstreamId) => connection.tags.note(tag, upstreamId),
            // Asked for always, as forward-call asks: progress keeps a long call alive.
            onprogress: () => {
              idleAt = performance.now() + limits.callTimeoutMs;
            },
            onresponse: (response) =>
              void answer(
                settleCallResponse(connection.client, response, callResultSchema(connection.client)),
              ),
            onfailed: (error) => void answer(Promise.reject(error)),
          },
        );
      } catch {
        // The connection went between the look and the send: the SDK's way says so.
        untrack();
        connection.tags.forget(tag);
        client.sessions.endCall(caller);
        return false;
      }
      options.session?.touch(name);
      function look() {
        if (isOver) return;
        const now = performance.now();
        const isOverTime = now >= maxAt;
        if (!isOverTime && (waiting > 0 || now < idleAt)) return arm();
        const why = new SdkError(SdkErrorCode.RequestTimeout, "Request timed out");
        sent.cancel(why);
        void answer(Promise.reject(callTimedOut(target, limits, isOverTime, why)));
      }
      inFlight.set(key, {
        cancel(reason) {
          if (isOver) return;
          sent.cancel(reason);
          context.signal = AbortSignal.abort(reason);
          void answer(Promise.reject(new SdkError(SdkErrorCode.RequestTimeout, String(reason))), true);
        },
      });
      arm();
      return true;
    },
  };
}
