import { SdkHttpError, SseError } from "@modelcontextprotocol/client";
import type { ServerConfig } from "../config/parse-server.ts";
import { describeError, isProxyError } from "../errors.ts";
import { redactSecrets } from "../security/redact-secrets.ts";

/**
 * An upstream failure as text the proxy may show: to an agent (a call's error, `upstream_servers`),
 * on the status page, in stats. An HTTP server's response body never appears, only its status
 * line: the SDK puts the body of a refused POST in its error message, and the body of whatever
 * answers at a URL (an internal service, say) is not the agent's to read. Known secret shapes are
 * redacted from what remains.
 */
export function upstreamErrorText(error: unknown): string {
  return redactSecrets(withoutBody(error));
}

function withoutBody(error: unknown): string {
  if (isProxyError(error)) return error.message;
  if (error instanceof SdkHttpError || error instanceof SseError) {
    const code = error instanceof SdkHttpError ? error.status : (error.code ?? -1);
    if (code > 0) return statusLine(code);
    return clip(error.message);
  }
  const message = describeError(error);
  // The legacy SSE transport's refused POST: "Error POSTing to endpoint (HTTP 400): <body>".
  const posted = /Error POSTing to endpoint \(HTTP (\d{3})\)/.exec(message);
  if (posted) return statusLine(Number(posted[1]));
  return clip(message);
}

function statusLine(code: number): string {
  // node:http for its reason phrases, on this error path only: importing it costs every serve megabytes.
  const { STATUS_CODES } = require("node:http") as typeof import("node:http");
  return `the server answered HTTP ${code}${STATUS_CODES[code] ? ` ${STATUS_CODES[code]}` : ""} (its response is not shown)`;
}

/** Long enough for any error the SDK or a runtime writes; bounded against one made of a whole page. */
const MAX_CHARS = 300;
const clip = (text: string) => (text.length > MAX_CHARS ? `${text.slice(0, MAX_CHARS)}…` : text);

/**
 * Whether a request failed because the server no longer knows our session: it restarted, or
 * expired the session. Such a request never ran, so it is safe to open a new session and send it
 * again. Streamable HTTP servers answer 404 (the spec), some 400 naming the session
 * ("No valid session ID provided"); a legacy SSE server answers the POST with 404 or 400.
 */
export function isSessionLost(error: unknown): boolean {
  if (error instanceof SdkHttpError) {
    return error.status === 404 || (error.status === 400 && /session/i.test(error.message));
  }
  const message = error instanceof Error ? error.message : "";
  return /Error POSTing to endpoint \(HTTP (404|400)\)/.test(message) && /session/i.test(message);
}

/** Whether a request failed because nothing listens at the server's address: it never arrived. */
export function isConnectionRefused(error: unknown): boolean {
  for (let current = error, depth = 0; current instanceof Error && depth < 4; depth++) {
    const code = (current as { code?: unknown }).code;
    if (code === "ECONNREFUSED" || code === "ConnectionRefused") return true;
    current = current.cause;
  }
  return false;
}

/** Why a connect failed, with the last of the child's stderr (redacted). */
export function connectFailure(server: ServerConfig, error: unknown, stderr: string): string {
  const code = (error as { code?: unknown })?.code;
  let reason = upstreamErrorText(error);
  if (server.transport === "stdio" && code === "ENOENT") {
    reason = `command not found: ${server.command} (check the command and PATH)`;
  } else if (/connection closed/i.test(reason)) {
    reason = "the server closed the connection during initialize (it probably exited)";
  }
  return `${reason}${stderr ? `\n  stderr: ${redactSecrets(stderr).split("\n").join("\n          ")}` : ""}`;
}

/** Why an open connection ended, with the last lines of stderr (redacted). */
export function closedReason(stderr: string): string {
  return `the connection closed${stderr ? `; stderr: ${redactSecrets(stderr.split("\n").slice(-5).join(" | "))}` : ""}`;
}
