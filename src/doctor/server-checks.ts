import { isLoginNeeded } from "../auth/oauth-provider.ts";
import type { UpstreamAuth } from "../auth/upstream-auth.ts";
import type { ServerConfig } from "../config/parse-server.ts";
import { describeError } from "../errors.ts";
import type { UpstreamBounds } from "../upstream/upstream-bounds.ts";
import { connectUpstream } from "../upstream/upstream-connection.ts";
import type { Finding } from "./finding.ts";
import { failureFix, missingCommand } from "./server-hints.ts";

/**
 * `doctor`'s check of one configured server: what keeps it from starting before it is tried
 * (disabled, awaiting approval, a variable unset, a command not found), then started for real with
 * serve's bounds and login: how long it took to answer, its tools, its protocol era, or why it failed
 * and what to do (server-hints.ts), a needed OAuth login named as such.
 */

export async function checkServer(
  server: ServerConfig,
  env: Readonly<Record<string, string | undefined>>,
  auth: UpstreamAuth,
  bounds: UpstreamBounds,
  signal?: AbortSignal,
): Promise<Finding> {
  const subject = server.name;
  if (!server.enabled) return { area: "server", subject, status: "info", detail: "disabled" };
  if (server.awaitingApproval) {
    return {
      area: "server",
      subject,
      status: "warn",
      detail: "awaiting approval: an agent added or changed it, so it was not started",
      fix: `review what it would run with \`mcpproxy approve\`, then \`mcpproxy approve ${server.name}\``,
    };
  }
  if (server.configProblem) {
    return {
      area: "server",
      subject,
      status: "fail",
      detail: `not started: ${server.configProblem}`,
      fix: `set what it names where mcpproxy starts, or leave it out: \`mcpproxy servers disable ${server.name}\``,
    };
  }
  const missing = server.transport === "stdio" ? missingCommand(server, env) : undefined;
  if (missing) return { area: "server", subject, status: "fail", ...missing };
  const started = performance.now();
  try {
    const connection = await connectUpstream(server, {
      env,
      ...bounds,
      authProvider: auth.providerFor(server),
      ...(signal ? { signal, stopSignal: signal } : {}),
    });
    const ms = Math.round(performance.now() - started);
    const info = connection.client.getServerVersion();
    const protocol = connection.protocolVersion;
    await connection.close();
    return {
      area: "server",
      subject,
      status: connection.tools.length === 0 ? "warn" : "ok",
      detail:
        `started and answered ${connection.era === "modern" ? "server/discover" : "initialize"} in ${ms} ms: ` +
        `${connection.tools.length} tool(s)` +
        (info ? `; it is ${info.name} ${info.version}` : "") +
        (protocol ? `, protocol ${protocol} (${connection.era} era)` : "") +
        (connection.skipped.length > 0 ? `; ${connection.skipped.length} malformed tool(s) left out` : "") +
        (server.lazy ? "; lazy: serve starts it on the first call that needs it" : ""),
      ...(connection.tools.length === 0
        ? { fix: "it offers no tools, so the agent will not find anything from it" }
        : {}),
    };
  } catch (error) {
    if (isLoginNeeded(error)) {
      return {
        area: "server",
        subject,
        status: "fail",
        detail: "needs-login: it asks for an OAuth login, and mcpproxy has no valid token for it",
        fix: `run \`mcpproxy auth login ${server.name}\`; a running serve picks the login up without a restart`,
      };
    }
    return {
      area: "server",
      subject,
      status: "fail",
      detail: describeError(error),
      fix: failureFix(server, error),
    };
  }
}
