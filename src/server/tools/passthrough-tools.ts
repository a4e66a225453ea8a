import type {
  CallToolRequest,
  CallToolResult,
  InputRequiredResult,
  Server,
  ServerContext,
  Tool,
} from "@modelcontextprotocol/server";
import { approvedTool } from "../../index/retrieve-tools.ts";
import { NAME_SEPARATOR } from "../../index/tool-naming.ts";
import { callOptionsFor } from "../calls/call-options.ts";
import { disabledMessage, errorResult, forwardCall, forwardWithRounds } from "../calls/forwarded-call.ts";
import { servePlainToolCalls } from "../calls/plain-tool-calls.ts";
import type { ClientEra } from "../client-era.ts";
import { traced } from "../observe/request-spans.ts";
import type { ProxyServerDeps } from "../proxy-deps.ts";
import type { ClientSession, ClientSessions } from "../transport/client-sessions.ts";

/**
 * The tools of `serve --passthrough SERVER`: the server's approved tools under their own names, in
 * name order, each call forwarded as call_tool would forward it (approvals, argument checks,
 * plugins, stats, relays). A tool held for approval is not listed, and a call to it is refused.
 */
export function servePassthroughTools(
  server: Server,
  deps: ProxyServerDeps,
  owner: string,
  client: { session: ClientSession; sessions: ClientSessions } | undefined,
  era: ClientEra,
  /** The last step of a call: a large result kept out of the context (read-result-tool.ts). */
  keptOut: <R extends CallToolResult | InputRequiredResult>(
    result: R,
    ctx: ServerContext,
    name: string,
  ) => Promise<R>,
): { publicName(name: string): string | undefined } {
  const { catalog } = deps;
  const tools = () =>
    catalog
      .names(owner)
      .flatMap((name) => {
        const approved = approvedTool(catalog, name);
        // Its own name, or the one a person gave it (tool-overrides.ts): the definition shown carries it.
        return approved ? [{ ...(approved.definition as Tool), name: approved.definition.name }] : [];
      })
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  /** The public name (`server__tool`) of one of the server's tools, by the name it is listed under. */
  const publicName = (name: string) =>
    catalog.names(owner).find((candidate) => {
      const tool = catalog.get(candidate);
      return tool !== undefined && catalog.definitionOf(tool)?.name === name;
    });
  /** A tool a person disabled, by its own name (so the refusal can say why; a plain name suffices). */
  const isDisabledHere = (name: string) =>
    catalog.disabled(`${owner}${NAME_SEPARATOR}${name}`)?.tool === name;

  server.setRequestHandler("tools/list", async () => {
    // On a first run the list is what the first indexing pass finds, not an empty one.
    if (deps.firstIndexing && catalog.names(owner).length === 0) await deps.firstIndexing;
    return { tools: tools() };
  });
  const callTool = async (
    raw: CallToolRequest,
    ctx: ServerContext,
  ): Promise<CallToolResult | InputRequiredResult> => {
    const { name, arguments: args, _meta } = raw.params;
    let target = publicName(name);
    if (!target && deps.firstIndexing) {
      await deps.firstIndexing;
      target = publicName(name);
    }
    if (!target && isDisabledHere(name)) return errorResult(disabledMessage(name, owner));
    if (!target) return errorResult(`No tool named ${name} on ${owner}.`);
    const call = callOptionsFor(_meta?.progressToken, ctx, client);
    const publicTarget = target;
    return call.flushed(
      await keptOut(
        await forwardWithRounds(deps, era, ctx, call, publicTarget, args, (options) =>
          forwardCall(deps, era, undefined, publicTarget, args, options, new Set()),
        ),
        ctx,
        publicTarget,
      ),
    );
  };
  servePlainToolCalls(server, traced(deps.observe?.traces, "tools/call", callTool));
  return { publicName };
}
