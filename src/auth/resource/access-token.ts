import { errors, jwtVerify } from "jose";
import type { AccessRule, ResolvedHttpAuth } from "../../config/http-auth-config.ts";
import { accessRuleFor, scopesOf } from "./access-rules.ts";
import { createIssuerKeys, type IssuerKeys, IssuerUnavailable } from "./issuer-keys.ts";

/**
 * Whether a JWT access token admits its holder (RFC 9068 profile, as MCP's authorization spec
 * asks of a resource server): signed by a key of the issuer's key set with an allowed asymmetric
 * algorithm (jose refuses `none`, and an HS* token finds no key: a key set holds public keys), `iss`
 * the issuer, `aud` naming this proxy (a token minted for another resource is refused: RFC 8707),
 * `exp`/`nbf` within `clockToleranceSec`, a `sub` that is a non-empty string, and the required scopes. The admitted holder
 * is a principal: `sub` with its issuer. The token itself goes nowhere past this check.
 */
export interface Principal {
  /** `sub` and the issuer, in one string: where results, input rounds and figures are scoped. */
  key: string;
  subject: string;
  issuer: string;
  scopes: readonly string[];
  /** Seconds since the epoch. */
  expiresAt?: number | undefined;
  /** The access rule it falls under (its profile and quota). */
  rule: AccessRule;
}

type TokenVerdict =
  | { ok: true; principal: Principal }
  | {
      ok: false;
      /** 401 a bad token, 403 a good one without the scopes or no rule, 503 the issuer cannot be reached. */
      status: 401 | 403 | 503;
      error: "invalid_token" | "insufficient_scope" | "access_denied" | "temporarily_unavailable";
      description: string;
    };

export interface AccessTokens {
  verify(token: string): Promise<TokenVerdict>;
  keys: IssuerKeys;
}

function principalKey(issuer: string, subject: string): string {
  // An issuer is a URL (no spaces); the subject follows it whole, whatever it holds.
  return `oauth ${issuer} ${subject}`;
}

export function createAccessTokens(settings: ResolvedHttpAuth): AccessTokens {
  const keys = createIssuerKeys({
    issuer: settings.issuer,
    jwksUri: settings.jwksUri,
    cacheSec: settings.jwksCacheSec,
    cooldownSec: settings.jwksCooldownSec,
  });
  return {
    keys,
    async verify(token) {
      let payload: Record<string, unknown>;
      try {
        ({ payload } = await jwtVerify(token, keys.getKey, {
          issuer: settings.issuer,
          audience: settings.audience,
          algorithms: [...settings.algorithms],
          clockTolerance: settings.clockToleranceSec,
          requiredClaims: ["exp", "sub"],
        }));
      } catch (error) {
        return refusalOf(error);
      }
      // RFC 7519 §4.1.2: `sub` is a StringOrURI. jose checks only that it is there: an empty one
      // names nobody, and every object-valued one would become the same principal ("[object Object]").
      if (typeof payload.sub !== "string" || payload.sub === "")
        return invalidToken("the token's sub claim is not accepted (it must be a non-empty string)");
      const subject = payload.sub;
      const scopes = scopesOf(payload);
      const missing = settings.requiredScopes.filter((scope) => !scopes.includes(scope));
      if (missing.length > 0)
        return {
          ok: false,
          status: 403,
          error: "insufficient_scope",
          description: `the token lacks the scope ${missing.join(" ")}`,
        };
      const rule = accessRuleFor(payload, settings.access);
      if (!rule)
        return {
          ok: false,
          status: 403,
          error: "access_denied",
          description: `no rule of mcpproxy.httpAuth.access admits ${subject}`,
        };
      return {
        ok: true,
        principal: {
          key: principalKey(settings.issuer, subject),
          subject,
          issuer: settings.issuer,
          scopes,
          expiresAt: typeof payload.exp === "number" ? payload.exp : undefined,
          rule,
        },
      };
    },
  };
}

/** A 401 `invalid_token`: the client must get another token. */
function invalidToken(description: string): TokenVerdict {
  return { ok: false, status: 401, error: "invalid_token", description };
}

/** Why a token was refused, in words a person setting up a client can act on (never the token). */
function refusalOf(error: unknown): TokenVerdict {
  const unavailable = (description: string): TokenVerdict => ({
    ok: false,
    status: 503,
    error: "temporarily_unavailable",
    description,
  });
  if (error instanceof IssuerUnavailable)
    return unavailable(`the issuer's keys cannot be read: ${error.message}`);
  if (error instanceof errors.JWKSTimeout || error instanceof errors.JWKSInvalid)
    return unavailable(`the issuer's key set cannot be read: ${error.message}`);
  if (error instanceof errors.JWTExpired) return invalidToken("the token has expired");
  if (error instanceof errors.JWTClaimValidationFailed)
    return invalidToken(`the token's ${error.claim} claim is not accepted (${error.reason})`);
  if (error instanceof errors.JOSEAlgNotAllowed)
    return invalidToken("the token's signing algorithm is not accepted");
  if (error instanceof errors.JWKSNoMatchingKey)
    return invalidToken("no key of the issuer matches the token's kid and alg");
  if (error instanceof errors.JWSSignatureVerificationFailed)
    return invalidToken("the token's signature does not verify");
  if (error instanceof errors.JOSEError && error.code === "ERR_JOSE_GENERIC")
    return unavailable(`the issuer's key set cannot be read: ${error.message}`);
  return invalidToken("the token is not a well-formed signed JWT");
}
