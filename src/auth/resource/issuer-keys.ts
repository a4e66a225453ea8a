import { createRemoteJWKSet, customFetch, type JWTVerifyGetKey } from "jose";

/**
 * The signing keys of the issuer whose access tokens the HTTP listener takes. The key set's URL is
 * the configured `jwksUri`, or found in the issuer's metadata (RFC 8414
 * `/.well-known/oauth-authorization-server`, then OpenID Connect discovery), whose `issuer` must be
 * the configured one (RFC 8414 §3.3: metadata naming another issuer would let its keys in).
 * Found lazily at the first token, so the proxy starts while the issuer is down.
 *
 * The key set is cached for `cacheSec`; a token whose `kid` it does not hold makes it fetched
 * again, at most once per `cooldownSec` (jose's remote key set), so a flood of made-up kids costs
 * the issuer one request per cooldown. A fetch that failed is not tried again for `retrySec`: while
 * the issuer is down, requests are answered at once (503) rather than each waiting on it.
 */
export interface IssuerKeysOptions {
  issuer: string;
  jwksUri?: string | undefined;
  cacheSec: number;
  cooldownSec: number;
  /** How long one fetch of the metadata or the key set may take, in ms. */
  timeoutMs?: number;
  /** Seconds after a failed fetch before another is made. */
  retrySec?: number;
  now?: () => number;
}

/** The issuer (its metadata or its key set) could not be reached or answered nonsense. */
export class IssuerUnavailable extends Error {
  override name = "IssuerUnavailable";
}

export interface IssuerKeys {
  getKey: JWTVerifyGetKey;
  /** The key set's URL, once known. */
  jwksUri(): string | undefined;
}

const TIMEOUT_MS = 5_000;
const RETRY_SEC = 2;

export function createIssuerKeys(options: IssuerKeysOptions): IssuerKeys {
  const now = options.now ?? Date.now;
  const timeoutMs = options.timeoutMs ?? TIMEOUT_MS;
  const retryMs = (options.retrySec ?? RETRY_SEC) * 1000;
  let failedAt = Number.NEGATIVE_INFINITY;
  let lastFailure = "";
  /** One round with the issuer (discovery, or one key set fetch): refused at once within `retrySec` of a failed one. */
  const guarded = async <T>(round: () => Promise<T>): Promise<T> => {
    if (now() - failedAt < retryMs) throw new IssuerUnavailable(lastFailure);
    try {
      return await round();
    } catch (error) {
      failedAt = now();
      lastFailure = (error as Error).message;
      throw error instanceof IssuerUnavailable ? error : new IssuerUnavailable(lastFailure, { cause: error });
    }
  };
  const issuerFetch = async (url: string, init: RequestInit = {}): Promise<Response> => {
    let response: Response;
    try {
      response = await fetch(url, { ...init, redirect: "manual", signal: AbortSignal.timeout(timeoutMs) });
    } catch (error) {
      throw new IssuerUnavailable(`${url} could not be reached (${(error as Error).message})`, {
        cause: error,
      });
    }
    if (response.status !== 200) throw new IssuerUnavailable(`${url} answered HTTP ${response.status}`);
    return response;
  };
  let uri = options.jwksUri;
  let keys: JWTVerifyGetKey | undefined;
  const keySet = async (): Promise<JWTVerifyGetKey> => {
    if (keys) return keys;
    uri ??= await guarded(() => discoverJwksUri(options.issuer, issuerFetch));
    keys = createRemoteJWKSet(new URL(uri), {
      cacheMaxAge: options.cacheSec * 1000,
      cooldownDuration: options.cooldownSec * 1000,
      timeoutDuration: timeoutMs,
      [customFetch]: (url: string, init: RequestInit) => guarded(() => issuerFetch(url, init)),
    });
    return keys;
  };
  return {
    getKey: async (header, token) => (await keySet())(header, token),
    jwksUri: () => uri,
  };
}

/** Where the issuer's metadata lives: RFC 8414 puts the well-known part before the issuer's path. */
export function metadataUrls(issuer: string): string[] {
  const url = new URL(issuer);
  const path = url.pathname.replace(/\/+$/, "");
  return [
    `${url.origin}/.well-known/oauth-authorization-server${path}`,
    `${url.origin}${path}/.well-known/openid-configuration`,
  ];
}

/** Trailing slashes aside, the same issuer (RFC 8414 asks for an exact match; some servers add one). */
const sameIssuer = (a: string, b: string) => a.replace(/\/+$/, "") === b.replace(/\/+$/, "");

async function discoverJwksUri(
  issuer: string,
  fetchIssuer: (url: string) => Promise<Response>,
): Promise<string> {
  const why: string[] = [];
  for (const url of metadataUrls(issuer)) {
    let metadata: { issuer?: unknown; jwks_uri?: unknown };
    try {
      metadata = (await (await fetchIssuer(url)).json()) as typeof metadata;
    } catch (error) {
      why.push((error as Error).message);
      continue;
    }
    if (typeof metadata.issuer !== "string" || !sameIssuer(metadata.issuer, issuer))
      throw new IssuerUnavailable(
        `${url} names the issuer ${JSON.stringify(metadata.issuer)}, not ${issuer}: its keys are not trusted`,
      );
    if (typeof metadata.jwks_uri !== "string" || !URL.canParse(metadata.jwks_uri))
      throw new IssuerUnavailable(`${url} has no jwks_uri: set mcpproxy.httpAuth.jwksUri`);
    return metadata.jwks_uri;
  }
  throw new IssuerUnavailable(`the issuer's metadata could not be read: ${why.join("; ")}`);
}
