import type { Hono } from "hono";
import { type HealthAnswer, serveHealth } from "../observe/health-route.ts";
import type { ProxyMetrics } from "../observe/metrics.ts";
import { renderStatusPage, type StatusSources } from "../observe/status-page.ts";
import type { HttpDoor } from "./http-door.ts";

/**
 * The HTTP app's routes beside MCP (http-app.ts): /health for probes, /metrics for scrapers, and
 * the status pages, the proxy's at / and each profile's at /p/<name>/. A principal an access rule
 * confines to a profile is shown that profile's page and health, and refused the rest.
 */
export interface StatusRoutesOptions {
  /** The whole proxy's /health answer (health-route.ts says who is told what). */
  health: () => HealthAnswer;
  /** When set (`mcpproxy.metrics`), `/metrics` answers in the Prometheus text format. */
  metrics?: ProxyMetrics | undefined;
  /** The status page at `/` (status-page.ts). */
  status?: StatusSources | undefined;
  /** Each profile's status page and /health, by name. */
  profiles?:
    | ReadonlyMap<string, { status?: StatusSources | undefined; health?: (() => HealthAnswer) | undefined }>
    | undefined;
  /** The profiles' names, as a request for an unknown one is told them. */
  knownProfiles: () => string;
}

/** What /metrics answers while metrics are off. */
const METRICS_OFF =
  'Not found: /metrics is off. Turn it on with "mcpproxy": {"metrics": true} in the config file ' +
  "(or MCPPROXY_METRICS=1) and restart mcpproxy serve";

export function serveStatusRoutes(app: Hono, door: HttpDoor, options: StatusRoutesOptions): void {
  const { confinedTo, forbidden } = door;
  serveHealth(app, {
    whole: options.health,
    profile: (name) => options.profiles?.get(name)?.health?.(),
    accessTokens: door.takesAccessTokens,
  });

  const status = options.status;
  if (status) {
    app.get("/", async (c) => {
      const profile = confinedTo(c);
      if (profile !== undefined) return forbidden(c, profile);
      return c.html(await renderStatusPage(status, c.req.query("q")));
    });
  }

  const metrics = options.metrics;
  if (metrics) {
    app.get("/metrics", async (c) => {
      const profile = confinedTo(c);
      if (profile !== undefined) return forbidden(c, profile);
      return new Response(await metrics.text(), { headers: { "content-type": metrics.contentType } });
    });
  } else {
    // A scraper pointed here before metrics were turned on: say how, rather than a bare 404.
    app.get("/metrics", (c) => c.json({ error: METRICS_OFF }, 404));
  }

  for (const [name, profile] of options.profiles ?? []) {
    const sources = profile.status;
    if (sources)
      app.get(`/p/${name}/`, async (c) => {
        const confined = confinedTo(c);
        if (confined !== undefined && confined !== name) return forbidden(c, confined);
        return c.html(await renderStatusPage(sources, c.req.query("q"), name));
      });
  }
  app.get("/p/:profile/*", (c) =>
    c.json(
      { error: `Unknown profile ${c.req.param("profile")}: the profiles are ${options.knownProfiles()}` },
      404,
    ),
  );
}
