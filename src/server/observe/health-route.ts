import type { Hono } from "hono";
import { principalOfRequest } from "../transport/resource-guard.ts";

/** What /health answers (app/health.ts makes it): its HTTP status and its JSON body. */
export interface HealthAnswer {
  httpStatus: 200 | 503;
  body: Record<string, unknown>;
}

export interface HealthRouteOptions {
  /** The whole proxy's report. */
  whole: () => HealthAnswer;
  /** A profile's report (its servers only), for a principal an access rule confines to it. */
  profile: (name: string) => HealthAnswer | undefined;
  /** `mcpproxy.httpAuth` is on: /health takes callers without a token (resource-guard.ts). */
  accessTokens: boolean;
}

/** Said to a caller of /health without a valid access token, beside the overall status. */
export const STATUS_ONLY_HINT =
  "only the overall status is shown without an access token: send Authorization: Bearer <token> " +
  "for each server's state";

/**
 * /health, for probes and people. Without access tokens it sits behind the same door as the rest
 * (the static bearer token, when one is required) and tells everything. With them
 * (`mcpproxy.httpAuth`) a load balancer's or Kubernetes' probe must get an answer without one, so
 * /health is open; but which servers run, their transports, tools and protocols tell an attacker
 * what to aim at, so a caller without a valid token is told the overall status only (with the
 * same HTTP status: 200, or 503 when no server is usable), a principal the whole report, and a
 * principal an access rule confines to a profile that profile's report, as for everything else.
 */
export function serveHealth(app: Hono, options: HealthRouteOptions): void {
  app.get("/health", (c) => {
    const { httpStatus, body } = answerFor(options, c.req.raw);
    return c.json(body, httpStatus);
  });
}

function answerFor(options: HealthRouteOptions, request: Request): HealthAnswer {
  if (!options.accessTokens) return options.whole();
  const principal = principalOfRequest(request);
  if (!principal) return statusOnly(options.whole());
  const profile = principal.rule.profile;
  if (profile === undefined) return options.whole();
  return options.profile(profile) ?? statusOnly(options.whole());
}

function statusOnly(answer: HealthAnswer): HealthAnswer {
  return { httpStatus: answer.httpStatus, body: { status: answer.body.status, hint: STATUS_ONLY_HINT } };
}
