import { describe, expect, test } from "bun:test";
import { Hono } from "hono";
import { hostGuard } from "./host-guard.ts";

function app(bindHost = "127.0.0.1") {
  const hono = new Hono();
  hono.use("*", hostGuard({ bindHost }));
  hono.get("/", (c) => c.text("ok"));
  return hono;
}
const get = (hono: Hono, headers: Record<string, string>) => hono.request("http://x/", { headers });

describe("hostGuard", () => {
  test("lets loopback hosts and origins through", async () => {
    const hono = app();
    expect((await get(hono, { host: "127.0.0.1:8000" })).status).toBe(200);
    expect((await get(hono, { host: "localhost:8000", origin: "http://localhost:3000" })).status).toBe(200);
    expect((await get(hono, { host: "[::1]:8000", origin: "http://[::1]:8000" })).status).toBe(200);
  });

  test("rejects a foreign Host header (DNS rebinding) with 403", async () => {
    const response = await get(app(), { host: "evil.example:8000" });
    expect(response.status).toBe(403);
    const { error } = (await response.json()) as { error: string };
    expect(error).toContain("evil.example");
    // What to change to allow a name: the bind address, by its flag, variable and config key.
    expect(error).toContain("--host ADDRESS");
    expect(error).toContain("MCPPROXY_HOST");
    expect(error).toContain("mcpproxy.host");
  });

  test("rejects a foreign, null or malformed Origin with 403", async () => {
    const hono = app();
    for (const origin of ["http://evil.example", "null", "not a url", "http://127.0.0.1.evil.example"]) {
      const response = await get(hono, { host: "127.0.0.1:8000", origin });
      expect(response.status).toBe(403);
      expect(((await response.json()) as { error: string }).error).toContain("--host ADDRESS");
    }
  });

  test("accepts the configured bind host and, on a wildcard bind, any host with its own origin", async () => {
    expect((await get(app("192.168.1.5"), { host: "192.168.1.5:8000" })).status).toBe(200);
    const wide = app("0.0.0.0");
    expect((await get(wide, { host: "myhost:8000", origin: "http://myhost:8000" })).status).toBe(200);
    expect((await get(wide, { host: "myhost:8000", origin: "http://evil.example" })).status).toBe(403);
  });
});
