import {
  AuthorizationServerMismatchError,
  IssuerMismatchError,
  OAuthError,
  RegistrationRejectedError,
} from "@modelcontextprotocol/client";
import type { HttpServerConfig } from "../config/parse-server.ts";
import { ProxyError } from "../errors.ts";

/**
 * A failed login as the user reads it, for the SDK errors that mean something to them; undefined
 * for any other error. After an `iss` mismatch (RFC 9207) nothing the redirect carried is shown:
 * in a mix-up attack its `iss`, `error` and `error_description` are the attacker's words.
 */
export function loginFailure(server: HttpServerConfig, error: unknown): ProxyError | undefined {
  const cause = findCause(error);
  if (cause instanceof IssuerMismatchError && cause.kind === "authorization_response") {
    return new ProxyError(
      "AUTH_FAILED",
      `The authorization response did not come from the authorization server this login started with: its iss ` +
        `${cause.received === undefined ? "is missing, which that server promised to send" : "does not match"} ` +
        `(expected ${JSON.stringify(cause.expected)}, RFC 9207). It was not used, and no token was saved. ` +
        `Someone may be trying to mix up authorization servers: log in again, and if this repeats, check where ${server.name} sends you to log in.`,
      { cause },
    );
  }
  if (cause instanceof IssuerMismatchError) {
    return new ProxyError(
      "AUTH_FAILED",
      `The metadata of the authorization server ${JSON.stringify(cause.expected)} names another issuer ` +
        `(RFC 8414 §3.3), so mcpproxy does not use it and did not log in. The authorization server ${server.name} ` +
        "points to is misconfigured, or is not the one it claims to be.",
      { cause },
    );
  }
  if (cause instanceof AuthorizationServerMismatchError) {
    return new ProxyError(
      "AUTH_FAILED",
      `${server.name}'s authorization server changed during the login (from ${JSON.stringify(cause.recordedIssuer)} to ` +
        `${JSON.stringify(cause.currentIssuer)}): the answer was not used. Log in again.`,
      { cause },
    );
  }
  if (cause instanceof RegistrationRejectedError) {
    return new ProxyError(
      "AUTH_FAILED",
      `The authorization server refused to register mcpproxy (HTTP ${cause.status}). Register a client by hand and give ` +
        `its id as oauth.clientId in ${server.name}'s config entry.`,
      { cause },
    );
  }
  if (cause instanceof OAuthError) {
    return new ProxyError(
      "AUTH_FAILED",
      `The authorization server refused: ${printable(cause.code)}${cause.message && cause.message !== cause.code ? ` (${printable(cause.message)})` : ""}`,
      { cause },
    );
  }
  return undefined;
}

function findCause(error: unknown): unknown {
  for (let current = error, depth = 0; current instanceof Error && depth < 5; depth++) {
    if (
      current instanceof IssuerMismatchError ||
      current instanceof AuthorizationServerMismatchError ||
      current instanceof RegistrationRejectedError ||
      current instanceof OAuthError
    ) {
      return current;
    }
    current = current.cause;
  }
  return undefined;
}

/** The authorization server's words on one line, bounded, with nothing a terminal would act on. */
function printable(text: string): string {
  const line = text.replace(/[\p{Cc}\p{Cf}]+/gu, " ").trim();
  return line.length > 200 ? `${line.slice(0, 200)}…` : line;
}
