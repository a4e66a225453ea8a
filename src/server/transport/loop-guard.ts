import type { MiddlewareHandler } from "hono";
import { ANCESTRY_HEADER, type Ancestry, loopProblem, parseAncestry } from "../../upstream/proxy-ancestry.ts";

/**
 * Refuses MCP requests from a proxy chain this proxy is already part of (its config lists its
 * own URL, directly or through other proxies): every call would otherwise go round the loop.
 * Answered with 508 Loop Detected and the reason, which the calling proxy shows for that server.
 */
export function loopGuard(ancestry: Ancestry, configPath: string): MiddlewareHandler {
  return async (c, next) => {
    const above = parseAncestry(c.req.header(ANCESTRY_HEADER));
    const problem = above.length > 0 ? loopProblem(ancestry.self, above, configPath) : undefined;
    if (problem) {
      return c.json({ jsonrpc: "2.0", error: { code: -32600, message: problem }, id: null }, 508);
    }
    await next();
  };
}
