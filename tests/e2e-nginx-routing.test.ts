import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { cleanupAfterEach } from "./helpers.ts";
import { NGINX, NGINX_MISSING, startNginx } from "./support/nginx.ts";
import {
  backendOf,
  openStream,
  type SessionBackend,
  send,
  startSessionBackend,
} from "./support/session-backend.ts";

// A loaded 2-core machine can be slow without anything being wrong: a generous bound, not 5 s.
setDefaultTimeout(60_000);

/**
 * The shipped nginx configuration (deploy/nginx/nginx.conf, run by tests/support/nginx.ts) in front
 * of two stand-in replicas that hold 2025 sessions in memory as mcpproxy does: modern requests
 * spread, a 2025 session stays on the replica that opened it, streams are not buffered, and a
 * dead replica's traffic moves on only where that is safe.
 */
if (!NGINX) process.stderr.write(`skipping the nginx routing tests: ${NGINX_MISSING}\n`);

const { defer } = cleanupAfterEach();
const MODERN = { "mcp-method": "tools/call", "mcp-protocol-version": "2026-07-28" };
/** Twelve clients, each from its own loopback address. */
const CLIENTS = Array.from({ length: 12 }, (_, i) => `127.0.0.${i + 2}`);

async function topology(): Promise<{ url: URL; backends: SessionBackend[] }> {
  const backends = [await startSessionBackend("a"), await startSessionBackend("b")];
  for (const backend of backends) defer(() => backend.stop());
  const nginx = await startNginx({ upstreams: backends.map((backend) => backend.address) });
  defer(() => nginx.stop());
  return { url: new URL("/mcp", nginx.url), backends };
}

function count(names: string[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const name of names) counts[name] = (counts[name] ?? 0) + 1;
  return counts;
}

describe.skipIf(!NGINX)("nginx in front of replicas (deploy/nginx/nginx.conf)", () => {
  test("spreads 2026-07-28 requests (no session) over every replica, from one client", async () => {
    const { url } = await topology();
    const answers = [];
    for (let i = 0; i < 20; i++) answers.push(await send(url, { headers: MODERN, body: "{}" }));
    expect(answers.every((answer) => answer.status === 200)).toBe(true);
    const spread = count(answers.map(backendOf));
    expect(Object.keys(spread).sort()).toEqual(["a", "b"]);
  });

  test("keeps each 2025 session on the replica that answered its initialize, and spreads the sessions", async () => {
    const { url } = await topology();
    const openedOn = new Set<string>();
    for (const from of CLIENTS) {
      const init = await send(url, { from, body: '{"method":"initialize"}' });
      expect(init.status).toBe(200);
      const sessionId = init.headers["mcp-session-id"] as string;
      const home = backendOf(init);
      openedOn.add(home);
      for (let i = 0; i < 5; i++) {
        const next = await send(url, { from, headers: { "mcp-session-id": sessionId }, body: "{}" });
        // 404 would be another replica that does not hold the session.
        expect({ from, status: next.status, backend: backendOf(next) }).toEqual({
          from,
          status: 200,
          backend: home,
        });
      }
    }
    expect([...openedOn].sort()).toEqual(["a", "b"]);
  });

  test("keeps the SSE transport's /messages?sessionId= on the replica holding the /sse stream", async () => {
    const { url } = await topology();
    const homes = new Set<string>();
    for (const from of CLIENTS) {
      const stream = await openStream(new URL("/sse", url), { from });
      defer(() => stream.close());
      const endpoint = /data: (\S+)/.exec(stream.first)?.[1] ?? "";
      expect(endpoint).toMatch(/^\/messages\?sessionId=/);
      const post = await send(new URL(endpoint, url), { from, body: "{}" });
      expect(post.status).toBe(202);
      homes.add(backendOf(post));
    }
    expect([...homes].sort()).toEqual(["a", "b"]);
  });

  test("passes a streamed answer through as it is written, before it ends", async () => {
    const { url, backends } = await topology();
    const stream = await openStream(url, { method: "POST", headers: { ...MODERN, "x-stream": "1" } });
    defer(() => stream.close());
    // The backend has not ended the answer yet: this first chunk came through on its own.
    expect(stream.first).toMatch(/^data: first from [ab]/);
    for (const backend of backends) backend.releaseStreams();
    expect(await stream.rest).toMatch(/data: first from [ab]\n\ndata: last from [ab]\n\n$/);
  });

  test("sends new requests to the living replica when one is down; its 2025 clients get 404 and initialize again", async () => {
    const { url, backends } = await topology();
    const [a] = backends as [SessionBackend];
    // A session on each replica, from clients whose address hashes there.
    const sessions = new Map<string, { from: string; sessionId: string }>();
    for (const from of CLIENTS) {
      const init = await send(url, { from, body: '{"method":"initialize"}' });
      sessions.set(backendOf(init), { from, sessionId: init.headers["mcp-session-id"] as string });
      if (sessions.size === 2) break;
    }
    await a.stop();
    const after = [];
    for (let i = 0; i < 10; i++) after.push(await send(url, { headers: MODERN, body: "{}" }));
    expect(after.map((answer) => `${answer.status} ${backendOf(answer)}`)).toEqual(Array(10).fill("200 b"));

    const orphan = sessions.get("a");
    expect(orphan).toBeDefined();
    const { from, sessionId } = orphan!;
    const lost = await send(url, { from, headers: { "mcp-session-id": sessionId }, body: "{}" });
    expect({ status: lost.status, backend: backendOf(lost) }).toEqual({ status: 404, backend: "b" });
    const again = await send(url, { from, body: '{"method":"initialize"}' });
    const renewed = again.headers["mcp-session-id"] as string;
    const next = await send(url, { from, headers: { "mcp-session-id": renewed }, body: "{}" });
    expect({ status: next.status, backend: backendOf(next) }).toEqual({ status: 200, backend: "b" });
    // The session held by the living replica never noticed.
    const kept = sessions.get("b")!;
    const still = await send(url, {
      from: kept.from,
      headers: { "mcp-session-id": kept.sessionId },
      body: "{}",
    });
    expect(still.status).toBe(200);
  });

  test("never passes a POST on to another replica once it reached one that died with it", async () => {
    const { url, backends } = await topology();
    const [a, b] = backends as [SessionBackend, SessionBackend];
    a.crashOnRequest(true);
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) {
      const answer = await send(url, { headers: { ...MODERN, "x-request-id": `call-${i}` }, body: "{}" });
      statuses.push(answer.status);
    }
    // The calls the dying replica read failed (502), and none of them ran on the other one.
    expect(a.received.length).toBeGreaterThan(0);
    expect(statuses.filter((status) => status === 502)).toHaveLength(a.received.length);
    expect(b.received.filter((id) => a.received.includes(id))).toEqual([]);
    expect(b.received.length + a.received.length).toBe(6);
  });
});
