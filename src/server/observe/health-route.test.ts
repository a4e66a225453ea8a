import { describe, expect, test } from "bun:test";
import { Hono } from "hono";
import { type HealthAnswer, STATUS_ONLY_HINT, serveHealth } from "./health-route.ts";

const report = (httpStatus: 200 | 503, status: string): HealthAnswer => ({
  httpStatus,
  body: { status, version: "1", tools: 3, servers: [{ name: "secret-db", state: "failed" }] },
});

function app(whole: HealthAnswer, accessTokens: boolean) {
  const hono = new Hono();
  serveHealth(hono, { whole: () => whole, profile: () => undefined, accessTokens });
  return hono;
}

describe("/health", () => {
  test("without access tokens on, tells everything (the door in front of it decides who asks)", async () => {
    const response = await app(report(200, "ok"), false).request("http://127.0.0.1/health");
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual(report(200, "ok").body);
  });

  test("with access tokens on, tells a caller without a principal the status alone, with its HTTP status", async () => {
    for (const [httpStatus, status] of [
      [200, "ok"],
      [200, "degraded"],
      [503, "degraded"],
    ] as const) {
      const response = await app(report(httpStatus, status), true).request("http://127.0.0.1/health");
      expect(response.status).toBe(httpStatus);
      expect(await response.json()).toEqual({ status, hint: STATUS_ONLY_HINT });
    }
  });
});
