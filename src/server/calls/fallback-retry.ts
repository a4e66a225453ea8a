import type { CallToolResult, InputRequiredResult } from "@modelcontextprotocol/server";
import { isInputRequiredResult } from "@modelcontextprotocol/server";
import type { ServerConfig } from "../../config/parse-server.ts";
import { describeError } from "../../errors.ts";
import type { CatalogTool } from "../../index/catalog-types.ts";
import type { ToolCatalog } from "../../index/tool-catalog.ts";
import type { Logger } from "../../log.ts";
import type { CallOptions } from "../../upstream/forward-call.ts";
import type { ArgumentValidator } from "./argument-validator.ts";
import { type Alternative, withAlternatives } from "./fallback-suggestions.ts";
import { isReadOnly } from "./tool-risk.ts";

/**
 * `autoRetryFallback` (Gobby design §4, "automatic retry"): a failed call of a read-only tool is
 * made once more, with the same arguments, on the first of its alternatives (fallback-suggestions.ts)
 * that is read-only too and whose input schema accepts those arguments, and the agent gets both
 * the original error and that tool's result, each labelled. Off unless a person turns it on, in the
 * config file only: for every server they wrote (`mcpproxy.autoRetryFallback`) or per server (its
 * own `autoRetryFallback` wins); an agent cannot set it (agent-edits.ts). A retry needs it on for
 * both servers, the failed tool's and the alternative's, so `false` on a server keeps it out of
 * fallbacks either way.
 * "Read-only" is `annotations.readOnlyHint === true` in each upstream's own definition, which a
 * person approved (pinning): calling a tool that only reads, with arguments meant for a tool that
 * only reads, can change nothing. Only tools whose arguments are checked qualify as alternatives
 * (not `validateArguments: false`), and a failed tool that declares an outputSchema only falls back
 * to one with the same, so a client that checks structuredContent against it is not misled.
 * One retry at most, never a chain. The retry is a real forwarded call: plugins, quarantine, stats.
 */
export const FALLBACK_META_KEY = "mcpproxy/fallback";

export interface FallbackPolicy {
  /** autoRetryFallback as it applies to this server now. */
  isOn(server: string): boolean;
  /** Its calls' arguments are checked against the tools' input schemas. */
  checksArguments(server: string): boolean;
}

/**
 * The policy over the servers as they are now (they change at run time). The proxy-wide default
 * applies to the entries a person wrote, not to those an agent wrote (as `inheritEnv` does).
 */
export function fallbackPolicy(servers: () => readonly ServerConfig[], proxyWide: boolean): FallbackPolicy {
  const find = (name: string) => servers().find((server) => server.name === name);
  return {
    isOn(name) {
      const server = find(name);
      return server !== undefined && (server.autoRetryFallback ?? (proxyWide && !server.writtenByAgent));
    },
    checksArguments: (name) => find(name)?.validateArguments !== false,
  };
}

/** What a retry needs of the proxy's deps (proxy-deps.ts: its `calls` group). */
interface Deps {
  catalog: ToolCatalog;
  calls?: { arguments?: ArgumentValidator | undefined; fallback?: FallbackPolicy | undefined } | undefined;
  logger: Logger;
}

export interface FailedCall {
  target: CatalogTool;
  args: Record<string, unknown> | undefined;
  result: CallToolResult;
  alternatives: readonly Alternative[];
  context: CallOptions;
  /** What the failure said (the first text of its result). */
  error?: string | undefined;
}

/** The tool a failed call falls back to, or undefined when it does not fall back (see above). */
function fallbackTarget(deps: Deps, failed: FailedCall): CatalogTool | undefined {
  const policy = deps.calls?.fallback;
  const validator = deps.calls?.arguments;
  if (!policy || !validator || !policy.isOn(failed.target.server)) return undefined;
  // A retry of an input round answers the failed tool's server, not another one.
  if (failed.context.signal?.aborted || failed.context.inputResponses !== undefined) return undefined;
  const definition = deps.catalog.definitionOf(failed.target);
  if (!isReadOnly(definition)) return undefined;
  const outputSchema = JSON.stringify(definition?.outputSchema ?? null);
  for (const alternative of failed.alternatives) {
    const tool = deps.catalog.get(alternative.name);
    if (!tool || deps.catalog.isQuarantined(tool)) continue;
    if (!policy.isOn(tool.server) || !policy.checksArguments(tool.server)) continue;
    const candidate = deps.catalog.definitionOf(tool);
    if (!isReadOnly(candidate)) continue;
    if (definition?.outputSchema && JSON.stringify(candidate?.outputSchema ?? null) !== outputSchema)
      continue;
    if (validator.check(tool, failed.args ?? {}).problems === undefined) return tool;
  }
  return undefined;
}

/**
 * The failed call retried on its fallback (`call` forwards it, without a fallback of its own), or
 * undefined when there is none, or when the fallback asked for input (that round would be bound to
 * the failed tool): the caller then returns the failure with its alternatives as before.
 */
export async function retryOnFallback(
  deps: Deps,
  failed: FailedCall,
  call: (name: string, options: CallOptions) => Promise<CallToolResult | InputRequiredResult>,
): Promise<CallToolResult | undefined> {
  const to = fallbackTarget(deps, failed);
  if (!to) return undefined;
  const from = failed.target.name;
  // The failed call's client context, without what belonged to its server alone.
  const { askClient: _ask, requestState: _state, ...options } = failed.context;
  let answer: CallToolResult | InputRequiredResult;
  try {
    answer = await call(to.name, options);
  } catch (error) {
    // A 2026 client's -32021 for the fallback's server: the client did not call that tool.
    deps.logger.info(`the fallback ${to.name} of ${from} was refused: ${describeError(error)}`);
    return undefined;
  }
  if (isInputRequiredResult(answer)) {
    deps.logger.info(`the fallback ${to.name} of ${from} asked for input; returning the failure`);
    return undefined;
  }
  deps.logger.info(`${from} failed; retried on ${to.name} (autoRetryFallback)`, {
    outcome: answer.isError ? "failed too" : "ok",
  });
  const combined = fallbackResult({ from, to: to.name, originalError: failed.error }, failed.result, answer);
  // When the fallback failed as well, the agent still gets the other alternatives.
  return answer.isError
    ? withAlternatives(
        combined,
        failed.alternatives.filter((alternative) => alternative.name !== to.name),
      )
    : combined;
}

/** Both results in one, labelled: the original error first, then the fallback's result. */
export function fallbackResult(
  { from, to, originalError }: { from: string; to: string; originalError?: string | undefined },
  original: CallToolResult,
  fallback: CallToolResult,
): CallToolResult {
  const label = { from, to, originalError: originalError?.slice(0, 1_000) ?? "" };
  return {
    ...fallback,
    content: [
      {
        type: "text",
        text:
          `[mcpproxy] ${from} failed (its error follows). autoRetryFallback then called ${to}, also read-only, ` +
          "with the same arguments; its result comes after the error.",
      },
      ...(original.content ?? []),
      {
        type: "text",
        text: `[mcpproxy] Result of ${to}, called in place of ${from}${fallback.isError ? " (it failed too)" : ""}:`,
      },
      ...(fallback.content ?? []),
    ],
    _meta: { ...fallback._meta, [FALLBACK_META_KEY]: label },
  };
}
