import * as v from "valibot";
import type { ExpansionProblem } from "./expand-env.ts";
import { unknownKeys } from "./known-keys.ts";
import type { Profiles } from "./profile-settings.ts";
import type { ResolveTable } from "./search-config.ts";
import { httpUrl, intInRange, nonEmptyString } from "./value-schemas.ts";

/**
 * `mcpproxy.httpAuth`: the HTTP listener as an OAuth 2.1 protected resource (RFC 9728). Off unless
 * `issuer` is set; then every MCP request needs a JWT access token from that issuer, for `audience`
 * (src/auth/resource/). A person's setting: the file and the environment only, and `upstream_servers`
 * cannot write it (it writes server entries alone). `access` (file only) maps principals to a
 * profile of `mcpproxy.profiles` and a call quota; the first rule that matches wins.
 */
export interface ResolvedHttpAuth {
  issuer: string;
  audience: string;
  /** Unset: read from the issuer's metadata (RFC 8414, or OpenID Connect discovery). */
  jwksUri?: string | undefined;
  /** The resource identifier in the metadata document; unset, the listener's /mcp URL. */
  resource?: string | undefined;
  requiredScopes: readonly string[];
  algorithms: readonly string[];
  clockToleranceSec: number;
  /** How long a fetched key set is used before it is fetched again. */
  jwksCacheSec: number;
  /** The least time between two fetches caused by a token whose key is not known. */
  jwksCooldownSec: number;
  /** Calls (tools/call) a minute per principal; 0: no quota but the rules' own. */
  callsPerMinute: number;
  access: readonly AccessRule[];
}

export interface AccessRule {
  /** Claim → value: each must match (an array claim or a space-separated `scope` holding it counts). */
  match: Readonly<Record<string, string>>;
  /** The profile this principal is served (at /mcp and /sse); unset, the whole proxy. */
  profile?: string | undefined;
  /** This principal's quota instead of `callsPerMinute` (0: none). */
  callsPerMinute?: number | undefined;
}

/** Asymmetric algorithms only: an HS* token "signed" with the issuer's public key proves nothing. */
const ASYMMETRIC_ALGORITHMS = [
  "RS256",
  "RS384",
  "RS512",
  "PS256",
  "PS384",
  "PS512",
  "ES256",
  "ES384",
  "ES512",
  "EdDSA",
] as const;

export const HTTP_AUTH_DEFAULTS = {
  requiredScopes: [] as readonly string[],
  algorithms: ASYMMETRIC_ALGORITHMS as readonly string[],
  clockToleranceSec: 30,
  jwksCacheSec: 600,
  jwksCooldownSec: 30,
  callsPerMinute: 0,
};

/** A list as an array (the file) or words split by spaces or commas (the environment). */
const wordList = (what: string) =>
  v.pipe(
    v.union([v.string(), v.array(v.string())], `must be an array of ${what}s, or one string of them`),
    v.transform((input) =>
      (typeof input === "string" ? input.split(/[\s,]+/) : input).filter((word) => word !== ""),
    ),
  );

const algorithms = v.pipe(
  wordList("algorithm"),
  v.check((list) => list.length > 0, "must name at least one algorithm"),
  v.check(
    (list) => list.every((alg) => (ASYMMETRIC_ALGORITHMS as readonly string[]).includes(alg)),
    `may hold only ${ASYMMETRIC_ALGORITHMS.join(", ")} (no "none", no HS* shared-secret algorithms)`,
  ),
);

/** https, or http on this machine (a test or a local issuer): tokens and keys must not travel in clear. */
const secureUrl = v.pipe(
  httpUrl,
  v.check((url) => {
    const parsed = new URL(url);
    return (
      parsed.protocol === "https:" ||
      (parsed.protocol === "http:" && ["127.0.0.1", "localhost", "[::1]"].includes(parsed.hostname))
    );
  }, "must be an https:// URL (http:// only on 127.0.0.1, localhost or [::1])"),
);

const HTTP_AUTH_SETTINGS = {
  issuer: { env: "MCPPROXY_HTTP_AUTH_ISSUER", schema: secureUrl },
  audience: { env: "MCPPROXY_HTTP_AUTH_AUDIENCE", schema: nonEmptyString },
  jwksUri: { env: "MCPPROXY_HTTP_AUTH_JWKS_URI", schema: secureUrl },
  resource: { env: "MCPPROXY_HTTP_AUTH_RESOURCE", schema: httpUrl },
  requiredScopes: { env: "MCPPROXY_HTTP_AUTH_SCOPES", schema: wordList("scope") },
  algorithms: { env: "MCPPROXY_HTTP_AUTH_ALGORITHMS", schema: algorithms },
  clockToleranceSec: { env: "MCPPROXY_HTTP_AUTH_CLOCK_TOLERANCE_SEC", schema: intInRange(0, 600) },
  jwksCacheSec: { env: "MCPPROXY_HTTP_AUTH_JWKS_CACHE_SEC", schema: intInRange(1, 86_400) },
  jwksCooldownSec: { env: "MCPPROXY_HTTP_AUTH_JWKS_COOLDOWN_SEC", schema: intInRange(0, 3_600) },
  callsPerMinute: { env: "MCPPROXY_HTTP_AUTH_CALLS_PER_MINUTE", schema: intInRange(0, 1_000_000) },
} as const;

const RULE_KEYS = ["match", "profile", "callsPerMinute"] as const;
const RuleSchema = v.object({
  match: v.optional(
    v.record(v.pipe(v.string(), v.nonEmpty()), nonEmptyString, "must be an object of claim values"),
    {},
  ),
  profile: v.optional(nonEmptyString),
  callsPerMinute: v.optional(intInRange(0, 1_000_000)),
});

export function resolveHttpAuth(
  input: {
    raw: unknown;
    resolve: ResolveTable;
    profiles: Profiles;
  },
  problems: ExpansionProblem[],
): ResolvedHttpAuth | undefined {
  const path = "mcpproxy.httpAuth";
  const isObject = input.raw !== null && typeof input.raw === "object" && !Array.isArray(input.raw);
  if (input.raw !== undefined && !isObject) problems.push({ path, message: "must be an object of settings" });
  const section = isObject ? (input.raw as Record<string, unknown>) : {};
  problems.push(...unknownKeys(section, [...Object.keys(HTTP_AUTH_SETTINGS), "access"], path));
  const resolved: Record<string, unknown> = { ...HTTP_AUTH_DEFAULTS };
  input.resolve(HTTP_AUTH_SETTINGS, section, path, {}, resolved);
  const access = parseAccess(section.access, input.profiles, problems);
  if (resolved.issuer === undefined) {
    const stray = Object.keys(section).filter((key) => key in HTTP_AUTH_SETTINGS || key === "access");
    if (stray.length > 0)
      problems.push({
        path: `${path}.issuer`,
        message: `is needed: ${stray.join(", ")} take effect with it`,
      });
    return undefined;
  }
  if (resolved.audience === undefined)
    problems.push({
      path: `${path}.audience`,
      message: "is needed with issuer: the tokens' `aud` must name this proxy (MCPPROXY_HTTP_AUTH_AUDIENCE)",
    });
  return { ...(resolved as unknown as ResolvedHttpAuth), access };
}

function parseAccess(raw: unknown, profiles: Profiles, problems: ExpansionProblem[]): AccessRule[] {
  if (raw === undefined) return [];
  const path = "mcpproxy.httpAuth.access";
  if (!Array.isArray(raw)) {
    problems.push({ path, message: 'must be an array of rules, [{"match": {"sub": "…"}, "profile": "…"}]' });
    return [];
  }
  const rules: AccessRule[] = [];
  raw.forEach((entry, index) => {
    const at = `${path}.${index}`;
    if (entry === null || typeof entry !== "object" || Array.isArray(entry)) {
      problems.push({
        path: at,
        message: 'must be an object with "match", "profile" and/or "callsPerMinute"',
      });
      return;
    }
    const unknown = unknownKeys(entry as Record<string, unknown>, RULE_KEYS, at);
    problems.push(...unknown);
    const parsed = v.safeParse(RuleSchema, entry);
    if (!parsed.success) {
      for (const issue of parsed.issues) {
        const keys = (issue.path ?? []).map((item) => String(item.key)).join(".");
        problems.push({ path: keys ? `${at}.${keys}` : at, message: issue.message });
      }
      return;
    }
    const { profile } = parsed.output;
    if (profile !== undefined && !(profile in profiles)) {
      const known = Object.keys(profiles);
      problems.push({
        path: `${at}.profile`,
        message: `names no profile of mcpproxy.profiles (${known.length > 0 ? known.join(", ") : "none"})`,
      });
      return;
    }
    if (unknown.length === 0) rules.push(parsed.output);
  });
  return rules;
}
