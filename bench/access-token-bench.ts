#!/usr/bin/env bun
/**
 * What the HTTP listener's access tokens cost (`mcpproxy.httpAuth`): the check of one JWT with the
 * issuer's key set cached (RS256 and, after a rotation, ES256), in process, against the
 * authorization server fixture on 127.0.0.1. Bounded: `--count` checks per algorithm (2,000).
 *
 *   bun bench/access-token-bench.ts [--count 2000]
 */
import { join } from "node:path";
import { parseArgs } from "node:util";
import { createAccessTokens } from "../src/auth/resource/access-token.ts";
import { HTTP_AUTH_DEFAULTS } from "../src/config/http-auth-config.ts";

const { values } = parseArgs({ options: { count: { type: "string" } } });
const count = Number(values.count ?? 2000);
const fixture = join(import.meta.dir, "..", "tests", "fixtures", "authorization-server.ts");
const child = Bun.spawn([process.execPath, fixture, "--audience", "bench"], { stdout: "pipe" });
const reader = child.stdout.getReader();
const first = new TextDecoder().decode((await reader.read()).value);
const { port, issuer } = JSON.parse(first) as { port: number; issuer: string };
const base = `http://127.0.0.1:${port}`;
// No cooldown: the ES256 key of the rotation below is fetched for at once.
const tokens = createAccessTokens({
  ...HTTP_AUTH_DEFAULTS,
  jwksCooldownSec: 0,
  issuer,
  audience: "bench",
  access: [],
});

async function mint(): Promise<string> {
  const response = await fetch(`${base}/admin/mint`, {
    method: "POST",
    body: JSON.stringify({ claims: { sub: "bench", scope: "mcp:tools" } }),
  });
  return ((await response.json()) as { token: string }).token;
}

async function measure(label: string) {
  const token = await mint();
  const warm = await tokens.verify(token);
  if (!warm.ok) throw new Error(`${label}: ${warm.description}`);
  const times: number[] = [];
  for (let i = 0; i < count; i++) {
    const started = performance.now();
    await tokens.verify(token);
    times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  const at = (q: number) => times[Math.min(times.length - 1, Math.floor(q * times.length))]!.toFixed(3);
  process.stdout.write(`${label}: ${count} checks, p50 ${at(0.5)} ms, p99 ${at(0.99)} ms\n`);
}

try {
  await measure("RS256");
  await fetch(`${base}/admin/rotate`, { method: "POST" });
  await measure("ES256");
} finally {
  child.kill();
}
