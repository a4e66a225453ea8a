import type { AccessRule } from "../../config/http-auth-config.ts";

/**
 * Which `mcpproxy.httpAuth.access` rule a principal falls under: the first whose every `match`
 * entry its token's claims hold. A claim holds a value when it is that value, an array containing
 * it, or (for `scope`) a space-separated list naming it. No rules: everyone with a valid token is
 * served the whole proxy; rules that name nobody: refused (403), as a person who wrote rules listed
 * who may come in.
 */
export function accessRuleFor(
  claims: Readonly<Record<string, unknown>>,
  rules: readonly AccessRule[],
): AccessRule | undefined {
  if (rules.length === 0) return { match: {} };
  return rules.find((rule) =>
    Object.entries(rule.match).every(([claim, value]) => holds(claims[claim], value)),
  );
}

function holds(claim: unknown, value: string): boolean {
  if (typeof claim === "string") return claim === value || claim.split(" ").includes(value);
  if (typeof claim === "number" || typeof claim === "boolean") return String(claim) === value;
  return Array.isArray(claim) && claim.some((item) => typeof item === "string" && item === value);
}

/** The scopes a token grants: `scope` (RFC 9068, space-separated) or `scp` (an array, some issuers). */
export function scopesOf(claims: Readonly<Record<string, unknown>>): string[] {
  if (typeof claims.scope === "string") return claims.scope.split(" ").filter((scope) => scope !== "");
  if (Array.isArray(claims.scp))
    return claims.scp.filter((scope): scope is string => typeof scope === "string");
  return [];
}
