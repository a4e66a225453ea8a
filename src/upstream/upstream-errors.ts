import { STATUS_CODES } from "node:http";
import { SdkHttpError, SseError } from "@modelcontextprotocol/client";
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
  return `the server answered HTTP ${code}${STATUS_CODES[code] ? ` ${STATUS_CODES[code]}` : ""} (its response is not shown)`;
}

/** Long enough for any error the SDK or a runtime writes; bounded against one made of a whole page. */
const MAX_CHARS = 300;
const clip = (text: string) => (text.length > MAX_CHARS ? `${text.slice(0, MAX_CHARS)}…` : text);
