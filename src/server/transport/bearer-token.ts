import { randomBytes, timingSafeEqual } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { MiddlewareHandler } from "hono";
import { writeFileAtomic } from "../../atomic-file.ts";
import { ProxyError } from "../../errors.ts";
import { isLoopbackHost } from "./host-guard.ts";

/**
 * The HTTP listener's bearer token. Off by default on 127.0.0.1 (the Host/Origin guard keeps
 * browsers out, and other local users cannot reach a loopback socket by name alone); on when asked
 * (`requireToken`) and always when the listener binds an address other hosts can reach. The
 * token is made once and kept in `<dataDir>/http-token` (0600); clients send
 * `Authorization: Bearer <token>`. It is checked in constant time and never forwarded upstream
 * (the proxy sends upstreams only their own configured headers).
 */
export const TOKEN_FILE = "http-token";

export function isTokenRequired(host: string, requireToken: boolean): boolean {
  return requireToken || !isLoopbackHost(host);
}

/**
 * The token in the data dir, made on first use; `mayCreate` false where the data dir cannot be
 * written (serve on a read-only one): then only a token already there serves.
 */
export async function loadOrCreateToken(
  dataDir: string,
  options: { mayCreate?: boolean } = {},
): Promise<{ token: string; path: string }> {
  const path = join(dataDir, TOKEN_FILE);
  if (existsSync(path)) {
    const token = readFileSync(path, "utf8").trim();
    if (token.length >= 32) return { token, path };
  }
  if (options.mayCreate === false)
    throw new ProxyError(
      "DATA_DIR_UNWRITABLE",
      `The HTTP listener needs a bearer token, kept in ${path}, and the data dir cannot be written to make ` +
        "one: put a token of 32 characters or more there (`openssl rand -hex 32`), or give serve a writable " +
        "data dir (--data-dir, MCPPROXY_DATA_DIR).",
    );
  const token = randomBytes(32).toString("hex");
  await writeFileAtomic(path, `${token}\n`);
  return { token, path };
}

/**
 * The token an Authorization header carries, or undefined. The scheme is case-insensitive and may be
 * followed by more than one space (RFC 9110 §11.1, §11.4): `bearer`, `BEARER` and `Bearer` alike.
 */
function bearerOf(header: string | undefined): string | undefined {
  const match = /^bearer +(\S+) *$/i.exec(header ?? "");
  return match?.[1];
}

/** Refuses every request without the token with 401 (a CORS preflight carries none and passes). */
export function bearerToken(token: string): MiddlewareHandler {
  const expected = Buffer.from(token);
  return async (c, next) => {
    if (c.req.method === "OPTIONS") return next();
    const given = Buffer.from(bearerOf(c.req.header("authorization")) ?? "");
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
      c.header("WWW-Authenticate", 'Bearer realm="mcpproxy"');
      return c.json(
        {
          error:
            "Unauthorized: send Authorization: Bearer <token>, with the token from the http-token file in the proxy's data dir",
        },
        401,
      );
    }
    await next();
  };
}
