import { ListPromptsResultSchema } from "@modelcontextprotocol/core";
import type { GetPromptRequest, GetPromptResult, Server, ServerContext } from "@modelcontextprotocol/server";
import { isInputRequiredResult } from "@modelcontextprotocol/server";
import { traced } from "../observe/request-spans.ts";
import { listPage } from "./federated-lists.ts";
import type { Naming } from "./federated-names.ts";
import type { FederationContext } from "./federation-context.ts";

/**
 * The upstreams' prompts served to one client session: prompts/list under federated names (only
 * what was approved), and prompts/get forwarded to the owner unless the prompt is held, the
 * resources its messages embed or link given federated URIs.
 */
export function servePrompts(server: Server, federation: FederationContext): void {
  const { deps, naming } = federation;
  server.setRequestHandler("prompts/list", (request) =>
    listPage(
      federation,
      "prompts",
      "prompts/list",
      ListPromptsResultSchema,
      "prompts",
      request.params?.cursor,
      (owner, p) => ({
        ...p,
        name: naming.name(owner, String(p.name)),
      }),
    ),
  );
  const getPrompt = async (request: GetPromptRequest, ctx: ServerContext) => {
    const owner = federation.heldPrompt(federation.byName(request.params.name, "prompt"));
    const result = await federation.call<GetPromptResult>(ctx, "prompts/get", owner.server, owner.name, {
      ...request.params,
      name: owner.name,
    });
    if (isInputRequiredResult(result)) return result;
    return {
      ...result,
      messages: result.messages.map((message) => ({
        ...message,
        content: federatedContent(
          naming,
          owner.server,
          message.content as unknown as Record<string, unknown>,
        ),
      })),
    } as typeof result;
  };
  server.setRequestHandler("prompts/get", traced(deps.traces, "prompts/get", getPrompt));
}

/** A prompt message's content with the URIs of the resources it embeds or links made federated. */
function federatedContent(
  naming: Naming,
  server: string,
  content: Record<string, unknown>,
): Record<string, unknown> {
  if (content.type === "resource_link" && typeof content.uri === "string") {
    return { ...content, uri: naming.uri(server, content.uri) };
  }
  const resource = content.resource as Record<string, unknown> | undefined;
  if (content.type === "resource" && resource && typeof resource.uri === "string") {
    return { ...content, resource: { ...resource, uri: naming.uri(server, resource.uri) } };
  }
  return content;
}
